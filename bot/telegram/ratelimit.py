"""Sending within Telegram's limits, fairly between chats; and updates processed fairly.

Telegram allows about 30 messages per second over all chats, about one per second in one chat
(short bursts tolerated) and 20 per minute in a group. One chat sending 150 commands must not
delay everyone else's answers: sends are granted round-robin between the chats that wait, each
chat within its own limit, and updates are let in at most a few per chat (or, for inline
queries, per user) at a time. Replies to chats go before background sends (the sweep's digests,
`background_sends`). Several processes of one bot share the chats' limits and Telegram's
pauses through `SharedPace` (`bot.runtime.budget`, on PostgreSQL).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import warnings
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

from telegram import Update
from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter, BaseUpdateProcessor

log = logging.getLogger(__name__)

# Messages a second: Telegram's 30 less room for sends that reach it off their turn (a busy
# loop, a slow request): 31 sends then fall in one second only if one came 91 ms late.
SEND_RATE = 27.5
SEND_ATTEMPTS = 5
# One chat: a burst of this many, then one per second (Telegram: "avoid more than one message
# per second in a single chat; short bursts are allowed").
CHAT_BURST = 20
CHAT_RATE = 1.0
# A group, supergroup or channel: 20 messages per minute, counted by Telegram over any minute.
# A bucket of `GROUP_BURST` refilled at `GROUP_RATE` lets through at most 10 + 9 in any minute,
# under 20 with room for jitter (PTB's AIORateLimiter's 20 and 20 a minute allow 40).
GROUP_BURST = 10
GROUP_RATE = 9 / 60
# Updates of one chat processed at once; the others wait their turn without taking a slot.
UPDATES_PER_CHAT = 4
# Of the slots, what inline queries (over all users) may hold at once: the rest stay free for
# chats while the catalogue is slow.
INLINE_SLOTS = 16
_PRUNE_AT = 4096
# After this long without a 429, the next one is warned about again: one WARNING line per
# bout of throttling, the 429s themselves counted (`Metrics.watch_sends`), not logged each.
THROTTLE_QUIET = 60.0
SCOPES = ("global", "chat", "group")
# How long a send waits for the shared pace (`SharedPace`) before it goes by this process's
# own limits alone: a database that does not answer must not stop the bot from talking.
SHARED_TIMEOUT = 2.0
# Turns taken from the database at once by one process's background sends: a sweep's queue must
# not take every pooled connection from the commands (each turn is one short statement).
SHARED_AT_ONCE = 4
# A shared turn this far past when the process could send on it (its answer came late, or the
# process was busy when it fell due) is given up for a new one: sent late, it would reach
# Telegram together with the sends of the turns after it, past the bot's limit. Under half of
# the 91 ms a second that `SEND_RATE` leaves in Telegram's window, the rest for the request's
# own way there. At most `LATE_RETAKES` times, then it goes.
LATE_TURN = 0.04
LATE_RETAKES = 3
# Each turn is asked for at least the last round trip ahead (decaying by `LEAD_DECAY` a turn,
# at most `MAX_LEAD`), so that its answer comes before it: a database slow for a moment costs
# a retake or two, not a late send each.
MAX_LEAD = 0.25
LEAD_DECAY = 0.9
# How far past the round trip the bot's turns may be booked for background sends: about what a
# reply waits behind the sweep's digests of every process (each turn 36 ms at 27.5 a second),
# with room for a turn booked late by a busy process. Refused more than `REFUSALS` times in a
# row, a background send takes its turn all the same: other processes cannot starve it.
BOOK_AHEAD = 0.2
REFUSALS = 8

Key = int | str
JSONDict = dict[str, Any]
Callback = Callable[..., Coroutine[Any, Any, bool | JSONDict | list[JSONDict]]]
# Told of every 429: its scope (one of `SCOPES`) and the seconds Telegram asked to wait.
ThrottleHook = Callable[[str, float], None]

# Background sends' urgency, 0 the most urgent (the sweep's ranks, `storage.sweeps.urgency`);
# None: a reply to a chat, which goes before any of them.
_BACKGROUND: ContextVar[int | None] = ContextVar("library_bot_background_sends", default=None)
# The rank of background sends that name none: after every ranked digest.
UNRANKED = 9


@contextlib.contextmanager
def background_sends(rank: int = UNRANKED) -> Iterator[None]:
    """Sends made within (and by tasks started within) wait behind replies to chats: for the
    sweep's digests and other scheduled messages, which no one is waiting for this second
    (`telegram.deliver` sends every job's message so). `rank`: how urgent they are (0 the
    most), by which the processes of one bot share the budget (`take_rank`)."""
    token = _BACKGROUND.set(rank)
    try:
        yield
    finally:
        _BACKGROUND.reset(token)


class SharedPace(Protocol):
    """The chats' limits and Telegram's pauses, shared with the bot's other processes."""

    async def turn(
        self,
        key: str,
        emission: float,
        span: float,
        every: float | None = None,
        lead: float = 0.0,
        within: float | None = None,
    ) -> tuple[float, float, bool]:
        """Take `key`'s next turn (a bucket refilled every `emission` seconds, `span`
        seconds deep) and with `every`, the bot's from then on (one every `every` seconds
        over all chats), not before `lead` seconds from now, and with `within`, only if the
        bot's turns are booked no further ahead than that: (seconds until it, or until one
        may be asked for again; seconds the whole bot is paused; whether it was taken)."""
        ...

    async def hold(self, key: str | None, seconds: float) -> None:
        """No send to `key` (None: to anyone, from any process) for `seconds`."""
        ...


