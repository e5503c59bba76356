"""The fault matrix: every command, the OAuth callback and the reminder sweep under each fault.

Each case asserts what the patron sees (the polite text in their language, within 10 s) and
that nothing is lost or done twice: orders and renewals at the platform, tokens in the store,
reminders in the chat.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from tests.fixtures.bot import BotFactory, BotHarness
from tests.fixtures.chat import answers, fragment, says, send, tap, wait_answer
from tests.fixtures.patrons import JONAS, KAREN, OLE, PID

LIBRARY_TIMEOUT = 2.0  # a loopback call on a busy machine fits; a slow fault does not
SLOW = 4.0  # beyond the client's time-out

Fault = Callable[[BotHarness, str], None]


def slow(bot: BotHarness, token: str) -> None:
    bot.sandbox.faults.latency["platform"] = SLOW


def down(bot: BotHarness, token: str) -> None:
    bot.sandbox.faults.down.add("platform")


def error_500(bot: BotHarness, token: str) -> None:
    bot.sandbox.faults.error_rate["platform"] = 1.0


def malformed(bot: BotHarness, token: str) -> None:
    bot.sandbox.faults.malformed.add("platform")


def token_refused(bot: BotHarness, token: str) -> None:
    bot.sandbox.expire_all_tokens()


PLATFORM_FAULTS: dict[str, Fault] = {
    "slow": slow,
    "down": down,
    "500": error_500,
    "malformed": malformed,
    "token refused": token_refused,
}
UNAVAILABLE = ("common.unavailable",)


def language_for(*case: str) -> str:
    """Half the cases in Danish, half in English, stable from run to run."""
    return "da" if sum(map(len, case)) % 2 else "en"


@pytest.fixture
async def fast_bot(bot_factory: BotFactory) -> BotHarness:
    """A bot whose library calls give up after half a second."""
    return await bot_factory(LIBRARY_TIMEOUT=LIBRARY_TIMEOUT)


async def connected(bot: BotHarness, chat_id: int, lang: str, patron: str = KAREN) -> str:
    await bot.connect(chat_id, patron, language_code=lang)
    card = await bot.store.cards.get(chat_id)
    assert card is not None
    return card.token


# --- /loans, /holds, /debt, /renew (the list) -----------------------------------------------


@pytest.mark.parametrize("command", ["/loans", "/holds", "/debt", "/renew"])
@pytest.mark.parametrize("fault", list(PLATFORM_FAULTS))
async def test_borrower_commands(fast_bot: BotHarness, command: str, fault: str) -> None:
    bot, chat = fast_bot, 100
    lang = language_for(command, fault)
    token = await connected(bot, chat, lang)
    PLATFORM_FAULTS[fault](bot, token)
    [reply] = await send(bot, chat, command)
    if fault == "token refused":
        assert says(reply, lang, "common.reconnect"), reply.text
        assert reply.buttons or "http" in reply.text  # a way back in
        assert await bot.store.cards.get(chat) is None
    else:
        assert says(reply, lang, *UNAVAILABLE), reply.text
        assert await bot.store.cards.get(chat) is not None  # a failing platform logs nobody out
    bot.sandbox.faults.clear()
    if fault != "token refused":
        [again] = await send(bot, chat, command)
        assert not says(again, lang, *UNAVAILABLE), again.text


# --- /search (public: the anonymous token of the earlier flow) ---------------------------------


@pytest.mark.parametrize("fault", list(PLATFORM_FAULTS))
async def test_search(fast_bot: BotHarness, fault: str) -> None:
    bot, chat, lang = fast_bot, 101, "en"
    bot.add_chat(chat, language_code=lang)
    [first] = await send(bot, chat, "/search kongens fald")  # caches an anonymous token
    assert not says(first, lang, *UNAVAILABLE), first.text
    PLATFORM_FAULTS[fault](bot, "")
    tokens_before = bot.sandbox.calls["auth POST /oauth/token"]
    [reply] = await send(bot, chat, "/search kongens fald")
    if fault == "token refused":
        # A refused anonymous token is renewed once, silently: the patron gets results.
        assert not says(reply, lang, *UNAVAILABLE), reply.text
        assert bot.sandbox.calls["auth POST /oauth/token"] == tokens_before + 1
    else:
        assert says(reply, lang, *UNAVAILABLE), reply.text


@pytest.mark.parametrize("fault", ["slow", "down", "500"])
async def test_search_with_the_earlier_flow_token_host_failing(
    fast_bot: BotHarness, fault: str
) -> None:
    bot, chat, lang = fast_bot, 102, "da"
    bot.add_chat(chat, language_code=lang)
    if fault == "slow":
        bot.sandbox.faults.latency["auth"] = SLOW
    elif fault == "down":
        bot.sandbox.faults.down.add("auth")
    else:
        bot.sandbox.faults.error_rate["auth"] = 1.0
    [reply] = await send(bot, chat, "/search kongens fald")
    assert says(reply, lang, *UNAVAILABLE), reply.text


# --- /order and its confirming button: one order at most, whatever happens ---------------------

ORDER_OUTCOME = {
    "slow": ("borrower.order.maybe",),  # and the second tap is told "already" (below)
    "down": ("borrower.order.system_down",),
    "500": ("borrower.order.not_placed",),
    "malformed": ("borrower.order.maybe",),
    "token refused": ("common.reconnect",),
}


@pytest.mark.parametrize("fault", list(PLATFORM_FAULTS))
async def test_order_confirm_tapped_twice(fast_bot: BotHarness, fault: str) -> None:
    bot, chat = fast_bot, 103
    lang = language_for("order", fault)
    token = await connected(bot, chat, lang, OLE)
    [prompt] = await send(bot, chat, f"/order {PID} DK-710100")
    assert says(prompt, lang, "borrower.order.confirm"), prompt.text
    PLATFORM_FAULTS[fault](bot, token)
    yes = CATALOGUE_YES[lang]
    expected = ORDER_OUTCOME[fault]
    data = prompt.button(yes).callback_data

    taps: list[str] = []

    async def double_tap() -> None:
        # Both taps are queued before the bot has seen either (an impatient patron).
        taps.append(await bot.telegram.tap(chat, prompt.message_id, data))
        taps.append(await bot.telegram.tap(chat, prompt.message_id, data))

    changed = await answers(bot, chat, double_tap, count=len(expected))
    for key in expected:
        assert any(says(message, lang, key) for message in changed), (key, changed)
    if fault == "slow":
        # A chat's updates are handled one at a time (bot.telegram.turns): the second tap
        # comes once the first has its answer, and is told so over the button.
        second = await wait_answer(bot, taps[1], timeout=3 * SLOW)
        assert fragment(lang, "borrower.order.already") in str(second["text"])
    assert bot.sandbox.calls["platform GET /v3/order"] == 1  # one order, never retried
    if fault == "slow":
        await asyncio.sleep(SLOW)  # let the late order land before counting the holds
    assert len(bot.sandbox.patron_data(OLE).orders) <= 1


CATALOGUE_YES = {"da": "Ja, bestil", "en": "Yes, order it"}


# --- the renew button: one renewal per tap --------------------------------------------------

RENEW_OUTCOME = {
    # No answer in time, or none that could be read: it may have been renewed, see /loans.
    "slow": ("borrower.renew.no_answer",),
    "down": ("common.unavailable",),
    # A 500 that names no refusal ("internal server error") says nothing of what was done.
    "500": ("borrower.renew.no_answer",),
    "malformed": ("borrower.renew.no_answer",),
    "token refused": ("common.reconnect",),
}


@pytest.mark.parametrize("fault", list(PLATFORM_FAULTS))
async def test_renew_button(fast_bot: BotHarness, fault: str) -> None:
    bot, chat, lang = fast_bot, 104, "en"
    token = await connected(bot, chat, lang, JONAS)
    [listing] = await send(bot, chat, "/renew")
    loan_button = listing.buttons[1][0]
    PLATFORM_FAULTS[fault](bot, token)
    # A new message says what went wrong; the tapped list's button is relabelled in place.
    replies = await tap(bot, chat, listing, loan_button.text, count=1)
    shown = "\n".join(
        [m.text for m in replies] + [b.text for m in replies for row in m.buttons for b in row]
    )
    assert any(fragment(lang, key) in shown for key in RENEW_OUTCOME[fault]), shown
    assert bot.sandbox.calls["platform GET /v3/renew"] == 1
    # The list stays in the chat; its used button only says so, in a notice.
    bot.sandbox.faults.clear()
    query = await bot.telegram.tap(chat, listing.message_id, loan_button.callback_data)
    notice = await wait_answer(bot, query)
    told = str(notice.get("text"))
    assert any(
        fragment(lang, key) in told for key in ("borrower.renew.already", "common.stale_button")
    ), notice
    assert bot.sandbox.calls["platform GET /v3/renew"] == 1
