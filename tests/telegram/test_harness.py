"""The harness itself: handler tests run in-process, and `settled` waits for the bot."""

from __future__ import annotations

from tests.fixtures.bot import BotHarness


async def test_settled_returns_only_once_the_bot_has_answered(bot: BotHarness) -> None:
    assert bot.in_process and bot.application is not None
    bot.add_chat(9901, language_code="en")
    await bot.telegram.send_text(9901, "/help")  # only queued for the bot
    await bot.settled(quiet=0)
    [reply] = bot.telegram.sent(9901)
    assert "/loans" in reply.text
    assert bot.telegram.calls["sendMessage"] >= 1