def paced_rate_limiter(per_second: float = SEND_RATE) -> FairRateLimiter:
    """The bot's limiter: `per_second` over all chats (0: unpaced, only 429s waited out)."""
    return FairRateLimiter(per_second)


def _retry_seconds(exc: RetryAfter) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PTB warns about the int form of `retry_after`
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


class FairRateLimiter(BaseRateLimiter[int]):
    """PTB's rate limiter interface: even pacing overall, round-robin between chats.

    Every request that names a chat (`chat_id`) takes one slot of the overall pace, one every
    1/`per_second` seconds, so a server counting a sliding one-second window never sees a
    burst. Waiting chats take turns for the slots, so a chat with 150 answers queued delays
    another chat's answer by at most one slot per waiting chat, not by its whole queue. Each
    chat has its own limit too (a GCRA bucket: `CHAT_BURST` at once, then `CHAT_RATE` per
    second; groups `GROUP_BURST` and `GROUP_RATE`): a busy chat waits for itself.

    A 429 pauses the chat it came for, for `retry_after`, and retries (up to `max_retries`);
    429s for two chats at once mean the overall limit, and pause every chat. Telegram does
    not say which limit a 429 is for, so its scope is inferred: "group" or "chat" when the chat
    it came for had spent half its burst, else "global". `on_throttle` hears of each one.

    Replies to chats take their turns before background sends (`background_sends`): a chat
    waiting for an answer is served ahead of the sweep's queue, in its own order.

    With `shared` set (several processes on one database), each send also takes its chat's
    turn there (before its turn here), and any 429 but a group's pauses the whole bot, every
    process, for its `retry_after`: a group's pauses that group everywhere.
    """

    def __init__(
        self,
        per_second: float = SEND_RATE,
        *,
        chat_burst: int = CHAT_BURST,
        chat_rate: float = CHAT_RATE,
        group_burst: int = GROUP_BURST,
        group_rate: float = GROUP_RATE,
        max_retries: int = SEND_ATTEMPTS,
    ) -> None:
        self._interval = 1 / per_second if per_second > 0 else 0.0
        self._chat = (1 / chat_rate, (chat_burst - 1) / chat_rate)
        self._group = (1 / group_rate, (group_burst - 1) / group_rate)
        self._max_retries = max_retries
        self._next = 0.0  # loop time of the next overall slot
        self._tat: dict[Key, float] = {}  # per chat: GCRA's theoretical arrival time
        # Per chat, its waiters in order, each with its rank (None: a reply, not background).
        self._waiting: dict[Key, deque[tuple[asyncio.Future[None], int | None]]] = {}
        self._turns: deque[Key] = deque()  # chats with waiters, in turn order
        self._urgent: dict[Key, int] = {}  # chats with replies waiting: how many, oldest first
        self._ranks: Counter[int] = Counter()  # background sends waiting, by rank
        # The last 429: its chat, until when it paused the chat, and its scope.
        self._throttled: tuple[Key, float, str] | None = None
        # The next turn, a timer callback rather than a task: one wake-up per message, the
        # sender's own, as with a plain limiter. Its time is kept beside it: uvloop's
        # `call_at` answers a time already past with a plain `Handle`, which has no `when()`.
        self._timer: asyncio.Handle | None = None
        self._timer_at = 0.0
        self._per_second = per_second
        self._granted = 0
        self._granted_urgent = 0
        self._granted_rank: int | None = None
        self._quiet_from = -math.inf  # loop time after which a 429 is warned about again
        self._shared_quiet_from = -math.inf  # the same for a shared pace that fails
        self.on_throttle: ThrottleHook | None = None
        self.shared: SharedPace | None = None
        # The bot's messages a second over every process (`TELEGRAM_SEND_RATE`), whose turns
        # are taken in `shared` with each chat's; 0: only the chats' are.
        self.shared_rate = 0.0
        self._shared_slots: asyncio.Semaphore | None = None
        self._lead = 0.0  # the round trips to `shared`, their peak decaying (`MAX_LEAD`)
        self._room_at = -math.inf  # loop time before which no background send asks `shared`

    @property
    def per_second(self) -> float:
        """The send budget in use: messages per second over all chats (0: unpaced)."""
        return self._per_second

    @per_second.setter
    def per_second(self, value: float) -> None:
        """A new budget (this process's share of the bot's, `runtime.budget`); an unpaced
        limiter stays unpaced."""
        if self._interval and value > 0:
            self._per_second = value
            self._interval = 1 / value

    def hold(self, seconds: float) -> None:
        """No send before `seconds` from now (a pause, or room for the others to make)."""
        if self._interval:
            now = asyncio.get_running_loop().time()
            self._next = max(self._next, now + seconds)

    def take_granted(self) -> int:
        """Sends let through since the last call: this process's recent demand."""
        granted, self._granted = self._granted, 0
        return granted

    def take_urgent(self) -> int:
        """Of those, the replies to chats, since the last call (`take_granted` counts them
        too)."""
        granted, self._granted_urgent = self._granted_urgent, 0
        return granted

    @property
    def waiting(self) -> int:
        """Sends waiting for their turn."""
        return sum(len(queue) for queue in self._waiting.values())

    @property
    def urgent_waiting(self) -> int:
        """Replies to chats waiting for their turn."""
        return sum(self._urgent.values())

    def take_rank(self) -> int | None:
        """The most urgent rank (`background_sends`) of the background sends waiting or let
        through since the last call; None when there were none. Sent counts too: between two
        of the sweep's groups nothing may be waiting for a moment."""
        ranks = set(self._ranks)
        if self._granted_rank is not None:
            ranks.add(self._granted_rank)
        self._granted_rank = None
        return min(ranks, default=None)

    async def initialize(self) -> None:
        """Nothing to set up: turns are timed from the first wait."""

    async def shutdown(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def process_request(
        self,
        callback: Callback,
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> bool | JSONDict | list[JSONDict]:
        attempts = (rate_limit_args or self._max_retries) + 1
        key = _chat_key(data.get("chat_id"))
        rank = _BACKGROUND.get()
        for attempt in range(attempts):
            if key is not None and self._interval:
                await self._acquire(key, rank)
                if self.shared is not None:
                    # Last before the call: the bot's turn is the time the send goes.
                    await self._shared_turn(key, rank is not None)
            try:
                return await callback(*args, **kwargs)
            except RetryAfter as exc:
                seconds = _retry_seconds(exc) + 0.1
                if key is not None and self._interval:
                    scope = self._pause(key, seconds)
                else:
                    scope = "global" if key is None else self._scope(key)
                self._throttled_by(scope, seconds, endpoint)
                if self.shared is not None and self._interval:
                    await self._shared_hold(key, seconds)
                if attempt + 1 == attempts:
                    raise
                if key is None or not self._interval:
                    await asyncio.sleep(seconds)
        raise AssertionError("unreachable")

    def _throttled_by(self, scope: str, seconds: float, endpoint: str) -> None:
        now = asyncio.get_running_loop().time()
        if now >= self._quiet_from:
            log.warning(
                "Telegram is throttling the bot (429, %s limit): waiting %.1f s; further 429s "
                "are counted in library_bot_telegram_429_total until none comes for %.0f s",
                scope,
                seconds,
                THROTTLE_QUIET,
            )
        else:
            log.debug("Telegram asked to wait %.1f s (%s, %s limit)", seconds, endpoint, scope)
        self._quiet_from = now + THROTTLE_QUIET
        if self.on_throttle is not None:
            self.on_throttle(scope, seconds)

    # --- the turns shared with other processes --------------------------------------------

    async def _shared_turn(self, key: Key, background: bool) -> None:
        """Wait for the chat's turn and the bot's among every process's sends (the bot's with
        `shared_rate`), and hold this process's sends for a pause any of them met; on no answer
        within `SHARED_TIMEOUT`, go by this process's limits alone. Taken after the turn here,
        last before the call: the bot's turn is when the send goes, the turns here (its share
        of the budget, replies first) only which of its sends asks next.

        A `background` send takes none while the bot's turns are booked more than
        `BOOK_AHEAD` past the round trip (up to `REFUSALS` times), and this process's other
        background sends wait with it: every process's shares may add up past the total for a
        beat, and a turn given up books another, so turns could be booked seconds ahead, and
        a reply, which takes the next free one, would wait behind all of them."""
        assert self.shared is not None
        if self._shared_slots is None:
            self._shared_slots = asyncio.Semaphore(SHARED_AT_ONCE)
        # A reply asks at once: behind the digests' asks, a database slow for a moment would
        # hold it up to `SHARED_TIMEOUT` for every `SHARED_AT_ONCE` of them.
        slots = self._shared_slots if background else contextlib.nullcontext()
        emission, span = self._shared_limits(key)
        every = 1 / self.shared_rate if self.shared_rate > 0 else None
        loop = asyncio.get_running_loop()
        retakes = refusals = 0
        while True:
            within = None
            if background and every is not None and refusals < REFUSALS:
                if self._room_at > loop.time():
                    await asyncio.sleep(self._room_at - loop.time())
                within = self._lead + BOOK_AHEAD
            try:
                async with slots, asyncio.timeout(SHARED_TIMEOUT):
                    asked = loop.time()
                    wait, paused, taken = await self.shared.turn(
                        str(key), emission, span, every, self._lead, within
                    )
            except Exception as exc:
                self._shared_failed("take a chat's turn", exc)
                return
            answered = loop.time()
            self._lead = min(MAX_LEAD, max(answered - asked, self._lead * LEAD_DECAY))
            if paused > 0:
                self.hold(paused)  # every send of this process waits it out, then at the pace
            if not taken:
                refusals += 1
                self._room_at = max(self._room_at, asked + wait)
                continue
            # The turn is a time (the database's now when asked, plus `wait`), not a delay
            # from the answer: the round trip is not added to it.
            turn_at = asked + max(wait, paused)
            if turn_at > answered:
                await asyncio.sleep(turn_at - answered)
            if loop.time() - turn_at <= LATE_TURN or retakes == LATE_RETAKES:
                return
            retakes += 1

    async def _shared_hold(self, key: Key | None, seconds: float) -> None:
        """Tell the other processes of a 429: a group's pauses that group; any other, the bot
        (Telegram does not say which limit it was, and its overall one is the bot's)."""
        assert self.shared is not None
        if key is not None and self._scope(key) == "group":
            target: str | None = str(key)
            seconds += self._shared_limits(key)[1]  # its burst spent: no turn for `seconds`
        else:
            target = None
            self.hold(seconds)
        try:
            async with asyncio.timeout(SHARED_TIMEOUT):
                await self.shared.hold(target, seconds)
        except Exception as exc:
            self._shared_failed("share Telegram's pause", exc)

    def _shared_limits(self, key: Key) -> tuple[float, float]:
        """The chat's bucket between processes: one message of the burst kept back, since
        sends from several processes reach Telegram further apart from their turns than one
        process's do."""
        emission, span = self._limits(key)
        return emission, span - emission

    def _shared_failed(self, what: str, exc: Exception) -> None:
        # INFO, one line a minute: the store warns of the database's outage itself.
        now = asyncio.get_running_loop().time()
        if now >= self._shared_quiet_from:
            log.info(
                "send limits: could not %s with the other processes (%s: the database did "
                "not answer); sending by this process's own limits meanwhile",
                what,
                type(exc).__name__,
            )
        self._shared_quiet_from = now + THROTTLE_QUIET

    # --- the chats' turns -----------------------------------------------------------------

    @staticmethod
    def _scope(key: Key) -> str:
        return "group" if isinstance(key, str) or key < 0 else "chat"

    def _limits(self, key: Key) -> tuple[float, float]:
        return self._group if self._scope(key) == "group" else self._chat

    def _ready_at(self, key: Key) -> float:
        """When the chat may send next, by its own limit."""
        tat = self._tat.get(key)
        return -math.inf if tat is None else tat - self._limits(key)[1]

    def _grant(self, key: Key, now: float, rank: int | None) -> None:
        self._granted += 1
        if rank is None:
            self._granted_urgent += 1
        elif self._granted_rank is None or rank < self._granted_rank:
            self._granted_rank = rank
        self._next = max(self._next, now) + self._interval
        emission = self._limits(key)[0]
        self._tat[key] = max(self._tat.get(key, now), now) + emission
        if len(self._tat) > _PRUNE_AT:
            # A chat whose bucket has drained is as good as new: forget it.
            for stale in [k for k, tat in self._tat.items() if tat <= now]:
                if stale not in self._waiting:
                    del self._tat[stale]

    def _pause(self, key: Key, seconds: float) -> str:
        """Pause the chat (every chat, on 429s for several at once); the 429's scope: the
        chat's or group's own only if it had spent half its burst, else the bot's (a chat sent
        one reminder cannot be past its own limit)."""
        now = asyncio.get_running_loop().time()
        until = now + seconds
        emission, span = self._limits(key)
        last = self._throttled
        if last is not None and last[0] == key and now < last[1] + emission:
            scope = last[2]  # its retry, the chat's bucket spent by the pause: the same limit
        elif self._tat.get(key, now) - now > (span + emission) / 2:
            scope = self._scope(key)
        else:
            scope = "global"
        self._tat[key] = max(self._tat.get(key, now), until + span)
        if last is not None and last[0] != key and last[1] > now:
            log.info("429s for several chats: pausing every chat for %.1f s", seconds)
            self._next = max(self._next, until)
            scope = "global"
        self._throttled = (key, until, scope)
        return scope

    async def _acquire(self, key: Key, rank: int | None = None) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        if not self._turns and now >= self._next and self._ready_at(key) <= now:
            self._grant(key, now, rank)
            return
        waiter: asyncio.Future[None] = loop.create_future()
        queue = self._waiting.get(key)
        if queue is None:
            queue = self._waiting[key] = deque()
            self._turns.append(key)
            # A new chat may be ready before the turn the timer waits for.
            self._schedule(max(now, self._next), sooner=True)
        queue.append((waiter, rank))
        if rank is None:
            self._urgent[key] = self._urgent.get(key, 0) + 1
        else:
            self._ranks[rank] += 1
        try:
            await waiter
        except asyncio.CancelledError:
            if not waiter.done() or waiter.cancelled():
                self._leave(key, waiter)
            raise

    def _leave(self, key: Key, waiter: asyncio.Future[None]) -> None:
        queue = self._waiting.get(key)
        if queue is None:
            return
        for entry in queue:
            if entry[0] is waiter:
                queue.remove(entry)
                self._served(key, entry[1])
                break
        if not queue:
            del self._waiting[key]
            with contextlib.suppress(ValueError):
                self._turns.remove(key)

    def _served(self, key: Key, rank: int | None) -> None:
        """A waiter of `key` left the queue: it no longer counts as waiting."""
        if rank is not None:
            self._ranks[rank] -= 1
            if not self._ranks[rank]:
                del self._ranks[rank]
            return
        left = self._urgent.pop(key) - 1
        if left:
            self._urgent[key] = left

    def _schedule(self, when: float, *, sooner: bool = False) -> None:
        """Run `_turn` at `when`; with `sooner`, only if that is before the pending turn."""
        if self._timer is not None:
            if not sooner or self._timer_at <= when:
                return
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_at(when, self._turn)
        self._timer_at = when

    def _turn(self) -> None:
        """Give the slot to the next waiting chat that its own limit lets send: a chat with a
        reply waiting first, in the order they came, else the next in turn."""
        self._timer = None
        if not self._turns:
            return
        now = asyncio.get_running_loop().time()
        if now < self._next:
            self._schedule(self._next)
            return
        earliest = math.inf
        for key in list(self._urgent):
            ready = self._ready_at(key)
            if ready <= now:
                self._turns.remove(key)
                if self._give(key, now):
                    return
            else:
                earliest = min(earliest, ready)
        for _ in range(len(self._turns)):
            key = self._turns[0]
            ready = self._ready_at(key)
            if ready <= now:
                self._turns.popleft()
                if self._give(key, now):
                    return
                continue  # cancelled while waiting: the slot goes to the next
            self._turns.rotate(-1)
            earliest = min(earliest, ready)
        if self._turns:
            self._schedule(earliest if earliest < math.inf else now)

    def _give(self, key: Key, now: float) -> bool:
        """The slot to the chat's first waiter, the chat to the back of the line if more wait;
        False when that waiter was cancelled meanwhile (the slot is still free)."""
        queue = self._waiting[key]
        waiter, rank = queue.popleft()
        self._served(key, rank)
        if queue:
            self._turns.append(key)
        else:
            del self._waiting[key]
        if waiter.done():
            return False
        self._grant(key, now, rank)
        waiter.set_result(None)
        if self._turns:
            self._schedule(self._next)
        return True


def _chat_key(chat_id: object) -> Key | None:
    if chat_id is None:
        return None
    if isinstance(chat_id, int):
        return chat_id
    text = str(chat_id)
    with contextlib.suppress(ValueError):
        return int(text)
    return text  # "@channelname"


@dataclass
class _Sender:
    """One chat's (or, for an update without a chat, one user's) updates in the processor."""

    gate: asyncio.Semaphore
    users: int = 0
    # The newest inline query's update id: an older one still waiting is not answered.
    newest_inline: int = -1


class FairUpdateProcessor(BaseUpdateProcessor):
    """At most `max_concurrent_updates` updates at once, and at most `per_chat` of one chat.

    PTB's own processor lets updates in first come, first served: a chat that sent 150
    commands holds every slot while its answers wait for that chat's send limit, and another
    chat's command waits behind all of them. Here a chat's extra updates wait for their own
    chat, without taking a slot from anyone else.

    Inline queries have no chat: they wait for their user instead (a private chat's id is its
    user's, so a user's inline queries and private chat share one turn), and take at most
    `inline_slots` of the slots between them, so a slow catalogue answering inline searches
    cannot hold up the chats. Telegram sends an inline query per keystroke and shows only the
    newest answer, so a query still waiting when a newer one of its user comes is dropped.
    """

    def __init__(
        self,
        max_concurrent_updates: int,
        per_chat: int = UPDATES_PER_CHAT,
        inline_slots: int = INLINE_SLOTS,
    ) -> None:
        # PTB's semaphore admits everything; the bounds below do the limiting.
        super().__init__(2**31 - 1)
        self._limit = max_concurrent_updates
        self._per_chat = per_chat
        self._inline_limit = max(1, min(inline_slots, max_concurrent_updates))
        self._slots: asyncio.Semaphore | None = None
        self._inline_slots: asyncio.Semaphore | None = None
        self._senders: dict[int, _Sender] = {}

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to free."""

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        if self._slots is None or self._inline_slots is None:
            self._slots = asyncio.Semaphore(self._limit)
            self._inline_slots = asyncio.Semaphore(self._inline_limit)
        key, inline = _sender_of(update)
        if key is None:
            async with self._slots:
                await coroutine
            return
        sender = self._senders.get(key) or _Sender(asyncio.Semaphore(self._per_chat))
        self._senders[key] = sender
        sender.users += 1
        update_id = update.update_id if isinstance(update, Update) else -1
        if inline:
            sender.newest_inline = max(sender.newest_inline, update_id)
        started = False
        try:
            async with contextlib.AsyncExitStack() as held:
                await held.enter_async_context(sender.gate)
                if inline:
                    if sender.newest_inline > update_id:
                        return  # the user typed on: a newer query is answered instead
                    await held.enter_async_context(self._inline_slots)
                    if sender.newest_inline > update_id:
                        return
                await held.enter_async_context(self._slots)
                started = True
                await coroutine
        finally:
            if not started and isinstance(coroutine, Coroutine):
                coroutine.close()  # dropped, or cancelled while waiting its turn: never awaited
            sender.users -= 1
            if not sender.users:
                del self._senders[key]


def _sender_of(update: object) -> tuple[int | None, bool]:
    """Whose turn an update waits for (its chat, else its user), and whether it is an inline
    query."""
    if not isinstance(update, Update):
        return None, False
    chat = update.effective_chat
    if chat is not None:
        return chat.id, False
    user = update.effective_user
    return (None if user is None else user.id), update.inline_query is not None
