"""/events, /news and /recommend when their own platform call fails (after /v3/user answered):
the polite text in the patron's language within 10 s, the account kept unless the token was
refused, and a malformed, dropped or slow answer never shown as "nothing on"."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.fixtures.bot import BotFactory, BotHarness
from tests.fixtures.chat import says, send
from tests.fixtures.patrons import KAREN

LIBRARY_TIMEOUT = 2.0  # a loopback call on a busy machine fits; a slow fault does not
COMMANDS = {"/events": "/v3/events", "/news": "/v3/news", "/recommend": "/v3/recommend"}
Fault = Callable[[BotHarness, str], None]


def error_500(bot: BotHarness, path: str) -> None:
    bot.sandbox.faults.fail_next[path] = [500, 500]


def dropped(bot: BotHarness, path: str) -> None:
    bot.sandbox.faults.drop_next.extend([path, path])  # the read and its one retry


def token_refused(bot: BotHarness, path: str) -> None:
    bot.sandbox.faults.fail_next[path] = [401]


def slow(bot: BotHarness, path: str) -> None:
    bot.sandbox.faults.latency["platform"] = 4.0  # /v3/user too: beyond the time-out


FAULTS: dict[str, Fault] = {
    "500": error_500,
    "dropped": dropped,
    "token refused": token_refused,
    "slow": slow,
}


@pytest.fixture
async def fast_bot(bot_factory: BotFactory) -> BotHarness:
    return await bot_factory(LIBRARY_TIMEOUT=LIBRARY_TIMEOUT)


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("fault", list(FAULTS))
async def test_whatson_commands_under_faults(
    fast_bot: BotHarness, command: str, fault: str
) -> None:
    bot, chat = fast_bot, 140
    lang = "da" if len(command + fault) % 2 else "en"
    await bot.connect(chat, KAREN, language_code=lang)
    FAULTS[fault](bot, COMMANDS[command])
    [reply] = await send(bot, chat, command)
    if fault == "token refused":
        assert says(reply, lang, "common.reconnect"), reply.text
        assert await bot.store.cards.get(chat) is None
        return
    assert says(reply, lang, "common.unavailable"), reply.text
    assert await bot.store.cards.get(chat) is not None
    bot.sandbox.faults.clear()
    [again] = await send(bot, chat, command)
    assert not says(again, lang, "common.unavailable"), again.text


async def test_recommend_when_the_titles_cannot_be_read(fast_bot: BotHarness) -> None:
    bot, chat = fast_bot, 141
    await bot.connect(chat, KAREN, language_code="en")
    bot.sandbox.faults.fail_next["/v3/work"] = [500, 500]
    [reply] = await send(bot, chat, "/recommend")
    assert says(reply, "en", "common.unavailable"), reply.text
    assert reply.buttons == []
