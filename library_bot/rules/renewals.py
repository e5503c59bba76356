"""What the bot remembers and says about renewals, shared by /loans, /renew and reminders.

A refused renewal is remembered per chat and loan (`Store.record_refusal`) with the loan's due
date at the time: while the due date is unchanged (and for at most `storage.store.REFUSAL_TTL`)
the loan is marked "can't be renewed: <reason>" and gets no button. A new due date means the
loan was renewed or changed some other way, so the refusal no longer applies.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from library_bot.texts import t

if TYPE_CHECKING:
    from library_bot.library.errors import LibraryError
    from library_bot.library.models import Loan
    from library_bot.storage.store import ChatSettings, Refusal

# "Renew all" covers the loans due within the patron's largest reminder threshold, or this
# many days when reminders are off.
DEFAULT_WINDOW = 7
REASON_LIMIT = 120

# Substrings of refusal texts seen from library systems (NCIP problem types among them), and
# what they mean in plain words; anything else is quoted as the library sent it.
REASONS: tuple[tuple[str, str], ...] = (
    ("outstanding request", "borrower.renew.reason.reserved"),
    ("reserv", "borrower.renew.reason.reserved"),
    ("hold", "borrower.renew.reason.reserved"),
    ("maximum renewals", "borrower.renew.reason.max"),
    ("max", "borrower.renew.reason.max"),
    ("limit", "borrower.renew.reason.max"),
    ("too early", "borrower.renew.reason.too_early"),
    ("too_early", "borrower.renew.reason.too_early"),
    ("not renewable", "borrower.renew.reason.not_renewable"),
    ("not_renewable", "borrower.renew.reason.not_renewable"),
    ("debt", "borrower.renew.reason.debt"),
    ("fee", "borrower.renew.reason.debt"),
    ("unknown loan", "borrower.renew.reason.not_found"),
    ("not found", "borrower.renew.reason.not_found"),
    ("not_found", "borrower.renew.reason.not_found"),
)


def raw_reason(exc: LibraryError) -> str:
    """The refusal as the library sent it (`error`, else `error_description`), for storing."""
    return " ".join((exc.code or exc.description or "").split())[:200]


def reason_text(raw: str, lang: str) -> str:
    """Why a renewal was refused: plain words for a known text, else the text quoted."""
    lowered = raw.lower().replace("-", " ")
    for needle, key in REASONS:
        if needle in lowered:
            return t(lang, key)
    if not raw.strip():
        return t(lang, "borrower.renew.reason.unknown")
    text = " ".join(raw.split())
    if len(text) > REASON_LIMIT:
        text = text[: REASON_LIMIT - 1].rstrip() + "…"
    return t(lang, "borrower.renew.reason.code", code=text)


def due_key(loan: Loan) -> str:
    """The loan's due date as compared against a remembered refusal."""
    due = loan.due_date
    if isinstance(due, dt.date):
        return due.isoformat()
    return str(due or "")


def refusal_for(loan: Loan, refusals: Mapping[str, Refusal]) -> Refusal | None:
    """The remembered refusal that still applies to `loan` (same due date), if any."""
    found = refusals.get(loan.loan_id)
    return found if found is not None and found.due == due_key(loan) else None


def renew_window(chat: ChatSettings, operator_days: Sequence[int]) -> int:
    """Days ahead that "renew all" covers: the largest reminder threshold, else 7."""
    if not chat.reminders_enabled:
        return DEFAULT_WINDOW
    days = chat.thresholds(operator_days)
    return days[0] if days else DEFAULT_WINDOW
