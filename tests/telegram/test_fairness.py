"""Fair answers: one chat flooding the bot does not delay the answers to other chats.

The real bot at the default `TELEGRAM_SEND_RATE` against the Bot API stand-in, which enforces
Telegram's 30 messages per second like the real server.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, cast

import pytest
from telegram.error import RetryAfter
from telegram.ext import ExtBot

from bot.config.settings import Settings
from bot.services import Services
from bot.telegram.deliver import TelegramDeliverer
from bot.telegram.ratelimit import (
    BOOK_AHEAD,
    CHAT_BURST,
    CHAT_RATE,
    GROUP_BURST,
    INLINE_SLOTS,
    LATE_TURN,
    SEND_RATE,
    SHARED_AT_ONCE,
    SHARED_TIMEOUT,
    UPDATES_PER_CHAT,
    FairRateLimiter,
    background_sends,
)
from bot.telegram.request import AiohttpRequest
from sandbox.telegram import TelegramStandIn
from storage.store import Store
from tests.fixtures.bot import BotHarness
from tests.fixtures.storage import rows
from tests.fixtures.telegram import TEST_BOT_TOKEN

FLOOD = 150
# The busy chat's answers sent while the other chat waits for its one answer: its turn and
# at most a few more (the busy chat is down to about one a second by then). Behind one global
# pacer and first-come updates it was the rest of the flood (5.2 s measured).
OTHER_CHAT_BOUND = 3
# Inline mode against a slow catalogue: each search takes this long (the answer budget is 9 s),
# so while the other chat's /help is answered none of them has come back yet.
SLOW_CATALOGUE = 6.0
SEARCH = "platform GET /v3/search"


async def test_a_flooding_chat_does_not_delay_another_chats_answer(bot: BotHarness) -> None:
    busy, other = 7201, 7202
    bot.add_chat(busy, language_code="en")
    bot.add_chat(other, language_code="en")
    loop = asyncio.get_running_loop()
    flood_started = loop.time()
    for _ in range(FLOOD):
        await bot.telegram.send_text(busy, "/help")
    await bot.telegram.wait_for(busy, "/loans")  # the flood is being answered

    busy_before = len(bot.telegram.sent(busy))
    reply = await bot.send(other, "/help")
    busy_meanwhile = len(bot.telegram.sent(busy)) - busy_before

    assert "/loans" in reply.text
    # Counted in the busy chat's answers, not in seconds (a busy machine slows both alike):
    # behind first-come updates the other chat would wait for the whole flood.
    assert busy_meanwhile <= OTHER_CHAT_BOUND, f"{busy_meanwhile} busy answers came first"
    # The busy chat waits for itself: its own burst, then about one message per second.
    answered = len(bot.telegram.sent(busy))
    assert answered <= CHAT_BURST + (loop.time() - flood_started) * CHAT_RATE + 1
    assert answered < FLOOD


async def test_one_users_inline_flood_on_a_slow_catalogue_does_not_delay_other_chats(
    bot: BotHarness,
) -> None:
    flooder, other = 7203, 7204
    bot.add_chat(flooder, language_code="en")
    bot.add_chat(other, language_code="en")
    bot.sandbox.faults.latency["platform"] = SLOW_CATALOGUE
    # A keystroke a query, as Telegram sends them (88 a second were seen): 200 of them.
    typed = [f"hobbit {n}" for n in range(199)] + ["hobbit"]
    queries = [await bot.telegram.inline_query(flooder, words) for words in typed]
    await asyncio.sleep(0.5)  # let them in

    reply = await bot.send(other, "/help")

    assert "/loans" in reply.text
    # Counted, not timed: /help came back while every search was still with the catalogue,
    # and the flooder held only its own chat's share (every query took a slot before: 64).
    assert bot.sandbox.calls[SEARCH] <= UPDATES_PER_CHAT
    assert all(bot.telegram.state.inline_queries[q].answer is None for q in queries)
    # Telegram shows only the newest answer: the queries the user typed past are not searched,
    # and the newest is answered once the catalogue is.
    newest = await bot.telegram.inline_answer(queries[-1], timeout=3 * SLOW_CATALOGUE)
    assert [r.title for r in newest.results] == ["The Hobbit"]
    assert bot.sandbox.calls[SEARCH] <= UPDATES_PER_CHAT + 1


async def test_many_users_inline_queries_leave_slots_for_the_chats(bot: BotHarness) -> None:
    users = list(range(7300, 7340))
    other = 7299
    for user in (*users, other):
        bot.add_chat(user, language_code="da")
    bot.sandbox.faults.latency["platform"] = SLOW_CATALOGUE
    for user in users:
        await bot.telegram.inline_query(user, "hobbit")
    # Until the inline share is taken (each search then waits SLOW_CATALOGUE at the platform),
    # however long a busy machine takes to get there.
    async with asyncio.timeout(SLOW_CATALOGUE):
        while bot.sandbox.calls[SEARCH] < INLINE_SLOTS:  # noqa: ASYNC110 - the stand-in's count
            await asyncio.sleep(0.01)

    reply = await bot.send(other, "/help")

    assert "/loans" in reply.text
    # Forty users searching at once hold the inline share of the slots, no more.
    assert bot.sandbox.calls[SEARCH] == INLINE_SLOTS


async def test_turns_keep_the_overall_pace_and_each_chats_limit(telegram: object) -> None:
    from sandbox.telegram import TelegramStandIn

    assert isinstance(telegram, TelegramStandIn)
    telegram.rate_limit = 30.0  # Telegram's overall limit, as a sliding one-second window
    chats = list(range(8001, 8041))
    group = -100555
    for chat in chats:
        telegram.add_chat(chat)
    telegram.add_group(group)
    # A group's burst, then one message per 30 s (20 a minute in production): the test need
    # not race the group's next message.
    limiter = FairRateLimiter(29.5, group_rate=1 / 30)
    bot: ExtBot[int] = ExtBot(
        TEST_BOT_TOKEN,
        base_url=f"{telegram.url}/bot",
        request=AiohttpRequest(connection_pool_size=8),
        rate_limiter=limiter,
    )
    loop = asyncio.get_running_loop()
    async with bot:
        started = loop.time()
        targets = chats + [group] * GROUP_BURST
        sends = [asyncio.create_task(bot.send_message(chat, "hej")) for chat in targets]
        late = [asyncio.create_task(bot.send_message(group, "hej")) for _ in range(2)]
        await asyncio.wait_for(asyncio.gather(*sends), timeout=10)
        elapsed = loop.time() - started
        # 40 chats and a group's burst at 29.5 a second, and no 429 from the stand-in.
        assert (len(sends) - 1) / 29.5 <= elapsed + 0.05
        # The group's next messages wait for its own limit.
        await asyncio.sleep(0.5)
        assert not any(task.done() for task in late)
        assert len(telegram.sent(group)) == GROUP_BURST
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)
    for chat in chats:
        assert len(telegram.sent(chat)) == 1


def _bot(telegram: TelegramStandIn, limiter: FairRateLimiter) -> ExtBot[int]:
    return ExtBot(
        TEST_BOT_TOKEN,
        base_url=f"{telegram.url}/bot",
        request=AiohttpRequest(connection_pool_size=8),
        rate_limiter=limiter,
    )


async def test_a_reply_goes_before_the_sweeps_queued_digests(
    telegram: TelegramStandIn, store: Store
) -> None:
    digests, asking = list(range(8101, 8121)), 8100
    for chat in (*digests, asking):
        telegram.add_chat(chat)
    limiter = FairRateLimiter(5.0)  # slow enough for the digests to queue
    async with _bot(telegram, limiter) as bot:
        # The jobs' deliverer, as the sweep sends its digests (no login here: no library).
        deliverer = TelegramDeliverer(bot, Services(cast(Any, None), store, cast(Any, None)))
        queued = [asyncio.create_task(deliverer.send(chat, "digest")) for chat in digests]
        await asyncio.sleep(0)  # they take their places in line
        assert limiter.waiting == len(digests) - 1 and limiter.urgent_waiting == 0
        await bot.send_message(asking, "reply")
        sent_first = sum(len(telegram.sent(chat)) for chat in digests)
        for task in queued:
            task.cancel()
        await asyncio.gather(*queued, return_exceptions=True)
    # The digest already on its way, and perhaps the next slot's; not the other 18 in line.
    assert sent_first <= 2, sent_first
    assert limiter.take_urgent() == 1


async def test_the_limiter_tells_the_most_urgent_rank_it_holds(telegram: TelegramStandIn) -> None:
    # What the processes share the budget by (`runtime.budget`): the most urgent of the
    # sweep's digests waiting or sent since the last beat; a reply has no rank.
    chats = list(range(8131, 8136))
    for chat in chats:
        telegram.add_chat(chat)
    limiter = FairRateLimiter(2.0)
    async with _bot(telegram, limiter) as bot:
        assert limiter.take_rank() is None
        await bot.send_message(chats[0], "reply")
        assert limiter.take_rank() is None
        with background_sends(3):
            queued = [asyncio.create_task(bot.send_message(chat, "due")) for chat in chats[1:3]]
        with background_sends(1):
            queued.append(asyncio.create_task(bot.send_message(chats[3], "overdue")))
        await asyncio.sleep(0)
        assert limiter.take_rank() == 1
        assert limiter.take_rank() == 1  # still waiting
        for task in queued:
            task.cancel()
        await asyncio.gather(*queued, return_exceptions=True)
        assert limiter.take_rank() is None  # none waits, none was sent since


async def test_a_chat_joins_the_line_beside_a_turn_due_at_once(telegram: TelegramStandIn) -> None:
    # A chat's second message waits for its own limit, and the next turn is due within the
    # millisecond (a pace of a million a second): on uvloop that timer is a plain `Handle`
    # (`call_at` sooner than its millisecond is `call_soon`), and another chat joining the line
    # in the same moment must not ask it for its time. That raised AttributeError and left the
    # line broken for every later send (a million-card sweep, from its first seconds).
    first, other = 8141, 8142
    for chat in (first, other):
        telegram.add_chat(chat)
    limiter = FairRateLimiter(1_000_000, chat_burst=1)
    async with _bot(telegram, limiter) as bot:
        sends = [
            asyncio.create_task(bot.send_message(chat, text))
            for chat, text in ((first, "one"), (first, "two"), (other, "three"))
        ]
        await asyncio.wait_for(asyncio.gather(*sends), timeout=10)
    assert [m.text for m in telegram.sent(first)] == ["one", "two"]
    assert [m.text for m in telegram.sent(other)] == ["three"]


async def test_a_429_pauses_every_process_sharing_the_pace(
    telegram: TelegramStandIn, store: Store
) -> None:
    for chat in (8201, 8202):
        telegram.add_chat(chat)
    throttled, other = FairRateLimiter(29.5), FairRateLimiter(29.5)
    throttled.shared = other.shared = store.pace  # two processes, one database
    telegram.failures.fail("sendMessage", 429, retry_after=3)
    async with _bot(telegram, throttled) as first, _bot(telegram, other) as second:
        retried = asyncio.create_task(first.send_message(8201, "once Telegram lets us"))
        async with asyncio.timeout(5):
            while not await rows(store, "SELECT key FROM send_pace WHERE key = '*'"):  # noqa: ASYNC110
                await asyncio.sleep(0.01)
        # The other process's next message, to another chat, waits out the same pause.
        waiting = asyncio.create_task(second.send_message(8202, "after the pause"))
        await asyncio.sleep(1.0)
        assert not waiting.done() and not retried.done()
        assert telegram.sent(8202) == []
        await asyncio.wait_for(asyncio.gather(retried, waiting), timeout=10)
    assert [m.text for m in telegram.sent(8201)] == ["once Telegram lets us"]
    assert [m.text for m in telegram.sent(8202)] == ["after the pause"]


class _FakePace:
    """A shared pace (`SharedPace`) whose turns `answer` gives, by the lead and the bound
    they are asked with; Telegram never pauses it."""

    async def turn(
        self,
        key: str,
        emission: float,
        span: float,
        every: float | None = None,
        lead: float = 0,
        within: float | None = None,
    ) -> tuple[float, float, bool]:
        return await self.answer(lead, within)

    async def answer(self, lead: float, within: float | None) -> tuple[float, float, bool]:
        raise NotImplementedError

    async def hold(self, key: str | None, seconds: float) -> None:
        pass


class _BusyAtFirst(_FakePace):
    """A shared pace whose first turn is a little ahead, and while the process waits for it,
    it is busy for `busy` seconds (its loop blocked): it wakes that late for the turn."""

    def __init__(self, busy: float) -> None:
        self.busy = busy
        self.turns = 0

    async def answer(self, lead: float, within: float | None) -> tuple[float, float, bool]:
        self.turns += 1
        if self.turns > 1:
            return 0.0, 0.0, True
        if self.busy:
            asyncio.get_running_loop().call_later(0.01, time.sleep, self.busy)
        return 0.05, 0.0, True


async def _sent(*_: Any, **__: Any) -> bool:
    return True


async def test_a_shared_turn_missed_while_busy_is_taken_again() -> None:
    # Sent that late, it would reach Telegram together with the turns after it.
    limiter = FairRateLimiter(29.5)
    limiter.shared = late = _BusyAtFirst(busy=4 * LATE_TURN)
    await limiter.process_request(_sent, (), {}, "sendMessage", {"chat_id": 8401}, None)
    assert late.turns == 2
    limiter.shared = on_time = _BusyAtFirst(busy=0.0)
    await limiter.process_request(_sent, (), {}, "sendMessage", {"chat_id": 8402}, None)
    assert on_time.turns == 1


def test_the_settings_default_pace_is_the_limiters() -> None:
    # `bot.config` stands below `bot.telegram`, so the number is written in both.
    assert Settings.model_fields["TELEGRAM_SEND_RATE"].default == SEND_RATE


async def test_a_429_is_the_chats_own_only_once_it_has_spent_half_its_burst() -> None:
    # Telegram does not say which limit a 429 is for: one reminder to a chat cannot be past
    # the chat's own, so it is the bot's; a chat sent half its burst at once may be.
    scopes: list[str] = []
    limiter = FairRateLimiter(1000.0)
    limiter.on_throttle = lambda scope, _: scopes.append(scope)
    sends = {8404: 1, 8405: CHAT_BURST // 2 + 1}  # the last send to each is refused, once
    left = dict(sends)

    async def send(chat_id: int) -> bool:
        left[chat_id] -= 1
        if left[chat_id] == 0:
            raise RetryAfter(0)
        return True

    for chat_id, count in sends.items():
        for _ in range(count):
            data = {"chat_id": chat_id}
            await limiter.process_request(send, (chat_id,), {}, "sendMessage", data, None)
    assert scopes == ["global", "chat"]


class _SlowAtFirst(_FakePace):
    """A shared pace whose first answer comes `slow` seconds after it was asked (a database
    busy for a moment), and which gives each turn as soon as it may: `lead` from when it was
    asked, as the bot's pace does when idle (`storage.pace`)."""

    def __init__(self, slow: float) -> None:
        self.slow = slow
        self.leads: list[float] = []

    async def answer(self, lead: float, within: float | None) -> tuple[float, float, bool]:
        self.leads.append(lead)
        if len(self.leads) == 1:
            await asyncio.sleep(self.slow)
        return lead, 0.0, True


