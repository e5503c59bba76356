"""The reminder sweep: due dates, overdue loans and holds ready for pick-up, exactly once.

Exactly once rests on the store: every reminder has a key (`loan:<id>:<due>:<threshold>`,
`loan:<id>:<due>:overdue`, `hold:<id>:ready`); the intent is recorded before a message is sent
and the delivery after it. A key left at "intent" (a crash while sending) is sent again by the
next sweep, so at most the one message in flight repeats, and a "sent" key never does.

Patrons are claimed from the store in batches with a lease (`FOR UPDATE SKIP LOCKED` on
PostgreSQL), so memory stays flat and several processes can sweep one database at once. The
most urgent go first (`storage.sweeps.urgency`: a hold ready, a loan overdue, due today, due
tomorrow, the rest, by what each card's last check saw). Leases are short and renewed by a
heartbeat while the sweep works on the cards, so a process that dies leaves its cards to the
others within minutes (`SWEEP_LEASE`). A patron whose platform call failed is not
finished: its card is released to a retry sweep later the same day.

This module is the pipeline: claim, fetch, record, send, settle. What a reminder is (its kind
and key) is `rules.reminders`; what changed since a card was last seen, `jobs.notices`; how a
digest reads, `jobs.digest`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from bot.actions.outbox import Offers, Outcome
from bot.jobs.digest import CardDue, Digests, Due
from bot.jobs.notices import daily_refusals, notices, refusable
from bot.library.errors import LibraryError, NotLoggedIn, TokenRejected
from bot.rules import calendar
from bot.rules.checks import next_check
from bot.rules.notices import last_day_keys, order_shown, plan_days
from bot.rules.reminders import LOAN_KINDS, Kind, Reminder, card_key, due_reminders
from bot.rules.urgency import sweep_marks
from bot.services.branches import BranchNames
from bot.texts import pick_language, t
from bot.texts.cards import lapsed_lead

if TYPE_CHECKING:
    from bot.config.settings import Settings
    from bot.jobs.delivery import Deliverer
    from bot.library.client import LibraryClient
    from bot.library.models import BorrowerStatus, Loan
    from storage.notices import Seen
    from storage.store import Card, CardKey, ChatSettings, Store

log = logging.getLogger(__name__)

# A card's lease (`SWEEP_LEASE`, 45 s by default): renewed every third of it while the sweep
# works on the card, so it runs out only when the sweeper has stopped (died, or hangs that
# long). Another sweep then takes the card over: a running pass rescans every lease, an idle
# process looks as often (`schedule`), so a dead process's cards wait at most about 90 s.
RANKS = 5  # storage.sweeps.urgency: 0 a hold ready ... 4 the rest
# Failure kinds after which the patron is left unfinished for a retry sweep.
RETRYABLE = frozenset({"platform", "telegram", "error"})
# A card's outcome when the library refused its token: the chat's lapsed cards are told in one.
LAPSED = "lapsed"


@dataclass
class SweepReport:
    """What one sweep did; `failures` counts patrons per kind of failure."""

    day: date
    patrons: int = 0
    messages: int = 0
    reminders: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    duration: float = 0.0

    @property
    def needs_retry(self) -> bool:
        return any(self.failures[kind] for kind in RETRYABLE)

    def summary(self) -> str:
        failed = ", ".join(f"{kind} {n}" for kind, n in sorted(self.failures.items())) or "none"
        counts = ", ".join(
            _counted(n, word)
            for n, word in (
                (self.patrons, "patron"),
                (self.messages, "message"),
                (self.reminders, "reminder"),
            )
        )
        return (
            f"reminder sweep {self.day.isoformat()}: {counts}, failures: {failed}, "
            f"{self.duration:.1f} s"
        )


def _counted(n: int, word: str) -> str:
    """`1 message`, `2 messages`: the operator's summary in plain English."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


Household = list[tuple["Card", "ChatSettings"]]


