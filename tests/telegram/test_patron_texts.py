"""What a patron reads (issue 25): /language with its argument, logging out, lost answers, a
login bringing another person, free text, English and Danish wording, names escaped once."""

from __future__ import annotations

from tests.fixtures.bot import BotHarness

CHAT = 7501


async def test_language_takes_its_argument(bot: BotHarness) -> None:
    bot.add_chat(CHAT)
    done = await bot.send(CHAT, "/language en")
    assert not done.buttons and "now English" in done.text
    assert (await bot.store.chats.chat(CHAT)).language == "en"
    done = await bot.send(CHAT, "/language da")
    assert (await bot.store.chats.chat(CHAT)).language == "da"
    done = await bot.send(CHAT, "/language uk")
    assert (await bot.store.chats.chat(CHAT)).language == "uk"
    # A code the bot does not speak: the picker, and nothing changes.
    picker = await bot.send(CHAT, "/language xx")
    labels = [button.text for row in picker.buttons for button in row]
    assert "English" in labels and "Dansk" in labels
    assert (await bot.store.chats.chat(CHAT)).language == "uk"
