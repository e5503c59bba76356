"""Bot API servers that differ from Telegram (emulators, local servers), each difference injected
into the stand-in: cosmetic calls refused at start-up, sends accepted with an answer PTB cannot
parse, and `getUpdates` / `setWebhook` failing again and again (which `/health` must show)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from tests.fixtures.bot import BotFactory, BotHarness
from tests.fixtures.chat import answers, says
from tests.runtime.conftest import WEBHOOK_SECRET

CHAT = 7301


async def _health(bot: BotHarness) -> tuple[int, dict[str, Any]]:
    response = await bot.http.get(f"{bot.info.web_url}/health")
    return response.status_code, response.json()


async def _health_becomes(bot: BotHarness, status: int, seconds: float = 10.0) -> dict[str, Any]:
    async with asyncio.timeout(seconds):
        while True:
            code, body = await _health(bot)
            if code == status:
                return body
            await asyncio.sleep(0.05)


async def test_start_up_goes_on_when_set_my_commands_is_refused(
    bot_factory: BotFactory, telegram: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="bot.runtime.runner")
    telegram.failures.fail("setMyCommands", 404, description="Not Found: method not found", times=3)

    bot = await bot_factory()

    assert telegram.failures.pending == []  # all three menus were tried
    assert "setMyCommands (da) failed" in caplog.text
    bot.add_chat(CHAT)
    reply = await bot.send(CHAT, "/help")
    assert "/loans" in reply.text
    assert (await _health(bot))[0] == 200


async def test_a_send_accepted_with_an_unreadable_answer_is_delivered(bot: BotHarness) -> None:
    bot.add_chat(CHAT, language_code="en")
    bot.telegram.failures.garble("sendMessage")

    told = await answers(bot, CHAT, lambda: bot.telegram.send_text(CHAT, "/help"))

    assert bot.telegram.failures.pending == []  # the answer to /help was the garbled one
    [help_text] = told  # and no "something went wrong" after it
    assert "/loans" in help_text.text
    assert not says(help_text, "en", "common.error")


async def test_an_edit_accepted_with_an_unreadable_answer_is_delivered(bot: BotHarness) -> None:
    bot.add_chat(CHAT, language_code="en")
    prompt = await bot.send(CHAT, "/language")
    bot.telegram.failures.garble("editMessageText")

    data = str(prompt.buttons[0][-1].callback_data)

    told = await answers(bot, CHAT, lambda: bot.telegram.tap(CHAT, prompt.message_id, data))

    assert bot.telegram.failures.pending == []
    assert len(told) == 1 and not says(told[0], "en", "common.error"), told


async def test_health_fails_while_get_updates_keeps_failing(bot: BotHarness) -> None:
    bot.add_chat(CHAT)
    assert (await _health(bot))[0] == 200
    bot.telegram.failures.fail("getUpdates", 502, times=1000)
    # The poll in flight returns with this update; every poll after it fails.
    await bot.send(CHAT, "/help")

    body = await _health_becomes(bot, 503)
    assert body["telegram"] == "failing" and body["database"] == "ok"

    bot.telegram.failures.clear()
    await bot.telegram.send_text(CHAT, "/help")  # the next poll returns with it
    body = await _health_becomes(bot, 200)
    assert body["telegram"] == "running"


async def test_one_failed_poll_is_not_failing(bot: BotHarness) -> None:
    bot.add_chat(CHAT)
    bot.telegram.failures.fail("getUpdates", 502)
    await bot.send(CHAT, "/help")
    reply = await bot.send(CHAT, "/help")  # polled again after the one failure
    assert "/loans" in reply.text
    code, body = await _health(bot)
    assert (code, body["telegram"]) == (200, "running")


async def test_webhook_mode_starts_and_reports_failing_until_set_webhook_succeeds(
    bot_factory: BotFactory, telegram: Any
) -> None:
    telegram.failures.fail("setWebhook", 500, times=4)

    bot = await bot_factory(WEBHOOK_SECRET=WEBHOOK_SECRET)

    code, body = await _health(bot)
    assert (code, body["telegram"], body["mode"]) == (503, "failing", "webhook")
    body = await _health_becomes(bot, 200, 30)  # retried after 0.5, 1, 2 and 3 s
    assert body["telegram"] == "running"
    assert telegram.failures.pending == []
