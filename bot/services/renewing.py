"""Renewing a card's loans: "renew all" and /away (the loans due within a window, each at most
once, never retried), and remembering what the library said (a refusal is kept, so the loan is
marked and offered no button again; a renewal moves the calendar feed's date).

The outcomes are structured (`RenewedDue`); the Telegram side only renders them.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from bot.library.errors import (
    ClientFault,
    LibraryError,
    Refused,
    ServiceUnavailable,
    TokenRejected,
)
from bot.rules.renewals import due_key, raw_reason, refusal_for
from bot.rules.urgency import sort_loans
from bot.services import calendar

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from bot.library.client import LibraryClient
    from bot.library.deadline import Deadline
    from bot.library.models import BorrowerStatus, Loan, RenewResult
    from storage.store import CallbackRef, Store

# Renewals in flight at once for "renew all": quick for 60+ loans, gentle on the platform.
RENEW_CONCURRENCY = 6


@dataclass(frozen=True)
class Tried:
    """A loan sent for renewal: what the library answered (a `Refused`, another
    `LibraryError` for no readable answer, else the new date), and the stored id of its loan
    button claimed on the way, if it had one."""

    loan: Loan
    outcome: RenewResult | LibraryError
    button: str | None = None

    @property
    def kind(self) -> Literal["ok", "refused", "fault", "unknown"]:
        if isinstance(self.outcome, Refused):
            return "refused"
        if isinstance(self.outcome, ClientFault):
            return "fault"  # the platform refused the request itself: not renewed, our fault
        if isinstance(self.outcome, LibraryError):
            return "unknown"
        return "ok"


@dataclass(frozen=True)
class Skipped:
    """A loan left alone: refused before (`reason`, the library's words), its due date not
    readable (`due`), or its own button tapped already ("tried_here")."""

    loan: Loan
    why: Literal["refused", "unreadable", "tried_here"]
    reason: str = ""
    due: str = ""


@dataclass(frozen=True)
class RenewedDue:
    """What renewing the loans due within `window` days did, in the order of the list."""

    window: int
    tried: list[Tried] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    later: list[Loan] = field(default_factory=list)  # due after the window: left alone


async def renew_due(
    store: Store,
    library: LibraryClient,
    *,
    chat_id: int,
    card: int,
    token: str,
    status: BorrowerStatus,
    window: int,
    today: dt.date,
    deadline: Deadline,
    listed: set[str] | None = None,
    siblings: Mapping[str, CallbackRef] | None = None,
) -> RenewedDue | TokenRejected:
    """Renew card `card`'s loans due within `window` days (of `listed`, when given), each at
    most once. A loan with a button in `siblings` (loan id -> its stored button) is renewed
    only if that button is claimed here, so a tap and "renew all" never both renew it. The
    answers are remembered (`remember`). A refused token stops it all (returned, not raised).
    """
    refusals = await store.renewal_refusals.refusals(chat_id, card=card)
    siblings = siblings or {}
    done = RenewedDue(window)
    todo: list[tuple[Loan, str | None]] = []  # the loan, and its claimed button's stored id
    for loan in sort_loans(status.loans):
        if listed is not None and loan.loan_id not in listed:
            continue  # not in this message: a newer loan is not "all" of an older list
        due = loan.due_date
        if isinstance(due, dt.date) and (due - today).days > window:
            # Outside the window first: a refusal remembered of a loan due later is no answer
            # to "what is due within the window".
            done.later.append(loan)
            continue
        found = refusal_for(loan, refusals)
        if found is not None:
            done.skipped.append(Skipped(loan, "refused", reason=found.reason))
            continue
        if not isinstance(due, dt.date):
            if due:
                done.skipped.append(Skipped(loan, "unreadable", due=str(due)))
            continue
        sibling = siblings.get(loan.loan_id)
        if sibling is not None:
            if await store.callbacks.claim_callback(sibling.id, chat_id) is None:
                done.skipped.append(Skipped(loan, "tried_here"))
                continue
            todo.append((loan, sibling.id))
        else:
            todo.append((loan, None))
    outcomes = await renew_each(token, [loan for loan, _ in todo], library, deadline)
    if isinstance(outcomes, TokenRejected):
        return outcomes
    for (loan, button), outcome in zip(todo, outcomes, strict=True):
        await remember(store, chat_id, loan.loan_id, due_key(loan), outcome, card)
        done.tried.append(Tried(loan, outcome, button))
    return done


async def remember(
    store: Store,
    chat_id: int,
    loan_id: str,
    due: str,
    outcome: RenewResult | LibraryError,
    card: int = 1,
) -> None:
    """Keep a refusal (so the loan is marked and offered no button); forget it on success."""
    if isinstance(outcome, Refused):
        await store.renewal_refusals.record_refusal(
            chat_id, loan_id, due, raw_reason(outcome), card=card
        )
    elif not isinstance(outcome, LibraryError):
        await store.renewal_refusals.clear_refusal(chat_id, loan_id, card=card)
        if isinstance(outcome.return_date, dt.date):
            await calendar.renewed(store, chat_id, loan_id, outcome.return_date, card)


async def renew_each(
    token: str, loans: Sequence[Loan], library: LibraryClient, deadline: Deadline
) -> list[RenewResult | LibraryError] | TokenRejected:
    """Renew each loan once, a few at a time; a loan without an answer in time is unknown."""
    gate = asyncio.Semaphore(RENEW_CONCURRENCY)

    async def renew_one(loan: Loan) -> RenewResult | LibraryError:
        async with gate:
            try:
                result: RenewResult = await library.renew(token, loan.loan_id)
            except TokenRejected:
                raise
            except LibraryError as exc:
                return exc
            return result

    if not loans:
        return []
    tasks = [asyncio.create_task(renew_one(loan)) for loan in loans]
    done, pending = await asyncio.wait(tasks, timeout=deadline.remaining())
    for task in pending:
        task.cancel()
    for task in done:
        error = task.exception()
        if isinstance(error, TokenRejected):
            return error
        if error is not None:
            raise error
    return [
        task.result() if task in done else ServiceUnavailable("no answer in time", code="timeout")
        for task in tasks
    ]
