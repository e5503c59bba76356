"""The reminder digest: a chat's reminders of the day rendered into sections (one part per
card when the chat has several), what it offers to renew, and its messages.

The sweep (`jobs.sweep`) decides what is due and delivers; this module only words it.
"""

from __future__ import annotations

import asyncio
import html
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING

from bot.actions.outbox import RenewOffer
from bot.library.deadline import Deadline
from bot.library.errors import LibraryError
from bot.library.models import Debt, Hold, Loan
from bot.rules.notices import queue_position
from bot.rules.reminders import Kind, Reminder, card_key
from bot.rules.renewals import refusal_for
from bot.texts import t
from bot.texts.cards import card_heading, card_name
from bot.texts.formatting import format_date, shorten, split_messages
from bot.texts.render import (
    TITLE_LIMIT,
    reason_text,
    render_debt,
    render_hold,
    render_loan,
)

if TYPE_CHECKING:
    from bot.library.client import LibraryClient
    from bot.services.branches import BranchNames
    from storage.store import Card, CardKey, Refusal

# Seconds the digest may wait for pick-up branch names before showing the ids.
BRANCH_NAMES_BUDGET = 6.0
# Seconds the digest may wait for an ordered work's title before showing its pid.
TITLE_BUDGET = 4.0
# How much of a branch's published opening hours a last-pick-up-day nudge shows.
HOURS_LINES = 10
HOURS_LINE = 120
# The digest's sections, in the order it shows them.
SECTIONS = (
    Kind.LASTDAY,
    Kind.OVERDUE,
    Kind.DUE,
    Kind.UNREADABLE,
    Kind.READY,
    Kind.ORDER,
    Kind.QUEUE,
    Kind.FEE,
)


@dataclass(frozen=True)
class Entry:
    """One rendered reminder: its key, its section, the HTML entry, and the loan it is about
    (for a renew button)."""

    key: str  # as the chat's reminder history keeps it (`rules.reminders.card_key`)
    section: Kind
    text: str
    loan: Loan | None = None
    number: int = 1  # the card's


@dataclass
class CardDue:
    """One card's part of a digest: the reminders it has due today."""

    card: Card
    found: list[Reminder]
    refusals: dict[str, Refusal] = field(default_factory=dict)
    # Loans due today or overdue, while refused loans are reminded daily (the "refused" notice).
    refusable: list[Loan] = field(default_factory=list)

    def keyed(self) -> list[str]:
        """The keys as the chat's reminder history keeps them."""
        return [card_key(self.card.number, reminder.key) for reminder in self.found]


@dataclass
class Due:
    """A chat with something to remind: one digest for all its cards, a section per card when
    the chat has several."""

    chat_id: int
    lang: str
    cards: list[CardDue]  # those with news (the others are dropped as they turn out to have none)
    several: bool
    entries: list[Entry] = field(default_factory=list)
    keyboard: object = None  # the face's, for the offers (`jobs.delivery.Deliverer.keyboards`)
    keys: list[CardKey] = field(default_factory=list)  # every card, settled with the digest
    rank: int | None = None  # its claim's urgency (`storage.sweeps.urgency`); None: none

    def __post_init__(self) -> None:
        self.keys = [part.card.key for part in self.cards]


