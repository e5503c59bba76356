"""Which reminder a loan or hold is due today, as a key the store keeps exactly once.

Keys: `loan:<id>:<due>:<threshold>`, `loan:<id>:<due>:overdue`, `loan:<id>:unreadable:<digest>`
and `hold:<id>:ready`. A chat's card 2 and later prefix theirs with `c<n>:` (`card_key`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import date
from typing import Any

from bot.library.models import BorrowerStatus, Hold, Loan
from bot.rules.urgency import hold_is_ready, sort_holds, sort_loans


def loan_key(loan: Loan, today: date, days: Sequence[int]) -> str | None:
    """The key of the reminder this loan is due today, if any.

    Only the smallest threshold reached counts, so a patron whose sweep was missed gets one
    reminder, not one per threshold passed; a larger one was either sent before or is moot.
    A due date the bot cannot read is told once (per loan and text): the digest says so
    rather than dropping the loan silently.
    """
    due = loan.due_date
    if isinstance(due, str) and due.strip():
        digest = hashlib.sha256(due.encode()).hexdigest()[:12]
        return f"loan:{loan.loan_id}:unreadable:{digest}"
    if not isinstance(due, date):
        return None  # no due date at all: nothing to remind
    left = (due - today).days
    prefix = f"loan:{loan.loan_id}:{due.isoformat()}"
    if left < 0:
        return f"{prefix}:overdue"
    reached = [day for day in days if left <= day]
    return f"{prefix}:{min(reached)}" if reached else None


def card_key(card: int, key: str) -> str:
    """A reminder key of card `card` in its chat's history: card 1's keys keep the form they
    had before a chat could hold several cards, so an upgrade sends nothing twice."""
    return key if card == 1 else f"c{card}:{key}"


def hold_key(hold: Hold) -> str | None:
    return f"hold:{hold.order_id}:ready" if hold_is_ready(hold) else None


def candidates(status: BorrowerStatus, today: date, days: Sequence[int]) -> list[tuple[str, Any]]:
    """(key, loan or hold) for everything that would be reminded today, before history."""
    found: list[tuple[str, Any]] = []
    for loan in sort_loans(status.loans):
        key = loan_key(loan, today, days)
        if key is not None:
            found.append((key, loan))
    for hold in sort_holds(status.orders):  # in the order /holds lists them
        key = hold_key(hold)
        if key is not None:
            found.append((key, hold))
    return found
