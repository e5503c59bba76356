"""/reminders as issue 25 asks: one line per notice, the bot's default called the bot's, the
"0 = on the day" note only with a 0, and the time of day the reminders come."""

from __future__ import annotations

from bot.texts import t
from storage.store import NOTICES
from tests.fixtures.bot import BotHarness

CHAT = 2561


async def test_one_line_per_notice_and_the_bots_default(bot: BotHarness) -> None:
    bot.add_chat(CHAT, language_code="en")
    status = await bot.send(CHAT, "/reminders")
    lines = status.text.splitlines()
    assert "3, 1 and 0 days before the due date (0 = on the day)" in status.text
    assert "(the bot's default)" in status.text and "library's default" not in status.text
    heading = lines.index("Notices (✅ on, ⬜ off; tap a button to change):")
    chat = await bot.store.chats.chat(CHAT)
    for offset, name in enumerate(NOTICES, start=1):
        mark = "✅" if name in chat.notices else "⬜"
        assert lines[heading + offset] == (
            f"{mark} {t('en', f'notices.name.{name}')}: {t('en', f'notices.what.{name}')}"
        )
    chosen = await bot.send(CHAT, "/reminders 5 2")
    assert "5 and 2 days before the due date, and when" in chosen.text
    assert "0 = on the day" not in chosen.text and "default" not in chosen.text


async def test_danish_status_names_the_bot(bot: BotHarness) -> None:
    bot.add_chat(CHAT + 1, language_code="da")
    status = await bot.send(CHAT + 1, "/reminders 7 3")
    assert "0 = samme dag" not in status.text
    default = await bot.send(CHAT + 1, "/reminders 3 1 0")
    assert "(0 = samme dag)" in default.text
