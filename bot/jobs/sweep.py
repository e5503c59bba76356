"""The reminder sweep: due dates, overdue loans and holds ready for pick-up, exactly once.

Exactly once rests on the store: every reminder has a key (`loan:<id>:<due>:<threshold>`,
`loan:<id>:<due>:overdue`, `hold:<id>:ready`); the intent is recorded before a message is sent
and the delivery after it. A key left at "intent" (a crash while sending) is sent again by the
next sweep, so at most the one message in flight repeats, and a "sent" key never does.

Patrons are claimed from the store in batches with a lease (`FOR UPDATE SKIP LOCKED` on
PostgreSQL), so memory stays flat and several processes can sweep one database at once. A
patron whose platform call failed is not finished: the lease runs out and a retry sweep later
the same day picks them up again.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from telegram import Bot, InlineKeyboardMarkup
from telegram.error import BadRequest as TelegramBadRequest
from telegram.error import Forbidden, RetryAfter, TelegramError

from bot.library.deadline import Deadline
from bot.library.errors import LibraryError, NotLoggedIn, TokenRejected
from bot.rules import calendar
from bot.rules.notices import (
    fee_id,
    last_day_keys,
    new_fees,
    order_check_day,
    order_overdue,
    order_shown,
    placed_time,
    queue_moves,
    queue_positions,
    refused_key,
)
from bot.rules.polling import next_check
from bot.rules.reminders import candidates, card_key
from bot.rules.renewals import refusal_for
from bot.rules.urgency import sort_loans
from bot.services.branches import BranchNames
from bot.telegram.ratelimit import SEND_ATTEMPTS
from bot.telegram.ui import (
    login_prompt,
    one_per_row,
    renew_buttons,
    send,
    stored_buttons,
    stored_rows,
)
from bot.texts import pick_language, t
from bot.texts.cards import card_heading, card_name
from bot.texts.formatting import is_zero_amount, shorten, split_messages
from bot.texts.render import (
    TITLE_LIMIT,
    reason_text,
    render_debt,
    render_hold,
    render_loan,
)
from storage.notices import Seen

if TYPE_CHECKING:
    from bot.config.settings import Settings
    from bot.library.client import LibraryClient
    from bot.library.models import BorrowerStatus, Hold, Loan
    from bot.telegram.buttons import Payload
    from storage.store import Account, CardKey, ChatSettings, Refusal, Store

log = logging.getLogger(__name__)

# Seconds the digest may wait for pick-up branch names before showing the ids.
BRANCH_NAMES_BUDGET = 6.0
DEFAULT_LEASE = timedelta(minutes=10)
# Seconds the digest may wait for an ordered work's title before showing its pid.
TITLE_BUDGET = 4.0
# How much of a branch's published opening hours a last-pick-up-day nudge shows.
HOURS_LINES = 10
HOURS_LINE = 120
# Failure kinds after which the patron is left unfinished for a retry sweep.
RETRYABLE = frozenset({"platform", "telegram", "error"})


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
        return (
            f"reminder sweep {self.day.isoformat()}: {self.patrons} patrons, "
            f"{self.messages} messages, {self.reminders} reminders, failures: {failed}, "
            f"{self.duration:.1f} s"
        )


@dataclass(frozen=True)
class _Item:
    """One reminder: its key, the HTML entry, and the loan it is about (for a renew button)."""

    key: str  # as the chat's reminder history keeps it (`rules.reminders.card_key`)
    section: str
    entry: str
    loan: Loan | None = None
    card: int = 1


@dataclass
class _Card:
    """One card's part of a digest: what it has due (keys as `rules.reminders` makes them)."""

    account: Account
    found: list[tuple[str, Any]]
    refusals: dict[str, Refusal] = field(default_factory=dict)
    # Loans due today or overdue, while refused loans are reminded daily (the "refused" notice).
    refusable: list[Loan] = field(default_factory=list)

    def keyed(self) -> list[tuple[str, Any]]:
        return [(card_key(self.account.card, key), thing) for key, thing in self.found]


@dataclass
class _Due:
    """A chat with something to remind, on the way from a fetch worker to delivery: one digest
    for all its cards, a section per card when the chat has several."""

    chat_id: int
    lang: str
    cards: list[_Card]  # those with news (the others are dropped as they turn out to have none)
    several: bool
    items: list[_Item] = field(default_factory=list)
    markup: InlineKeyboardMarkup | None = None
    keys: list[CardKey] = field(default_factory=list)  # every card, settled with the digest

    def __post_init__(self) -> None:
        self.keys = [part.account.key for part in self.cards]


