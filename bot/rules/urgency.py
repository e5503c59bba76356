"""How pressing a loan or hold is, and the order they are listed and reminded in."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Final, Literal

from bot.library.models import BorrowerStatus, Hold, Loan

Urgency = Literal["overdue", "due_today", "due_soon", "later", "unknown"]

DUE_SOON_DAYS: Final = 3
READY_STATUSES: Final = frozenset({"available for pickup", "at reservation shelf"})


def loan_urgency(loan: Loan, today: dt.date) -> Urgency:
    """How pressing a loan is; "unknown" when its due date could not be read."""
    due = loan.due_date
    if not isinstance(due, dt.date):
        return "unknown"
    days = (due - today).days
    if days < 0:
        return "overdue"
    if days == 0:
        return "due_today"
    if days <= DUE_SOON_DAYS:
        return "due_soon"
    return "later"


def due_within(due: dt.date, today: dt.date, within: int) -> bool:
    """Due within `within` days from today, today and overdue included: the window of a list's
    summary and of "renew those due" alike, so the two never disagree."""
    return (due - today).days <= within


def due_counts(loans: Iterable[Loan], today: dt.date, within: int) -> tuple[int, int]:
    """(overdue, due within `within` days from today, today included): a long list's summary."""
    overdue = soon = 0
    for loan in loans:
        due = loan.due_date
        if not isinstance(due, dt.date):
            continue
        if due < today:
            overdue += 1
        elif due_within(due, today, within):
            soon += 1
    return overdue, soon


def sort_loans(loans: Iterable[Loan]) -> list[Loan]:
    """By due date, soonest first; loans without a readable date last, in their given order."""

    def key(loan: Loan) -> tuple[int, dt.date]:
        due = loan.due_date
        return (0, due) if isinstance(due, dt.date) else (1, dt.date.max)

    return sorted(loans, key=key)


def hold_is_ready(hold: Hold) -> bool:
    """Waiting on the pick-up shelf: by status, or because it has a pick-up number."""
    return hold.status.strip().casefold() in READY_STATUSES or bool((hold.pick_up_id or "").strip())


def queue_position(hold: Hold) -> int | None:
    try:
        return int((hold.hold_queue_position or "").strip())
    except ValueError:
        return None


def sort_holds(holds: Iterable[Hold]) -> list[Hold]:
    """Ready for pick-up first (soonest last day first), then by queue position; stable."""

    def key(hold: Hold) -> tuple[int, dt.date, int]:
        if hold_is_ready(hold):
            last = hold.pick_up_expiry_date
            return (0, last if isinstance(last, dt.date) else dt.date.max, 0)
        position = queue_position(hold)
        return (1, dt.date.max, position if position is not None else 1 << 62)

    return sorted(holds, key=key)


def sweep_marks(status: BorrowerStatus) -> tuple[dt.date | None, bool]:
    """What orders a card in the next sweep (most urgent first): its first loan due date (None:
    no loan with a readable one), and whether a hold waits on the pick-up shelf."""
    dues = [loan.due_date for loan in status.loans if isinstance(loan.due_date, dt.date)]
    return min(dues, default=None), any(hold_is_ready(hold) for hold in status.orders)
