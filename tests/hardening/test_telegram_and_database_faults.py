"""The fault matrix, continued: Telegram answering 429, 403 or late, and the database locked."""

from __future__ import annotations

import asyncio

import pytest

from tests.fixtures.bot import BotHarness
from tests.fixtures.chat import answers, says, send
from tests.fixtures.patrons import KAREN, OLE, PID
from tests.hardening.conftest import database_locked


@pytest.mark.parametrize("command", ["/loans", "/holds", "/debt", "/search kongens fald"])
async def test_command_when_telegram_answers_429(bot: BotHarness, command: str) -> None:
    chat = 400
    await bot.connect(chat, KAREN, language_code="en")
    bot.telegram.failures.fail("sendMessage", 429, retry_after=1)
    replies = await send(bot, chat, command)
    assert len(replies) == 1  # waited as told and sent once
    assert not says(replies[0], "en", "common.unavailable", "common.error")


@pytest.mark.bot_api_over_http  # a late answer over a real socket
async def test_command_when_telegram_answers_late(bot: BotHarness) -> None:
    chat = 401
    await bot.connect(chat, KAREN)
    bot.telegram.failures.hang("sendMessage", 2.0)
    [reply] = await send(bot, chat, "/debt")
    assert "45,50" in reply.text


async def test_blocked_chat_costs_nothing_and_the_bot_carries_on(bot: BotHarness) -> None:
    blocked, other = 402, 403
    await bot.connect(blocked, KAREN)
    await bot.connect(other, KAREN)
    # The patron blocked the bot between typing and the answer.
    bot.telegram.failures.fail(
        "sendMessage", 403, description="Forbidden: bot was blocked by the user"
    )
    await bot.telegram.send_text(blocked, "/loans")
    await asyncio.sleep(0.5)
    [reply] = await send(bot, other, "/holds")  # everyone else is still served
    assert not says(reply, "da", "common.error"), reply.text


async def test_telegram_errors_on_getupdates_do_not_lose_the_message(bot: BotHarness) -> None:
    chat = 404
    bot.add_chat(chat)
    bot.telegram.failures.fail("getUpdates", 502, times=2)
    [reply] = await send(bot, chat, "/help")
    assert "/loans" in reply.text


# --- the database locked by another connection for a second -----------------------------------


async def test_login_while_the_database_is_locked(bot: BotHarness) -> None:
    chat = 410
    bot.add_chat(chat)
    async with database_locked(bot.settings.DATABASE_URL, 1.0):
        replies = await send(bot, chat, "/login")  # writes a login state
    [prompt] = replies
    assert says(prompt, "da", "connect.login_prompt", "connect.login_prompt_link"), prompt.text


async def test_order_while_the_database_is_locked(bot: BotHarness) -> None:
    chat = 411
    await bot.connect(chat, OLE)
    [prompt] = await send(bot, chat, f"/order {PID} DK-710100")
    data = prompt.button("Ja, bestil").callback_data
    async with database_locked(bot.settings.DATABASE_URL, 1.0):

        async def double_tap() -> None:
            await bot.telegram.tap(chat, prompt.message_id, data)
            await bot.telegram.tap(chat, prompt.message_id, data)

        changed = await answers(bot, chat, double_tap)
    assert any(
        says(m, "da", "borrower.order.placed", "borrower.order.placed_no_id") for m in changed
    )
    assert bot.sandbox.calls["platform GET /v3/order"] == 1


async def test_connect_while_the_database_is_locked(bot: BotHarness) -> None:
    chat = 412
    bot.add_chat(chat)
    redirect = await bot.log_in_at_library(await bot.login_url(chat))
    async with database_locked(bot.settings.DATABASE_URL, 1.0):
        page = await bot.follow(redirect)  # consumes the state, stores the pending link
    assert page.status_code == 200
    assert bot.sandbox.calls["oauth POST /oauth/token"] == 1