class _Sweep:
    """One sweep's shared state; a fresh one per call keeps nothing at module level.

    Fetch workers read `/v3/user` for every card of a chat and hand chats with something due
    to one delivery stage, which takes every chat waiting and records their intents (and their
    buttons) in one transaction per group, then sends the group's digests side by side. Store
    round trips thus come per group, not per patron, and the workers never wait on the store
    or the face. The next group is prepared while the previous one's digests wait for their
    turn to be sent (`sweep`), so the sends never stop for the store.
    """

    def __init__(
        self,
        *,
        store: Store,
        library: LibraryClient,
        deliverer: Deliverer[Any],
        settings: Settings,
        today: date,
        flush_every: int,
        branches: BranchNames,
        worker: str,
        lease: timedelta,
        retry: timedelta,
    ) -> None:
        self.store = store
        self.library = library
        self.deliverer = deliverer
        self.settings = settings
        self.today = today
        self.report = SweepReport(day=today)
        self.flush_every = flush_every
        self.done: list[CardKey] = []  # finished cards not yet written back
        # Pick-up branch names as /holds shows them (the process's cache inside `run`).
        self.branches = branches
        self.plans: dict[CardKey, date] = {}  # their next check (rules.checks), written with them
        # The statuses seen, until their cards finish: the few with a calendar feed keep its
        # entries (worked out then, not for every card).
        self.statuses: dict[CardKey, BorrowerStatus] = {}
        self.seen: dict[CardKey, Seen] = {}  # what the notices saw (storage.notices)
        self.digests = Digests(library, branches, today)
        self.worker = worker
        self.lease = lease
        self.retry = retry
        # Cards claimed and not yet written back (their leases are renewed), the ones whose
        # lease was found lost (another sweeper has them: not sent here), and the ones left
        # for a retry.
        self.held: set[CardKey] = set()
        self.lost: set[CardKey] = set()
        self.failed: list[CardKey] = []
        self.marks: dict[CardKey, tuple[date | None, bool]] = {}
        # The leases' writes, one at a time: a renewal and a flush's release or finish lock
        # the same cards in the order each statement's plan visits them, and deadlocked
        # (PostgreSQL's retry, `storage.database`, is the last resort, not the rule).
        self.leases = asyncio.Lock()

    async def heartbeat(self, every: float) -> None:
        """Renew the leases of the cards at work, until cancelled."""
        while True:
            await asyncio.sleep(every)
            try:
                async with self.leases:
                    held = list(self.held)
                    kept = await self.store.sweeps.renew(held, self.worker, self.lease)
            except asyncio.CancelledError:
                raise
            except Exception:  # the next beat tries again; the lease has room for it
                log.warning("reminders: could not renew %s leases", len(held), exc_info=True)
                continue
            lost = {key for key in held if key not in kept and key in self.held}
            if lost:
                log.warning(
                    "reminders: %s cards' leases ran out; another sweep has them", len(lost)
                )
                self.lost |= lost
                self.held -= lost

    async def flush(self) -> None:
        """Mark the finished cards swept, in one transaction rather than one each.

        Safe to defer: a card is only listed after its digest was marked sent, so should the
        process die first, the next sweep finds every key "sent" and sends nothing.
        """
        done, self.done = self.done, []
        failed, self.failed = self.failed, []
        if failed:
            for key in failed:
                self.plans.pop(key, None)
                self.statuses.pop(key, None)
                self.seen.pop(key, None)
                self.marks.pop(key, None)
            self.held.difference_update(failed)  # before: a beat meanwhile must not miss them
            async with self.leases:
                await self.store.sweeps.release(failed, self.worker, self.retry)
        if done:
            plans = {key: self.plans.pop(key) for key in done if key in self.plans}
            marks = {key: self.marks.pop(key) for key in done if key in self.marks}
            self.held.difference_update(done)
            async with self.leases:
                await self.store.sweeps.finish_sweeps(done, self.today, plans, marks)
            await self._end_watches(done)
            await self._keep_calendars(done)
            seen = {key: self.seen.pop(key) for key in done if key in self.seen}
            if seen:
                await self.store.notices.keep(seen)

    async def _end_watches(self, done: list[CardKey]) -> None:
        """End the shelf watches of titles the finished cards now borrow or hold: nothing left
        to wait for. One read per batch; a failure leaves them to the next day's sweep."""
        seen = {key: self.statuses[key] for key in done if key in self.statuses}
        if not seen:
            return
        try:
            watches = await self.store.watches.of_chats(sorted({chat for chat, _ in seen}))
            await self.store.watches.end(
                [
                    watch
                    for watch in watches
                    if (status := seen.get((watch.chat_id, watch.number))) is not None
                    and order_shown(watch.pid, status)
                ]
            )
        except Exception:
            log.warning("reminders: could not end borrowed titles' watches", exc_info=True)

    async def _keep_calendars(self, done: list[CardKey]) -> None:
        """The calendar entries of the finished cards whose chat has a feed (most have none)."""
        seen = {key: self.statuses.pop(key) for key in done if key in self.statuses}
        if not seen:
            return
        try:
            feeds = await self.store.calendar.with_feeds(chat_id for chat_id, _ in seen)
            await self.store.calendar.remember(
                {
                    key: calendar.dumps(calendar.entries(status))
                    for key, status in seen.items()
                    if key[0] in feeds
                }
            )
        except Exception:  # the feed keeps its last entries; reminders matter more
            log.warning("reminders: could not keep %s calendar feeds", len(seen), exc_info=True)

    async def settle(self, keys: list[CardKey], kind: str | None) -> None:
        """Count a failure per card; finish the cards unless a retry sweep should try again."""
        for key in keys:
            if kind is not None:
                self.report.failures[kind] += 1
            if kind not in RETRYABLE:
                self.done.append(key)
            else:
                self.failed.append(key)
        if len(self.done) + len(self.failed) >= self.flush_every:
            await self.flush()

    async def fetch(self, household: Household) -> Due | None:
        """Every card's status; what is due goes to delivery in one digest for the chat, and
        every card without news is settled here."""
        chat = household[0][1]
        lang = pick_language(chat.language, chat.telegram_language)
        several = chat.cards > 1
        if len(household) == 1:  # most chats: no task per card
            outcomes = [await self._card(household[0][0], chat, lang, several)]
        else:
            outcomes = await asyncio.gather(
                *(self._card(card, chat, lang, several) for card, _ in household)
            )
        parts: list[CardDue] = []
        pairs = list(zip(household, outcomes, strict=True))
        lapsed = [card for (card, _), outcome in pairs if outcome == LAPSED]
        told = await self._lapsed(lapsed, lang, several) if lapsed else None
        for (card, _), outcome in pairs:
            if isinstance(outcome, CardDue):
                parts.append(outcome)
            elif outcome == LAPSED:
                await self.settle([card.key], told)
            else:
                await self.settle([card.key], outcome)
        if not parts:
            return None
        return Due(chat.chat_id, lang, parts, several)

    async def _card(
        self, card: Card, chat: ChatSettings, lang: str, several: bool
    ) -> CardDue | str | None:
        self.report.patrons += 1
        try:
            return await self._fetch(card, chat, lang, several)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return self._failure(card.chat_id, exc)

    async def _fetch(
        self, card: Card, chat: ChatSettings, lang: str, several: bool
    ) -> CardDue | str | None:
        if not chat.reminders_enabled or not chat.active:
            return None
        try:
            status = await self.library.user(card.token)
        except (TokenRejected, NotLoggedIn):
            return LAPSED  # told with the chat's other cards that lapsed (`_lapsed`)
        days = chat.thresholds(self.settings.REMINDER_DAYS)
        self.plans[card.key] = next_check(
            status,
            seen=self.today,
            days=plan_days(days, chat.notices),
            min_loan_days=self.settings.POLL_MIN_LOAN_DAYS,
        )
        self.statuses[card.key] = status
        self.marks[card.key] = sweep_marks(status)
        found = due_reminders(status, self.today, days)
        loans: list[Loan] = []
        if "refused" in chat.notices:
            loans = refusable(status.loans, self.today)
        if "pickup" in chat.notices:
            found += [
                Reminder(Kind.LASTDAY, key, hold)
                for key, hold in last_day_keys(status.orders, self.today)
            ]
        noticed = await notices(self.store, card, chat, status, self.today, self.settings.timezone)
        found += noticed.found
        if noticed.seen is not None:
            self.seen[card.key] = noticed.seen
        if noticed.check_by is not None:
            self._plan_by(card.key, noticed.check_by)
        if not found and not loans:
            return None
        return CardDue(card, found, refusable=loans)

    def _plan_by(self, key: CardKey, day: date) -> None:
        """The card must be checked on `day` at the latest."""
        if key in self.plans:
            self.plans[key] = min(self.plans[key], day)

    def _failure(self, chat_id: int, exc: Exception) -> str:
        if isinstance(exc, LibraryError):
            log.warning(
                "reminders: platform failed for chat %s: %s (%s)",
                chat_id,
                type(exc).__name__,
                exc.code or exc.status,
            )
            return "platform"
        log.error("reminders: unexpected failure for chat %s", chat_id, exc_info=exc)
        return "error"

    async def prepare(self, group: list[Due]) -> list[Due]:
        """Intents and buttons for the whole group in two transactions; the digests to send
        (the chats with news), each once its intents are recorded."""
        group = self._kept(group)
        try:
            ready = await self._prepare(group)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            for due in group:
                await self.settle(due.keys, self._failure(due.chat_id, exc))
            return []
        waiting = {due.chat_id for due in ready}
        for due in group:
            if due.chat_id not in waiting:
                await self.settle(due.keys, None)  # everything was sent before
        return ready

    def _kept(self, group: list[Due]) -> list[Due]:
        """The digests whose cards this sweep still holds: a card whose lease ran out (this
        process stalled) is the sweep's that took it over, which sends it."""
        if not self.lost:
            return group
        return [due for due in group if not self.lost.intersection(due.keys)]

    async def deliver(self, due: Due) -> None:
        """Send one prepared digest and settle its cards."""
        if not self._kept([due]):
            return  # prepared, then its lease ran out while it waited for its turn
        try:
            outcome = await self._send_digest(due)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            outcome = self._failure(due.chat_id, exc)
        await self.settle(due.keys, outcome)

    async def _prepare(self, group: list[Due]) -> list[Due]:
        """Record the intents (before any sending) and keep the chats with news."""
        # Refusals for the whole group in one read: they mark loans, and turn a refused loan's
        # reminder into a daily one (the "refused" notice).
        reading = [
            part
            for due in group
            for part in due.cards
            if part.refusable or any(reminder.kind in LOAN_KINDS for reminder in part.found)
        ]
        if reading:
            refusals = await self.store.renewal_refusals.refusals_many(
                [part.card.key for part in reading]
            )
            for part in reading:
                part.refusals = refusals.get(part.card.key, {})
                if part.refusable and part.refusals:
                    part.found = daily_refusals(
                        part.refusable, part.found, part.refusals, self.today
                    )
                    if any(reminder.kind == Kind.REFUSED for reminder in part.found):
                        # Reminded daily while it is due or overdue: the plan checks tomorrow
                        # (it plans nothing after a loan's first overdue day by itself).
                        self._plan_by(part.card.key, self.today + timedelta(days=1))
        states = await self.store.reminder_log.begin_reminders_many(
            {due.chat_id: [key for part in due.cards for key in part.keyed()] for due in group}
        )
        ready: list[Due] = []
        for due in group:
            before = states.get(due.chat_id, {})
            for part in due.cards:
                number = part.card.number
                part.found = [
                    reminder
                    for reminder in part.found
                    if before.get(card_key(number, reminder.key)) != "sent"
                ]
            due.cards = [part for part in due.cards if part.found]
            if due.cards:
                ready.append(due)
        await asyncio.gather(*(self.digests.render(due) for due in ready))
        keyboards = await self.deliverer.keyboards(
            [Offers(due.chat_id, due.lang, tuple(self.digests.offers(due))) for due in ready]
        )
        for due, keyboard in zip(ready, keyboards, strict=True):
            due.keyboard = keyboard
        return ready

    async def _send_digest(self, due: Due) -> str | None:
        messages = self.digests.messages(due)
        for index, (text, keys) in enumerate(messages):
            last = index == len(messages) - 1
            failure = await self._send(
                due.chat_id, text, due.keyboard if last else None, rank=due.rank
            )
            if failure is not None:
                return failure
            await self.store.reminder_log.mark_sent(due.chat_id, keys)
            self.report.messages += 1
            self.report.reminders += len(keys)
        return None

    async def _lapsed(self, cards: list[Card], lang: str, several: bool) -> str:
        """The cards' tokens were refused: say so once, in one message naming them all with a
        login button each (in a chat of one card, that its reminders are paused), then lapse
        them. A lapsed card keeps its name and settings; no sweep claims it until its patron
        logs in again, so this is said once."""
        chat_id = cards[0].chat_id
        if not several:
            lead = t(lang, "reminders.reconnect")
        else:
            lead = lapsed_lead(
                cards, lang, one="reminders.lapsed_one", many="reminders.lapsed_many"
            )
        text, keyboard = await self.deliverer.login_message(cards, lang, lead)
        failure = await self._send(chat_id, text, keyboard)
        if failure in RETRYABLE:
            return failure  # keep the cards so the retry sweep tells them
        # Lapsed after the message, so a crash in between repeats the message, never skips
        # it. Only while it holds the refused token: a login since keeps its fresh card.
        lapsed = [card for card in cards if await self.store.lapse_card(card) is not None]
        if lapsed and len(lapsed) == len(await self.store.cards.of_chat(chat_id, lapsed=True)):
            await self.store.chats.set_card_ended(chat_id, "rejected")
        if failure is None:
            self.report.messages += 1
        return "token_rejected"

    async def _send(
        self, chat_id: int, text: str, keyboard: object, rank: int | None = None
    ) -> str | None:
        """Send one message, waiting out the face's requests to slow down; None when
        delivered, else the kind of failure. `rank`: a digest's urgency, by which the
        processes sharing the budget send the most urgent first."""
        delivery = await self.deliverer.send(chat_id, text, keyboard, patient=True, rank=rank)
        match delivery.outcome:
            case Outcome.SENT:
                return None
            case Outcome.BLOCKED | Outcome.GONE:
                if delivery.outcome is Outcome.BLOCKED:
                    log.info("reminders: chat %s blocked the bot; marked inactive", chat_id)
                await self.store.chats.set_active(chat_id, False)
                return "blocked"
            case Outcome.REFUSED:
                log.warning(
                    "reminders: Telegram refused a message to chat %s: %s", chat_id, delivery.error
                )
            case Outcome.FAILED:
                log.warning("reminders: sending to chat %s failed: %s", chat_id, delivery.error)
        return "telegram"  # and when still throttled after every attempt