async def test_a_shared_turn_answered_late_is_taken_again_that_far_ahead() -> None:
    # Its answer came after the turn had passed: sent then, it would be late too. The next
    # is asked for at least that round trip ahead, so that its answer comes before it.
    limiter = FairRateLimiter(29.5)
    limiter.shared = slow = _SlowAtFirst(slow=4 * LATE_TURN)
    await limiter.process_request(_sent, (), {}, "sendMessage", {"chat_id": 8403}, None)
    assert slow.leads[0] == 0.0
    # (The loop's clock may wake a sleeper a hair early.)
    assert len(slow.leads) >= 2 and slow.leads[1] >= 0.95 * slow.slow, slow.leads


class _BookedAhead(_FakePace):
    """A shared pace whose bot's turns are booked a minute ahead: it takes no turn for a send
    that asks `within` less than that, and gives any other turn at once."""

    def __init__(self) -> None:
        self.asked: list[float | None] = []
        self.refused = asyncio.Event()

    async def answer(self, lead: float, within: float | None) -> tuple[float, float, bool]:
        self.asked.append(within)
        if within is not None and within < 60:
            self.refused.set()
            return 60.0, 0.0, False
        return 0.0, 0.0, True


async def test_a_digest_waits_while_the_bots_turns_are_booked_far_ahead_and_a_reply_does_not() -> (
    None
):
    # A reply takes the bot's next free turn: were the digests of every process let book
    # turns a minute ahead, it would wait that minute behind them.
    limiter = FairRateLimiter(SEND_RATE)
    limiter.shared, limiter.shared_rate = (pace := _BookedAhead()), SEND_RATE
    with background_sends(0):
        digest = asyncio.create_task(
            limiter.process_request(_sent, (), {}, "sendMessage", {"chat_id": 8406}, None)
        )
    async with asyncio.timeout(5):
        await pace.refused.wait()
        await limiter.process_request(_sent, (), {}, "sendMessage", {"chat_id": 8407}, None)
    assert not digest.done()
    digest.cancel()
    asked, replied = pace.asked  # the digest asked once, and then waits for room
    assert asked is not None and asked >= BOOK_AHEAD and replied is None


