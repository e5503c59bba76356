"""What the bot remembers about renewals, shared by /loans, /renew and reminders.

A refused renewal is remembered per chat and loan (`Store.record_refusal`) with the loan's due
date at the time: while the due date is unchanged (and for at most `storage.store.REFUSAL_TTL`)
the loan is marked "can't be renewed: <reason>" and gets no button. A new due date means the
loan was renewed or changed some other way, so the refusal no longer applies.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

from bot.library.errors import LibraryError
from bot.library.models import Loan


class Remembered(Protocol):
    """A remembered refusal (`storage.store.Refusal` is one): the due date it was refused for."""

    @property
    def due(self) -> str: ...


R = TypeVar("R", bound=Remembered)

# "Renew all" covers the loans due within the patron's largest reminder threshold, or this
# many days when reminders are off.
DEFAULT_WINDOW = 7


def raw_reason(exc: LibraryError) -> str:
    """The refusal as the library sent it (`error`, else `error_description`), for storing."""
    return " ".join((exc.code or exc.description or "").split())[:200]


def due_key(loan: Loan) -> str:
    """The loan's due date as compared against a remembered refusal."""
    due = loan.due_date
    if isinstance(due, dt.date):
        return due.isoformat()
    return str(due or "")


def refusal_for(loan: Loan, refusals: Mapping[str, R]) -> R | None:
    """The remembered refusal that still applies to `loan` (same due date), if any."""
    found = refusals.get(loan.loan_id)
    return found if found is not None and found.due == due_key(loan) else None


def open_loans(loans: Iterable[Loan], refusals: Mapping[str, R]) -> list[Loan]:
    """The loans no remembered refusal applies to (`refusal_for`): those a renewal may help."""
    return [loan for loan in loans if refusal_for(loan, refusals) is None]


def renew_window(reminders_enabled: bool, thresholds: Sequence[int]) -> int:
    """Days ahead that "renew all" covers: the largest reminder threshold, else 7."""
    if not reminders_enabled or not thresholds:
        return DEFAULT_WINDOW
    return max(thresholds)
