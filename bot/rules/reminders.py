"""Which reminder a loan or hold is due today, as a key the store keeps exactly once.

Keys: `loan:<id>:<due>:<threshold>`, `loan:<id>:<due>:overdue`, `loan:<id>:unreadable:<digest>`
and `hold:<id>:ready`. A chat's card 2 and later prefix theirs with `c<n>:` (`card_key`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from typing import Any

from bot.library.models import BorrowerStatus, Debt, Hold, Loan
from bot.rules.urgency import hold_is_ready, sort_holds, sort_loans


class Kind(StrEnum):
    """What a reminder is about; its value names its section of the digest (a refused loan is
    shown under "due" or "overdue", by its due date)."""

    DUE = "due"
    OVERDUE = "overdue"
    UNREADABLE = "unreadable"
    REFUSED = "refused"
    READY = "ready"
    LASTDAY = "lastday"
    QUEUE = "queue"
    ORDER = "orders"
    FEE = "fees"


LOAN_KINDS = frozenset({Kind.DUE, Kind.OVERDUE, Kind.UNREADABLE, Kind.REFUSED})


@dataclass(frozen=True)
class Reminder:
    """One reminder due today: its kind, its key (as the rules make it, before `card_key`) and
    what it is about: a loan, a hold, a fee, or an ordered work's pid."""

    kind: Kind
    key: str
    thing: Loan | Hold | Debt | str


def loan_key(loan: Loan, today: date, days: Sequence[int]) -> str | None:
    """The key of the reminder this loan is due today, if any (`loan_reminder`)."""
    reminder = loan_reminder(loan, today, days)
    return reminder.key if reminder is not None else None


def loan_reminder(loan: Loan, today: date, days: Sequence[int]) -> Reminder | None:
    """The reminder this loan is due today, if any.

    Only the smallest threshold reached counts, so a patron whose sweep was missed gets one
    reminder, not one per threshold passed; a larger one was either sent before or is moot.
    A due date the bot cannot read is told once (per loan and text): the digest says so
    rather than dropping the loan silently.
    """
    due = loan.due_date
    if isinstance(due, str) and due.strip():
        digest = hashlib.sha256(due.encode()).hexdigest()[:12]
        return Reminder(Kind.UNREADABLE, f"loan:{loan.loan_id}:unreadable:{digest}", loan)
    if not isinstance(due, date):
        return None  # no due date at all: nothing to remind
    left = (due - today).days
    prefix = f"loan:{loan.loan_id}:{due.isoformat()}"
    if left < 0:
        return Reminder(Kind.OVERDUE, f"{prefix}:overdue", loan)
    reached = [day for day in days if left <= day]
    return Reminder(Kind.DUE, f"{prefix}:{min(reached)}", loan) if reached else None


def card_key(number: int, key: str) -> str:
    """A reminder key of card `card` in its chat's history: card 1's keys keep the form they
    had before a chat could hold several cards, so an upgrade sends nothing twice."""
    return key if number == 1 else f"c{number}:{key}"


def hold_key(hold: Hold) -> str | None:
    return f"hold:{hold.order_id}:ready" if hold_is_ready(hold) else None


def due_reminders(status: BorrowerStatus, today: date, days: Sequence[int]) -> list[Reminder]:
    """Every loan and hold reminder that would be sent today, before history."""
    found: list[Reminder] = []
    for loan in sort_loans(status.loans):
        reminder = loan_reminder(loan, today, days)
        if reminder is not None:
            found.append(reminder)
    for hold in sort_holds(status.orders):  # in the order /holds lists them
        key = hold_key(hold)
        if key is not None:
            found.append(Reminder(Kind.READY, key, hold))
    return found


def candidates(status: BorrowerStatus, today: date, days: Sequence[int]) -> list[tuple[str, Any]]:
    """(key, loan or hold) for everything that would be reminded today, before history."""
    return [(reminder.key, reminder.thing) for reminder in due_reminders(status, today, days)]