class _SlowForDigests(_FakePace):
    """A shared pace that answers no background send (a database slow for a moment), and any
    other at once."""

    def __init__(self) -> None:
        self.digests_asking = 0
        self.all_asking = asyncio.Event()

    async def answer(self, lead: float, within: float | None) -> tuple[float, float, bool]:
        if within is None:
            return 0.0, 0.0, True
        self.digests_asking += 1
        if self.digests_asking == SHARED_AT_ONCE:
            self.all_asking.set()
        await asyncio.Future()  # until the limiter's timeout
        raise AssertionError("unreachable")


async def test_a_reply_asks_for_its_turn_without_queueing_behind_the_digests_asks() -> None:
    limiter = FairRateLimiter(1000.0)  # the local pace is not what this is about
    limiter.shared, limiter.shared_rate = (pace := _SlowForDigests()), SEND_RATE
    with background_sends(0):
        digests = [
            asyncio.create_task(
                limiter.process_request(_sent, (), {}, "sendMessage", {"chat_id": chat}, None)
            )
            for chat in range(8410, 8410 + 2 * SHARED_AT_ONCE)
        ]
    async with asyncio.timeout(SHARED_TIMEOUT):  # before any digest's ask gives up
        await pace.all_asking.wait()
        await limiter.process_request(_sent, (), {}, "sendMessage", {"chat_id": 8409}, None)
    assert pace.digests_asking == SHARED_AT_ONCE and not any(d.done() for d in digests)
    for digest in digests:
        digest.cancel()
    await asyncio.gather(*digests, return_exceptions=True)


class _Unreachable:
    """A shared pace whose database does not answer."""

    async def turn(self, *_: Any) -> tuple[float, float, bool]:
        raise ConnectionRefusedError("the database is down")

    async def hold(self, key: str | None, seconds: float) -> None:
        raise ConnectionRefusedError("the database is down")


async def test_without_the_database_a_process_sends_by_its_own_limits(
    telegram: TelegramStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot.telegram.ratelimit")
    telegram.add_chat(8301)
    limiter = FairRateLimiter(29.5)
    limiter.shared = _Unreachable()
    async with _bot(telegram, limiter) as bot:
        for n in range(3):
            await bot.send_message(8301, f"m{n}")
    assert [m.text for m in telegram.sent(8301)] == ["m0", "m1", "m2"]
    told = [r for r in caplog.records if "could not take a chat's turn" in r.getMessage()]
    # Once, not per message; the store warns of the outage itself.
    assert len(told) == 1 and told[0].levelname == "INFO"