class Digests:
    """Renders digests: entries with the names the library knows (branches, titles), within a
    budget, and the ids where a name does not come in time."""

    def __init__(self, library: LibraryClient, branches: BranchNames, today: date) -> None:
        self.library = library
        self.branches = branches
        self.today = today

    async def render(self, due: Due) -> None:
        for part in due.cards:
            await self._render_card(due, part)

    async def _render_card(self, due: Due, part: CardDue) -> None:
        holds = [
            r.thing
            for r in part.found
            if r.kind in (Kind.READY, Kind.LASTDAY) and isinstance(r.thing, Hold)
        ]
        branch_names = await self._branch_names(holds)
        number = part.card.number
        lang = due.lang

        def add(key: str, section: Kind, text: str, loan: Loan | None = None) -> None:
            due.entries.append(Entry(card_key(number, key), section, text, loan, number))

        for reminder in part.found:
            key, thing = reminder.key, reminder.thing
            match reminder.kind:
                case Kind.LASTDAY:
                    assert isinstance(thing, Hold)
                    text = render_hold(thing, self.today, lang, branch_names)
                    add(key, Kind.LASTDAY, text + await self._hours(thing, lang))
                case Kind.READY:
                    assert isinstance(thing, Hold)
                    add(key, Kind.READY, render_hold(thing, self.today, lang, branch_names))
                case Kind.QUEUE:
                    assert isinstance(thing, Hold)
                    text = t(
                        lang,
                        "notices.queue",
                        title=shorten(thing.title, TITLE_LIMIT),
                        position=str(queue_position(thing)),
                    )
                    add(key, Kind.QUEUE, text)
                case Kind.ORDER:
                    assert isinstance(thing, str)
                    add(key, Kind.ORDER, t(lang, "notices.order", title=await self._title(thing)))
                case Kind.FEE:
                    assert isinstance(thing, Debt)
                    [text] = render_debt([thing], self.today, lang)
                    add(key, Kind.FEE, text)
                case Kind.DUE | Kind.OVERDUE | Kind.UNREADABLE | Kind.REFUSED:
                    assert isinstance(thing, Loan)
                    add(*self._loan(reminder.kind, key, thing, part.refusals, lang))

    def _loan(
        self, kind: Kind, key: str, loan: Loan, refusals: dict[str, Refusal], lang: str
    ) -> tuple[str, Kind, str, Loan | None]:
        refusal = refusal_for(loan, refusals)
        reason = reason_text(refusal.reason, lang) if refusal is not None else None
        text = render_loan(loan, self.today, lang, reason)
        if kind == Kind.UNREADABLE:
            return key, kind, text, None
        if kind == Kind.REFUSED:  # marked ⛔ by its reason line, as /loans shows it
            overdue = isinstance(loan.due_date, date) and loan.due_date < self.today
            kind = Kind.OVERDUE if overdue else Kind.DUE
        # A loan the library refused to renew gets no button.
        return key, kind, text, None if refusal else loan

    def offers(self, due: Due) -> list[RenewOffer]:
        """Renewing each loan with a button (while few) and all of them, for each card of the
        digest that has any, as /renew offers them."""
        offers: list[RenewOffer] = []
        for part in due.cards:
            number = part.card.number
            loans = [entry.loan for entry in due.entries if entry.loan and entry.number == number]
            if not loans:
                continue
            owner = card_name(part.card, due.lang) if due.several else None
            offers.append(RenewOffer(tuple(loans), number, part.card.card_id, owner))
        return offers

    @staticmethod
    def messages(due: Due) -> list[tuple[str, list[str]]]:
        """The digest's messages, each with the keys of the entries it delivers (the last one
        takes whatever is left, so every key is marked)."""
        texts: list[str] = []
        owners: list[list[str]] = []  # keys per entry, to mark each part as it is delivered
        for part in due.cards:
            number = part.card.number
            # A family's digest heads each card's part with its name.
            lead = f"{card_heading(part.card, due.lang)}\n" if due.several else ""
            for section in SECTIONS:
                chosen = [e for e in due.entries if e.section == section and e.number == number]
                if not chosen:
                    continue
                heading = t(due.lang, f"reminders.digest.{section.value}")
                first, *rest = chosen
                texts.append(f"{lead}{heading}\n{first.text}")
                owners.append([first.key])
                lead = ""
                for entry in rest:
                    texts.append(entry.text)
                    owners.append([entry.key])
        parts = split_messages(
            texts,
            header=t(due.lang, "reminders.digest.header"),
            footer=t(due.lang, "reminders.digest.footer"),
        )
        left = list(zip(texts, owners, strict=True))
        messages: list[tuple[str, list[str]]] = []
        for index, part_text in enumerate(parts):
            if index == len(parts) - 1:
                keys = [key for _, owned in left for key in owned]
            else:
                keys = [key for text, owned in left if text in part_text for key in owned]
                left = [(text, owned) for text, owned in left if text not in part_text]
            messages.append((part_text, keys))
        return messages

    async def _title(self, pid: str) -> str:
        """The ordered work's title (the bot keeps only its pid); the pid when unknown."""
        try:
            async with asyncio.timeout(TITLE_BUDGET):
                works = await self.library.work_public([pid])
        except (LibraryError, TimeoutError):
            return pid
        titles = [work.title for work in works if work.title]
        return shorten(titles[0], TITLE_LIMIT) if titles else pid

    async def _hours(self, hold: Hold, lang: str) -> str:
        """The pick-up branch's opening hours on the last pick-up day, from the library's dated
        hours (`/v3/library`); where those do not say, the weekly hours as published (free
        text); and whether it is temporarily closed. "" when nothing is known."""
        agency = (hold.pick_up_agency or "").strip()
        if not agency:
            return ""
        lines = []
        if self.branches.closed(agency):
            lines.append(t(lang, "notices.closed"))
        day = hold.pick_up_expiry_date
        dated = (
            await self.branches.hours_on(self.library, agency, day, Deadline(BRANCH_NAMES_BUDGET))
            if isinstance(day, date)
            else None
        )
        if dated and isinstance(day, date):
            spans = ", ".join(f"{d.start_time}–{d.end_time}" for d in dated)
            notes = [shorten(d.notice, HOURS_LINE) for d in dated if d.notice]
            when = format_date(day, lang, today=self.today)
            lines.append(t(lang, "notices.hours_on", day=when, hours=spans))
            lines.extend(html.escape(note, quote=False) for note in notes)
            return "".join(f"\n{line}" for line in lines)
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