Household = list[tuple["Account", "ChatSettings"]]


class _Sweep:
    """One sweep's shared state; a fresh one per call keeps nothing at module level.

    Fetch workers read `/v3/user` for every card of a chat and hand chats with something due
    to one delivery stage, which takes every chat waiting and records their intents (and their
    buttons) in one transaction per group, then sends the group's digests side by side. Store
    round trips thus come per group, not per patron, and the workers never wait on the store
    or Telegram.
    """

    def __init__(
        self,
        *,
        store: Store,
        library: LibraryClient,
        bot: Bot,
        settings: Settings,
        today: date,
        flush_every: int,
        branches: BranchNames,
    ) -> None:
        self.store = store
        self.library = library
        self.bot = bot
        self.settings = settings
        self.today = today
        self.report = SweepReport(day=today)
        self.flush_every = flush_every
        self.done: list[CardKey] = []  # finished cards not yet written back
        # Pick-up branch names as /holds shows them (the process's cache inside `run`).
        self.branches = branches
        self.plans: dict[CardKey, date] = {}  # their next check (rules.polling), written with them
        # The statuses seen, until their cards finish: the few with a calendar feed keep its
        # entries (worked out then, not for every card).
        self.statuses: dict[CardKey, BorrowerStatus] = {}
        self.seen: dict[CardKey, Seen] = {}  # what the notices saw (storage.notices)

    async def flush(self) -> None:
        """Mark the finished cards swept, in one transaction rather than one each.

        Safe to defer: a card is only listed after its digest was marked sent, so should the
        process die first, the next sweep finds every key "sent" and sends nothing.
        """
        done, self.done = self.done, []
        if done:
            plans = {key: self.plans.pop(key) for key in done if key in self.plans}
            await self.store.finish_sweeps(done, self.today, plans)
            await self._keep_calendars(done)
            seen = {key: self.seen.pop(key) for key in done if key in self.seen}
            if seen:
                await self.store.notices.keep(seen)

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
        if len(self.done) >= self.flush_every:
            await self.flush()

    async def fetch(self, household: Household) -> _Due | None:
        """Every card's status; what is due goes to delivery in one digest for the chat, and
        every card without news is settled here."""
        chat = household[0][1]
        lang = pick_language(chat.language, chat.telegram_language)
        several = chat.cards > 1
        if len(household) == 1:  # most chats: no task per card
            outcomes = [await self._card(household[0][0], chat, lang, several)]
        else:
            outcomes = await asyncio.gather(
                *(self._card(account, chat, lang, several) for account, _ in household)
            )
        parts: list[_Card] = []
        for (account, _), outcome in zip(household, outcomes, strict=True):
            if isinstance(outcome, _Card):
                parts.append(outcome)
            else:
                await self.settle([account.key], outcome)
        if not parts:
            return None
        return _Due(chat.chat_id, lang, parts, several)

    async def _card(
        self, account: Account, chat: ChatSettings, lang: str, several: bool
    ) -> _Card | str | None:
        self.report.patrons += 1
        try:
            return await self._fetch(account, chat, lang, several)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return self._failure(account.chat_id, exc)

    async def _fetch(
        self, account: Account, chat: ChatSettings, lang: str, several: bool
    ) -> _Card | str | None:
        if not chat.reminders_enabled or not chat.active:
            return None
        try:
            status = await self.library.user(account.token)
        except (TokenRejected, NotLoggedIn):
            return await self._reconnect(account, lang, several)
        days = chat.thresholds(self.settings.REMINDER_DAYS)
        self.plans[account.key] = next_check(
            status,
            seen=self.today,
            days=chat.plan_days(self.settings.REMINDER_DAYS),
            min_loan_days=self.settings.POLL_MIN_LOAN_DAYS,
        )
        self.statuses[account.key] = status
        found = candidates(status, self.today, days)
        refusable: list[Loan] = []
        if "refused" in chat.notices:
            refusable = [loan for loan in status.loans if refused_key(loan, self.today)]
        if "pickup" in chat.notices:
            found += last_day_keys(status.orders, self.today)
        found += await self._notices(account, chat, status)
        if not found and not refusable:
            return None
        return _Card(account, found, refusable=refusable)

    def _refused(
        self, loans: list[Loan], found: list[tuple[str, Any]], refusals: dict[str, Refusal]
    ) -> list[tuple[str, Any]]:
        """A loan the library refused to renew is reminded daily from its due day on: its key
        of the day takes the place of its usual one."""
        daily: dict[str, tuple[str, Loan]] = {}
        for loan in sort_loans(loans):
            key = refused_key(loan, self.today)
            if key is not None and refusal_for(loan, refusals) is not None:
                daily[loan.loan_id] = (key, loan)
        if not daily:
            return found
        kept = [
            daily.pop(thing.loan_id)
            if key.startswith("loan:") and thing.loan_id in daily
            else (key, thing)
            for key, thing in found
        ]
        return kept + list(daily.values())

    async def _notices(
        self, account: Account, chat: ChatSettings, status: BorrowerStatus
    ) -> list[tuple[str, Any]]:
        """Queue moves and new fees; what was seen is kept when the card is finished. The
        card's entries are read only when a notice has something to compare."""
        found: list[tuple[str, Any]] = []
        key = account.key
        positions = queue_positions(status.orders) if "queue" in chat.notices else {}
        fees = {fee_id(debt) for debt in status.debt} if "fees" in chat.notices else set()
        compare_fees = bool(fees) and account.fees_known
        orders = account.order_check is not None and account.order_check <= self.today
        if account.order_check is not None and not orders:
            self._plan_by(key, account.order_check)
        if not positions and not compare_fees and not orders:
            if "fees" in chat.notices and not account.fees_known:
                self.seen[key] = Seen(fees=fees, fees_known=True)  # recorded, not told
            return found
        entries = await self.store.notices.seen(*key)
        seen = Seen()
        if orders:
            found += self._orders(key, chat, status, entries, seen)
        if positions:
            last = {
                item.removeprefix("queue:"): int(value)
                for item, value in entries.items()
                if item.startswith("queue:") and value is not None and value.isdigit()
            }
            found += queue_moves(status.orders, last)
            # Written only when it moved: most days nothing does, and every card is swept.
            seen.queue = positions if positions != last else None
        if "fees" in chat.notices:
            if account.fees_known:
                known = [item.removeprefix("fee:") for item in entries if item.startswith("fee:")]
                owed = [debt for debt in status.debt if not is_zero_amount(debt.amount)]
                found += new_fees(owed, known)
                seen.fees = fees if fees != set(known) else None
            else:
                seen.fees, seen.fees_known = fees, True
        if seen != Seen():
            self.seen[key] = seen
        return found

    def _orders(
        self,
        key: CardKey,
        chat: ChatSettings,
        status: BorrowerStatus,
        entries: dict[str, str | None],
        seen: Seen,
    ) -> list[tuple[str, Any]]:
        """Orders placed through the bot: shown ones are let go, those overdue to show are told
        (once: their key) and let go, the rest stay watched with the day of their next check."""
        found: list[tuple[str, Any]] = []
        now, tz = datetime.now(UTC), self.settings.timezone
        watched: dict[str, str] = {}
        check: date | None = None
        for item, value in entries.items():
            if not item.startswith("order:") or value is None:
                continue
            pid, placed = item.removeprefix("order:"), placed_time(value)
            if placed is None or order_shown(pid, status):
                continue
            if order_overdue(placed, self.today, now, tz):
                if "orders" in chat.notices:
                    found.append((f"order:{pid}:{value}", pid))
                continue
            watched[pid] = value
            day = max(order_check_day(placed, tz), self.today + timedelta(days=1))
            check = day if check is None else min(check, day)
        seen.orders, seen.order_check = watched, check
        if check is not None:
            self._plan_by(key, check)
        return found

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

    async def deliver(self, group: list[_Due]) -> None:
        """Intents and buttons for the whole group in two transactions, then the digests."""
        try:
            ready = await self._prepare(group)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            for due in group:
                await self.settle(due.keys, self._failure(due.chat_id, exc))
            return
        waiting = {due.chat_id for due in ready}
        for due in group:
            if due.chat_id not in waiting:
                await self.settle(due.keys, None)  # everything was sent before
        await asyncio.gather(*(self._deliver(due) for due in ready))

    async def _deliver(self, due: _Due) -> None:
        try:
            outcome = await self._send_digest(due)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            outcome = self._failure(due.chat_id, exc)
        await self.settle(due.keys, outcome)

    async def _prepare(self, group: list[_Due]) -> list[_Due]:
        """Record the intents (before any sending) and keep the chats with news."""
        # Refusals for the whole group in one read: they mark loans, and turn a refused loan's
        # reminder into a daily one (the "refused" notice).
        reading = [
            part
            for due in group
            for part in due.cards
            if part.refusable or any(key.startswith("loan:") for key, _ in part.found)
        ]
        if reading:
            refusals = await self.store.refusals_many([part.account.key for part in reading])
            for part in reading:
                part.refusals = refusals.get(part.account.key, {})
                if part.refusable and part.refusals:
                    part.found = self._refused(part.refusable, part.found, part.refusals)
                    if any(key.startswith("loan:") and ":refused:" in key for key, _ in part.found):
                        # Reminded daily while it is due or overdue: the plan checks tomorrow
                        # (it plans nothing after a loan's first overdue day by itself).
                        self._plan_by(part.account.key, self.today + timedelta(days=1))
        states = await self.store.begin_reminders_many(
            {due.chat_id: [key for part in due.cards for key, _ in part.keyed()] for due in group}
        )
        ready: list[_Due] = []
        for due in group:
            before = states.get(due.chat_id, {})
            for part in due.cards:
                card = part.account.card
                part.found = [
                    (key, thing)
                    for key, thing in part.found
                    if before.get(card_key(card, key)) != "sent"
                ]
            due.cards = [part for part in due.cards if part.found]
            if due.cards:
                ready.append(due)
        await asyncio.gather(*(self._render(due) for due in ready))
        # One per loan while few, and "renew all" (`ui.renew_buttons`, as /renew has them),
        # for each card of the digest.
        buttons = [self._buttons(due) for due in ready]
        ids = await self.store.put_callbacks_many(
            [
                (due.chat_id, action, payload)
                for due, specs in zip(ready, buttons, strict=True)
                for action, payload in stored_rows(specs)
            ]
        )
        taken = 0
        for due, specs in zip(ready, buttons, strict=True):
            mine = ids[taken : taken + len(specs)]
            taken += len(specs)
            if specs:
                due.markup = InlineKeyboardMarkup(one_per_row(stored_buttons(specs, mine)))
        return ready

    def _buttons(self, due: _Due) -> list[tuple[str, Payload]]:
        specs: list[tuple[str, Payload]] = []
        for part in due.cards:
            card = part.account.card
            loans = [item.loan for item in due.items if item.loan and item.card == card]
            owner = card_name(part.account.label, card, due.lang) if due.several else None
            specs += renew_buttons(
                loans, due.lang, every=loans, digest=True, card=card, owner=owner
            )
        return specs

    async def _render(self, due: _Due) -> None:
        for part in due.cards:
            await self._render_card(due, part)

    async def _render_card(self, due: _Due, part: _Card) -> None:
        holds = [thing for key, thing in part.found if key.startswith("hold:")]
        branch_names = await self._branch_names(holds)
        card = part.account.card

        def add(key: str, section: str, entry: str, loan: Loan | None = None) -> None:
            due.items.append(_Item(card_key(card, key), section, entry, loan, card))

        for key, thing in part.found:
            if ":lastday:" in key:
                entry = render_hold(thing, self.today, due.lang, branch_names)
                add(key, "lastday", entry + self._hours(thing, due.lang))
                continue
            if key.startswith("hold:"):
                add(key, "ready", render_hold(thing, self.today, due.lang, branch_names))
                continue
            if key.startswith("queue:"):
                entry = t(
                    due.lang,
                    "notices.queue",
                    title=shorten(thing.title, TITLE_LIMIT),
                    position=key.rsplit(":", 1)[1],
                )
                add(key, "queue", entry)
                continue
            if key.startswith("order:"):
                title = await self._title(thing)
                add(key, "orders", t(due.lang, "notices.order", title=title))
                continue
            if key.startswith("fee:"):
                [entry] = render_debt([thing], self.today, due.lang)
                add(key, "fees", entry)
                continue
            refusal = refusal_for(thing, part.refusals)
            reason = reason_text(refusal.reason, due.lang) if refusal is not None else None
            entry = render_loan(thing, self.today, due.lang, reason)
            if ":unreadable:" in key:
                add(key, "unreadable", entry)
                continue
            if ":refused:" in key:  # marked ⛔ by its reason line, as /loans shows it
                overdue = isinstance(thing.due_date, date) and thing.due_date < self.today
                section = "overdue" if overdue else "due"
            else:
                section = "overdue" if key.endswith(":overdue") else "due"
            # A loan the library refused to renew gets no button.
            add(key, section, entry, None if refusal else thing)

    async def _title(self, pid: str) -> str:
        """The ordered work's title (the bot keeps only its pid); the pid when unknown."""
        try:
            async with asyncio.timeout(TITLE_BUDGET):
                works = await self.library.work_public([pid])
        except (LibraryError, TimeoutError):
            return pid
        titles = [work.title for work in works if work.title]
        return shorten(titles[0], TITLE_LIMIT) if titles else pid

    def _hours(self, hold: Hold, lang: str) -> str:
        """The pick-up branch's opening hours as published (free text: which are today's
        cannot be read reliably), and whether it is temporarily closed; "" when unknown."""
        agency = (hold.pick_up_agency or "").strip()
        if not agency:
            return ""
        lines = []
        if self.branches.closed(agency):
            lines.append(t(lang, "notices.closed"))
        hours = self.branches.opening_hours(agency, lang)
        if hours:
            shown = [shorten(line, HOURS_LINE) for line in hours.splitlines() if line.strip()]
            lines.append(t(lang, "notices.hours", hours="\n".join(shown[:HOURS_LINES])))
        return "".join(f"\n{line}" for line in lines)

    async def _branch_names(self, holds: list[Hold]) -> dict[str, str]:
        """Pick-up branch names for ready holds, as /holds finds them (`BranchNames`: by the
        branch's agency, with the anonymous token); best effort, ids are shown otherwise."""
        if not any(h.pick_up_agency for h in holds):
            return {}
        agencies = (h.pick_up_agency for h in holds)
        return await self.branches.lookup(self.library, agencies, Deadline(BRANCH_NAMES_BUDGET))

    async def _send_digest(self, due: _Due) -> str | None:
        entries: list[str] = []
        owners: list[list[str]] = []  # keys per entry, to mark each part as it is delivered
        sections = ("lastday", "overdue", "due", "unreadable", "ready", "orders", "queue", "fees")
        for part in due.cards:
            card = part.account.card
            # A family's digest heads each card's part with its name.
            lead = f"{card_heading(part.account.label, card, due.lang)}\n" if due.several else ""
            for section in sections:
                chosen = [
                    item for item in due.items if item.section == section and item.card == card
                ]
                if not chosen:
                    continue
                heading = t(due.lang, f"reminders.digest.{section}")
                first, *rest = chosen
                entries.append(f"{lead}{heading}\n{first.entry}")
                owners.append([first.key])
                lead = ""
                for item in rest:
                    entries.append(item.entry)
                    owners.append([item.key])
        parts = split_messages(
            entries,
            header=t(due.lang, "reminders.digest.header"),
            footer=t(due.lang, "reminders.digest.footer"),
        )
        left = list(zip(entries, owners, strict=True))
        for index, part_text in enumerate(parts):
            last = index == len(parts) - 1
            if last:
                keys = [key for _, owned in left for key in owned]
            else:
                keys = [key for entry, owned in left if entry in part_text for key in owned]
                left = [(entry, owned) for entry, owned in left if entry not in part_text]
            failure = await self._send(due.chat_id, part_text, due.markup if last else None)
            if failure is not None:
                return failure
            await self.store.mark_sent(due.chat_id, keys)
            self.report.messages += 1
            self.report.reminders += len(keys)
        return None

    async def _reconnect(self, account: Account, lang: str, several: bool) -> str | None:
        """The card's token was refused: say so once with a login button (naming the card in
        a family's chat), then forget the card."""
        chat_id = account.chat_id
        lead = t(lang, "reminders.reconnect")
        if several:
            lead = f"{card_heading(account.label, account.card, lang)}\n{lead}"
        prompt = await login_prompt(
            self.store,
            self.library,
            self.settings,
            chat_id,
            lang,
            lead=lead,
            button="reminders.reconnect.button",
        )
        failure = await self._send(chat_id, prompt.text, prompt.markup)
        if failure in RETRYABLE:
            return failure  # keep the card so the retry sweep tells them
        # Deleted after the message, so a crash in between repeats the message, never skips it.
        await self.store.delete_account(chat_id, account.card)
        await self.store.set_account_ended(chat_id, "rejected")
        if failure is None:
            self.report.messages += 1
        return "token_rejected"

    async def _send(
        self, chat_id: int, text: str, markup: InlineKeyboardMarkup | None
    ) -> str | None:
        """Send one message; None when delivered, else the kind of failure."""
        for _ in range(SEND_ATTEMPTS):
            try:
                await send(self.bot, chat_id, text, buttons=markup)
                return None
            except RetryAfter as exc:
                # PTB's AIORateLimiter already paced us; a bare Bot lands here on a 429.
                await asyncio.sleep(_seconds(exc))
            except Forbidden:
                log.info("reminders: chat %s blocked the bot; marked inactive", chat_id)
                await self.store.set_active(chat_id, False)
                return "blocked"
            except TelegramBadRequest as exc:
                if "chat not found" in exc.message.lower():
                    await self.store.set_active(chat_id, False)
                    return "blocked"
                log.warning("reminders: Telegram refused a message to chat %s: %s", chat_id, exc)
                return "telegram"
            except TelegramError as exc:
                log.warning("reminders: sending to chat %s failed: %s", chat_id, exc)
                return "telegram"
        return "telegram"