def lease_of(settings: Settings) -> timedelta:
    """A sweeping process's hold on a card without renewing it (`SWEEP_LEASE`)."""
    return timedelta(seconds=settings.SWEEP_LEASE)


def default_worker() -> str:
    """This process's name on its leases; random in part, since a restarted container can
    have the host name and process id of the one that died."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"[:200]


# What a pass reads before each batch: (day, this hour, the default hour), as `hours_due`.
Hours = Callable[[], tuple[date, int, int]]


async def sweep(
    *,
    store: Store,
    library: LibraryClient,
    deliverer: Deliverer[Any],
    settings: Settings,
    today: date | None = None,
    worker: str | None = None,
    concurrency: int | None = None,
    batch_size: int | None = None,
    lease: timedelta | None = None,
    retry: timedelta | None = None,
    branches: BranchNames | None = None,
    hour: int | None = None,
    default_hour: int | None = None,
    hours: Hours | None = None,
) -> SweepReport:
    """One sweep over every patron not yet finished today; never raises for one patron.

    `hour`: the hour of the day now, so that only chats whose reminder hour has come are
    swept (the hourly pass of `run`); None sweeps every chat (`remind --once`, tests).
    `default_hour`: the hour of chats that chose none (`REMINDER_TIME`'s by default).
    `hours`: read before each batch instead (the hourly pass): a pass still running when the
    next hour comes becomes that hour's pass, starting again from the most urgent, rather
    than the next pass being skipped; on a new day it stops claiming.
    `lease`: each card's lease, renewed every third of it while the card is at work (default
    `SWEEP_LEASE`, which is also how often a running pass rescans for cards whose lease ran out).
    `retry`: how long a card whose platform call failed waits for a retry (default `lease`).

    `branches`: the process's branch names (`Services.branches`), else a cache for this sweep.
    `deliverer`: the face that sends (`jobs.delivery`); its sends wait behind replies to chats.
    """
    started = time.monotonic()
    day = today or datetime.now(settings.timezone).date()
    worker = worker or default_worker()
    # Rescans follow the operator's lease even when a test or a one-off run holds cards
    # shorter (none at all: rescanning would take its failed cards again at once).
    rescan = lease_of(settings).total_seconds()
    lease = lease_of(settings) if lease is None else lease
    workers = concurrency or settings.SWEEP_CONCURRENCY
    batch = batch_size or max(50, workers * 4)
    state = _Sweep(
        store=store,
        library=library,
        deliverer=deliverer,
        settings=settings,
        today=day,
        flush_every=batch,
        branches=branches or BranchNames(),
        worker=worker,
        lease=lease,
        retry=lease if retry is None else retry,
    )
    fallback = settings.REMINDER_TIME.hour if default_hour is None else default_hour

    def now_hours() -> tuple[date, int | None, int]:
        return hours() if hours is not None else (day, hour, fallback)

    # Each chat with the urgency it was claimed at (`storage.sweeps.urgency`): its digest's rank.
    urgent: asyncio.Queue[tuple[int, Household] | None] = asyncio.Queue(maxsize=batch)
    # The last rank, chats with nothing due by their last check, are most of a pass's cards and
    # seldom give a digest: they are claimed and checked beside the others, while those
    # others' digests wait for Telegram's pace, so that a pass lasts about as long as its
    # sends, not its sends and then its checks. A digest among them joins the others' queue.
    rest: asyncio.Queue[tuple[int, Household] | None] = asyncio.Queue(maxsize=batch)
    # Fetching waits for delivery (Telegram's pace), so memory stays flat. It waits as a
    # whole: the gate closes at `2 * workers` digests waiting and opens again at `workers`,
    # letting all workers go at once. Their requests then go out together and the answers
    # come back together, one wake-up of the process for many patrons instead of one each.
    due: asyncio.Queue[Due | None] = asyncio.Queue()
    room = asyncio.Event()
    room.set()
    calls = asyncio.Semaphore(workers)  # the platform calls at once, both kinds of chats

    async def produce(ranks: range, claimed: asyncio.Queue[tuple[int, Household] | None]) -> None:
        # Rank by rank, the most urgent first; within a rank, batches of whole chats follow
        # each other in chat order, so each card is taken once per rank even if its lease
        # ran out meanwhile. Every `rescan` seconds, and when the hour changes, the ranks
        # start over: cards a dead process held (its leases run out) or chats whose hour has
        # just come are then claimed in their turn.
        # Should the producer fail, the task group cancels the workers; no sentinel needed.
        loop = asyncio.get_running_loop()
        rank, after = ranks.start, None
        _, hour_now, default_now = now_hours()
        rescan_at = loop.time() + rescan
        while rank < ranks.stop:
            today_now, next_hour, next_default = now_hours()
            if today_now != day:
                break  # a new day: its own pass sweeps it
            if (next_hour, next_default) != (hour_now, default_now) or loop.time() >= rescan_at:
                hour_now, default_now = next_hour, next_default
                rank, after = ranks.start, None
                rescan_at = loop.time() + rescan
            leased = await store.sweeps.claim_sweep_batch(
                day,
                worker,
                batch,
                lease,
                after=after,
                rank=rank,
                hour=hour_now,
                default_hour=default_now,
            )
            if not leased:
                rank, after = rank + 1, None
                continue
            state.held.update(card.key for card, _ in leased)
            household: Household = []
            for pair in leased:
                if household and household[0][0].chat_id != pair[0].chat_id:
                    await claimed.put((rank, household))
                    household = []
                household.append(pair)
            await claimed.put((rank, household))
            after = leased[-1][0].chat_id
        for _ in range(workers):
            await claimed.put(None)

    async def fetch(claimed: asyncio.Queue[tuple[int, Household] | None], gated: bool) -> None:
        # `gated`: the urgent ranks' chats, nearly all with a digest, wait for room before
        # their call; the rest's only once they have one.
        while (item := await claimed.get()) is not None:
            if gated:
                await room.wait()
            rank, household = item
            async with calls:
                found = await state.fetch(household)
            if found is not None:
                if not gated:
                    await room.wait()
                found.rank = rank
                due.put_nowait(found)
                if due.qsize() >= 2 * workers:
                    room.clear()

    async def fetch_all() -> None:
        async with asyncio.TaskGroup() as fetchers:
            fetchers.create_task(produce(range(RANKS - 1), urgent))
            fetchers.create_task(produce(range(RANKS - 1, RANKS), rest))
            for _ in range(workers):
                fetchers.create_task(fetch(urgent, gated=True))
                fetchers.create_task(fetch(rest, gated=False))
        await due.put(None)

    async def deliver() -> None:
        # Everyone waiting goes in one group, and up to `workers` digests are sent at once,
        # each taking the place of one sent (not a group waiting for its slowest digest).
        # The next group is prepared while the digests before it wait for their turn to be
        # sent, so this process always has sends waiting for the budget while it has
        # digests: its demand, and with it its share, holds (`runtime.budget`). The digests
        # start in the order they came, the most urgent first.
        sending = asyncio.Semaphore(workers)

        async def send(prepared: Due) -> None:
            try:
                await state.deliver(prepared)
            finally:
                sending.release()

        async with asyncio.TaskGroup() as sends:
            finished = False
            while not finished:
                group: list[Due] = []
                item = await due.get()
                while item is not None:
                    group.append(item)
                    if len(group) >= workers or due.empty():
                        break
                    item = due.get_nowait()
                finished = item is None
                if due.qsize() <= workers:
                    room.set()
                for prepared in await state.prepare(group) if group else []:
                    await sending.acquire()
                    sends.create_task(send(prepared))

    beat = lease.total_seconds() / 3
    heart = asyncio.create_task(state.heartbeat(beat)) if beat > 0 else None
    try:
        async with asyncio.TaskGroup() as group:
            group.create_task(fetch_all())
            group.create_task(deliver())
        await state.flush()
    finally:
        if heart is not None:
            heart.cancel()
            await asyncio.gather(heart, return_exceptions=True)
    state.report.duration = time.monotonic() - started
    log.info("%s", state.report.summary())
    return state.report
