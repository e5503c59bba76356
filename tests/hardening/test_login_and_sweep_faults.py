"""The fault matrix, continued: the OAuth callback and the reminder sweep.

The callback must answer with a polite page in the browser's language, keep no token it did
not finish with, and never spend a state twice. The sweep must leave a patron it could not
serve for the next sweep, and send each reminder once.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable

import pytest

from tests.fixtures.bot import BotFactory, BotHarness
from tests.fixtures.chat import fragment, says
from tests.fixtures.jobs import sweeper
from tests.fixtures.patrons import JONAS

# Short enough to keep the slow faults quick, long enough for a loopback call on a busy machine:
# each test ends with a call that must succeed once the fault is gone.
LIBRARY_TIMEOUT = 2.0
SLOW = 4.0
TOKEN_CALL = "oauth POST /oauth/token"

Fault = Callable[[BotHarness], None]


@pytest.fixture
async def fast_bot(bot_factory: BotFactory) -> BotHarness:
    return await bot_factory(LIBRARY_TIMEOUT=LIBRARY_TIMEOUT)


# --- the OAuth callback: the access service fails during the code exchange ---------------------

ACCESS_FAULTS: dict[str, Fault] = {
    "slow": lambda bot: bot.sandbox.faults.latency.__setitem__("oauth", SLOW),
    "down": lambda bot: bot.sandbox.faults.down.add("oauth"),
    "500": lambda bot: bot.sandbox.faults.error_rate.__setitem__("oauth", 1.0),
    "malformed": lambda bot: bot.sandbox.faults.malformed.add("oauth"),
    "code refused": lambda bot: bot.sandbox.faults.fail_next.__setitem__("/oauth/token", [400]),
    "userinfo refuses the token": lambda bot: bot.sandbox.faults.fail_next.__setitem__(
        "/userinfo", [401]
    ),
    # hejmdal answers userinfo without a `uniqueId` while the national user register is down:
    # the person is not known, so no card is added (a duplicate could never be matched).
    "user register down": lambda bot: bot.sandbox.faults.down.add("culr"),
}
# Faults after the code exchange: the token it gave is revoked, as no card will hold it.
AFTER_EXCHANGE = ("userinfo refuses the token", "user register down")


@pytest.mark.parametrize("lang", ["da", "en"])
@pytest.mark.parametrize("fault", list(ACCESS_FAULTS))
async def test_callback_with_the_access_service_failing(
    fast_bot: BotHarness, fault: str, lang: str
) -> None:
    bot, chat = fast_bot, 200
    bot.add_chat(chat, language_code=lang)
    redirect = await bot.log_in_at_library(await bot.login_url(chat))
    ACCESS_FAULTS[fault](bot)
    started = time.monotonic()
    page = await bot.follow(redirect, **{"Accept-Language": lang})
    assert time.monotonic() - started < 10
    assert page.status_code == 502
    shown = html.unescape(page.text)
    assert fragment(lang, "pages.failed_title") in shown
    assert "start=" not in page.text  # no link code handed out
    assert bot.sandbox.calls[TOKEN_CALL] == 1  # the code exchange is never retried
    assert await bot.store.cards.count() == 0
    revoked = 1 if fault in AFTER_EXCHANGE else 0
    assert bot.sandbox.calls["oauth DELETE /oauth/revoke"] == revoked
    # The state is spent: reloading the page neither exchanges again nor connects.
    bot.sandbox.faults.clear()
    again = await bot.follow(redirect, **{"Accept-Language": lang})
    assert again.status_code == 410
    assert bot.sandbox.calls[TOKEN_CALL] == 1
    # Once the service is back, a fresh /login works.
    await bot.connect(chat, language_code=lang)
    assert await bot.store.cards.count() == 1


# --- the reminder sweep -----------------------------------------------------------------------

PLATFORM_FAULTS: dict[str, Fault] = {
    "slow": lambda bot: bot.sandbox.faults.latency.__setitem__("platform", SLOW),
    "down": lambda bot: bot.sandbox.faults.down.add("platform"),
    "500": lambda bot: bot.sandbox.faults.error_rate.__setitem__("platform", 1.0),
    "malformed": lambda bot: bot.sandbox.faults.malformed.add("platform"),
}


async def connect_quietly(bot: BotHarness, chat_id: int, user_id: str, lang: str) -> str:
    """A connected patron, as `/start <code>` leaves one, without the chat messages."""
    bot.add_chat(chat_id, language_code=lang)
    token = bot.sandbox.issue_token(user_id)
    code = await bot.store.create_pending_link(chat_id, token, None, {"uniqueId": user_id})
    assert await bot.store.complete_link(chat_id, code) is not None
    await bot.store.chats.set_language(chat_id, lang)
    return token


@pytest.mark.parametrize("fault", list(PLATFORM_FAULTS))
async def test_sweep_with_the_platform_failing(fast_bot: BotHarness, fault: str) -> None:
    bot, chat, lang = fast_bot, 300, "da"
    await connect_quietly(bot, chat, JONAS, lang)
    async with sweeper(bot) as sweep:
        PLATFORM_FAULTS[fault](bot)
        report = await sweep()
        assert report.failures["platform"] == 1
        assert bot.telegram.sent(chat) == []  # nothing half-said
        bot.sandbox.faults.clear()
        report = await sweep()  # the retry sweep of the same day
        assert report.failures == {}
        [digest] = bot.telegram.sent(chat)
        assert says(digest, lang, "reminders.digest.header"), digest.text
        await sweep()  # and once more: nothing is sent twice
        assert len(bot.telegram.sent(chat)) == 1
    assert await bot.store.cards.get(chat) is not None


async def test_sweep_with_the_token_refused(fast_bot: BotHarness) -> None:
    bot, chat, lang = fast_bot, 301, "en"
    token = await connect_quietly(bot, chat, JONAS, lang)
    bot.sandbox.expire_token(token)
    async with sweeper(bot) as sweep:
        await sweep()
        [told] = bot.telegram.sent(chat)
        assert says(told, lang, "reminders.reconnect"), told.text
        assert await bot.store.cards.get(chat) is None  # the dead token is not kept
        await sweep()
    assert len(bot.telegram.sent(chat)) == 1


# --- the sweep with Telegram failing ------------------------------------------------------------


async def test_sweep_with_telegram_answering_429(fast_bot: BotHarness) -> None:
    bot, chat = fast_bot, 310
    await connect_quietly(bot, chat, JONAS, "da")
    bot.telegram.failures.fail("sendMessage", 429, retry_after=1)
    async with sweeper(bot) as sweep:
        report = await sweep()
        await sweep()
    assert report.failures == {}
    assert len(bot.telegram.sent(chat)) == 1  # sent once, after waiting as told


async def test_sweep_with_telegram_answering_403(fast_bot: BotHarness) -> None:
    bot, chat = fast_bot, 311
    await connect_quietly(bot, chat, JONAS, "da")
    bot.telegram.block(chat)
    async with sweeper(bot) as sweep:
        report = await sweep()
        assert report.failures["blocked"] == 1
        assert not (await bot.store.chats.chat(chat)).active
        await sweep()
    # One attempt only: a blocked chat is not hammered by retry sweeps.
    assert bot.telegram.calls["sendMessage"] == 1
    assert await bot.store.cards.get(chat) is not None


async def test_sweep_with_telegram_timing_out(fast_bot: BotHarness) -> None:
    """A send that times out may still have been delivered: it is repeated at most once."""
    bot, chat = fast_bot, 312
    await connect_quietly(bot, chat, JONAS, "da")
    bot.telegram.failures.hang("sendMessage", 1.0)
    async with sweeper(bot, read_timeout=0.3) as sweep:
        report = await sweep()
        assert report.failures["telegram"] == 1
        await sweep()
        await sweep()
    assert 1 <= len(bot.telegram.sent(chat)) <= 2
    assert bot.telegram.calls["sendMessage"] == 2