def _seconds(exc: RetryAfter) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PTB warns about the int form of `retry_after`
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def default_worker() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


async def sweep(
    *,
    store: Store,
    library: LibraryClient,
    bot: Bot,
    settings: Settings,
    today: date | None = None,
    worker: str | None = None,
    concurrency: int | None = None,
    batch_size: int | None = None,
    lease: timedelta = DEFAULT_LEASE,
    branches: BranchNames | None = None,
) -> SweepReport:
    """One sweep over every patron not yet finished today; never raises for one patron.

    `branches`: the process's branch names (`Services.branches`), else a cache for this sweep.
    """
    started = time.monotonic()
    day = today or datetime.now(settings.timezone).date()
    worker = worker or default_worker()
    workers = concurrency or settings.SWEEP_CONCURRENCY
    batch = batch_size or max(50, workers * 4)
    state = _Sweep(
        store=store,
        library=library,
        bot=bot,
        settings=settings,
        today=day,
        flush_every=batch,
        branches=branches or BranchNames(),
    )
    claimed: asyncio.Queue[Household | None] = asyncio.Queue(maxsize=batch)
    # Fetching waits for delivery (Telegram's pace), so memory stays flat. It waits as a
    # whole: the gate closes at `2 * workers` digests waiting and opens again at `workers`,
    # letting all workers go at once. Their requests then go out together and the answers
    # come back together, one wake-up of the process for many patrons instead of one each.
    due: asyncio.Queue[_Due | None] = asyncio.Queue()
    room = asyncio.Event()
    room.set()

    async def produce() -> None:
        # Batches follow each other in (chat, card) order, so each card is taken at most once
        # by this sweep even if its lease runs out meanwhile (a later sweep retries it). A
        # chat's cards go to one worker together (one digest), so the last chat of a batch
        # waits for the next batch, which may hold more of its cards.
        # Should the producer fail, the task group cancels the workers; no sentinel needed.
        after: CardKey | None = None
        household: Household = []
        while leased := await store.claim_sweep_batch(day, worker, batch, lease, after=after):
            for pair in leased:
                if household and household[0][0].chat_id != pair[0].chat_id:
                    await claimed.put(household)
                    household = []
                household.append(pair)
            after = leased[-1][0].key
        if household:
            await claimed.put(household)
        for _ in range(workers):
            await claimed.put(None)

    async def fetch() -> None:
        while (household := await claimed.get()) is not None:
            await room.wait()
            found = await state.fetch(household)
            if found is not None:
                due.put_nowait(found)
                if due.qsize() >= 2 * workers:
                    room.clear()

    async def fetch_all() -> None:
        async with asyncio.TaskGroup() as fetchers:
            fetchers.create_task(produce())
            for _ in range(workers):
                fetchers.create_task(fetch())
        await due.put(None)

    async def deliver() -> None:
        # Everyone waiting goes in one group, up to `workers` digests in flight at once.
        finished = False
        while not finished:
            group: list[_Due] = []
            item = await due.get()
            while item is not None:
                group.append(item)
                if len(group) >= workers or due.empty():
                    break
                item = due.get_nowait()
            finished = item is None
            if due.qsize() <= workers:
                room.set()
            if group:
                await state.deliver(group)

    async with asyncio.TaskGroup() as group:
        group.create_task(fetch_all())
        group.create_task(deliver())
    await state.flush()
    state.report.duration = time.monotonic() - started
    log.info("%s", state.report.summary())
    return state.report
