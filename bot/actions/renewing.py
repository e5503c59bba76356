"""Renewing: one loan (a chat's button or the Mini App's id, `renew_loan`), those due within a
window ("renew all", `renew_all`), or everything due before a trip (/away, `renew_for_trip`);
`renew_due` is the loop the last two share.

Each loan is tried at most once per id and never retried. The card is the one the id names by
identity, and its login is checked before anything is claimed or sent. What the library said
is remembered (a refusal is kept, so the loan is marked and offered no button again; a renewal
moves the calendar feed's date), and a loan's answer retires every id its face gave for it.

The results are typed (`LoanRenewal`, `AllRenewal`, `Trip`); the chat and the Mini App
only render them.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from bot.actions.outcomes import Already, CardGone, LoginLapsed, NotRead, claim_for_card
from bot.library.deadline import Deadline
from bot.library.errors import (
    NOT_SENT,
    ClientFault,
    LibraryError,
    NotLoggedIn,
    Refused,
    ServiceUnavailable,
    TokenRejected,
)
from bot.rules.renewals import due_key, raw_reason, refusal_for
from bot.rules.urgency import due_within, hold_is_ready, sort_loans
from bot.services import calendar

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from bot.library.client import LibraryClient
    from bot.library.models import BorrowerStatus, Hold, Loan, RenewResult
    from bot.services import Services
    from storage.notices import Unanswered
    from storage.store import CallbackRef, Card, Refusal, Store

# What the faces store one loan's renew id for: the chat's buttons and the Mini App's ids.
CHAT_RENEW = "renew"
PAGE_RENEW = "apprenew"
LOAN_ACTIONS = (CHAT_RENEW, PAGE_RENEW)
# Renewals in flight at once for "renew all": quick for 60+ loans, gentle on the platform.
RENEW_CONCURRENCY = 6
# How long a renewal whose answer was lost may still be under way at the library: the bot gives
# up on the platform's answer, while the platform's own call to the library system may go on.
# Until then a read showing the old due date proves nothing (chosen: no source gives the
# platform's timeout towards the library system).
UNANSWERED_SETTLED = dt.timedelta(minutes=10)


# --- one loan ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Renewed:
    """Renewed: `result.return_date` is the new due date (None when the library gave none)."""

    card: Card
    loan_id: str
    title: str
    due: str  # the due date the loan had (`due_key`)
    result: RenewResult

    @property
    def new_due(self) -> dt.date | None:
        date = self.result.return_date
        return date if isinstance(date, dt.date) else None


@dataclass(frozen=True)
class RenewRefused:
    """The library refused it; `reason` is the library's own word (`raw_reason`)."""

    card: Card
    loan_id: str
    title: str
    due: str
    error: Refused

    @property
    def reason(self) -> str:
        return raw_reason(self.error)


@dataclass(frozen=True)
class NoAnswer:
    """Sent once and never answered readably: it may have gone through, so it is not sent
    again from this id, and the patron is told to look."""

    card: Card
    loan_id: str
    title: str
    due: str
    error: LibraryError


@dataclass(frozen=True)
class OurFault:
    """The platform refused the request itself as malformed: not renewed, and the fault is
    the bot's (the id stays spent: the same request would be refused again)."""

    card: Card
    loan_id: str
    title: str
    due: str
    error: ClientFault


@dataclass(frozen=True)
class NotSent:
    """Not handled, and known not to be (a 503 of a library down or busy, or no connection
    made): surely not renewed, so a reusable id is usable again."""

    card: Card
    loan_id: str
    title: str
    due: str
    error: LibraryError


@dataclass(frozen=True)
class Failed:
    """Not handled, as for `NotSent`, with an id that is not reusable: the id stays spent, and
    the patron is told the library is not answering."""

    card: Card
    loan_id: str
    title: str
    due: str
    error: LibraryError


LoanRenewal = (
    Renewed
    | RenewRefused
    | NoAnswer
    | OurFault
    | NotSent
    | Failed
    | LoginLapsed
    | CardGone
    | Already
)


async def renew_loan(
    services: Services,
    *,
    chat_id: int,
    button: str,
    action: str,
    user_id: int | None = None,
    reusable: bool = False,
) -> LoanRenewal:
    """Renew the loan behind the stored id `button` (stored for `action`: the chat's `renew`
    buttons and the Mini App's ids each renew only through their own face), at most once.

    The card is the one the id names by identity, and its login is checked before the id is
    claimed: a card that is gone or lapsed spends nothing. A second claim of the id (a double
    tap, two views, a race) gets `Already`, and so does a loan renewed through the bot today
    (from any face: one more today would give the same date). A renewal or refusal is
    remembered (`remember`) and retires every face's ids of that loan.

    `reusable`: an id not handled (`NotSent`) or refused for its token is released, as
    nothing was renewed (`NotSent`, `LoginLapsed`). The Mini App's ids are one per loan and due
    date, so a spent one has no replacement; a chat button is one of a message, and stays spent
    (`Failed`), as a new /renew gives new ones."""
    store, library = services.store, services.library
    claimed = await claim_for_card(
        store, chat_id=chat_id, button=button, action=action, user_id=user_id
    )
    if not isinstance(claimed, tuple):
        return claimed
    card, ref = claimed
    payload = ref.payload
    loan_id = str(payload.get("loan_id", ""))
    due = str(payload.get("due", ""))
    title = str(payload.get("title") or "")
    loan = (card, loan_id, title, due)
    today = _today(services)
    if not await store.notices.claim_renewal(
        chat_id, loan_id, today, card.number
    ) and not await _unanswered_undone(services, card, loan_id, today):
        return Already()  # renewed today, from another face or message: it would gain nothing
    try:
        result = await Deadline().run(library.renew(card.token, loan_id))
    except LibraryError as exc:
        if exc.outcome_unknown and not isinstance(exc, TokenRejected | NotLoggedIn):
            # Perhaps renewed: another try today waits until the library has surely finished
            # with this one, and a read then shows the old due date.
            with contextlib.suppress(ValueError):
                sent_at = {loan_id: dt.date.fromisoformat(due)}  # `due_key`'s form
                await store.notices.hold_unanswered(chat_id, sent_at, today, card.number)
            return NoAnswer(*loan, exc)
        await store.notices.release_renewals(chat_id, [loan_id], today, card.number)
        if isinstance(exc, TokenRejected | NotLoggedIn):
            if reusable:
                await store.callbacks.release_callback(button, chat_id)
            return LoginLapsed(card, exc)
        if isinstance(exc, Refused):
            await _answered(store, chat_id, card, [loan_id])
            await remember(store, chat_id, loan_id, due, exc, card.number)
            return RenewRefused(*loan, exc)
        if isinstance(exc, ClientFault):
            return OurFault(*loan, exc)
        if not reusable:
            return Failed(*loan, exc)
        await store.callbacks.release_callback(button, chat_id)
        return NotSent(*loan, exc)
    await _answered(store, chat_id, card, [loan_id])
    await remember(store, chat_id, loan_id, due, result, card.number)
    return Renewed(*loan, result)


def _today(services: Services) -> dt.date:
    """The day a renewal counts from: today in the bot's time zone."""
    return dt.datetime.now(services.settings.timezone).date()


async def renewed_today(services: Services, card: Card, loans: Sequence[Loan]) -> set[str]:
    """Of `loans` (as just read), those renewed (or being renewed) through the bot today: a
    face offers no renewal of them, as one today would give the same date (`renew_loan`
    refuses it). A renewal whose answer was lost counts as renewed until `UNANSWERED_SETTLED`
    has passed with the loan's due date still the one it was sent at."""
    claimed = await services.store.notices.renewed(card.chat_id, _today(services), card.number)
    return {
        loan.loan_id
        for loan in loans
        if loan.loan_id in claimed
        and (
            (lost := claimed[loan.loan_id]) is None or lost.due != loan.due_date or _settling(lost)
        )
    }


def _settling(lost: Unanswered) -> bool:
    """Whether a renewal whose answer was lost may still be under way at the library."""
    return lost.at > dt.datetime.now(dt.UTC) - UNANSWERED_SETTLED


async def _unanswered_undone(services: Services, card: Card, loan_id: str, today: dt.date) -> bool:
    """Whether the loan's renewal of today whose answer was lost surely did not happen (long
    enough ago for the library to have finished with it, a read now shows the due date it was
    sent at), and the loan is claimed for another try. Any doubt (no such renewal, too recent,
    the read failing, the date moved) counts as renewed: at most once."""
    store = services.store
    lost = (await store.notices.renewed(card.chat_id, today, card.number)).get(loan_id)
    if lost is None or _settling(lost):
        return False
    try:
        status = await Deadline().run(services.library.user(card.token))
    except LibraryError:
        return False
    due = next((loan.due_date for loan in status.loans if loan.loan_id == loan_id), None)
    return due == lost.due and await store.notices.claim_renewal(
        card.chat_id, loan_id, today, card.number, due=lost.due, settled=UNANSWERED_SETTLED
    )


async def _answered(store: Store, chat_id: int, card: Card, loan_ids: Sequence[str]) -> None:
    """Retire every face's ids of the card's `loan_ids` (`LOAN_ACTIONS`): each loan has its
    answer, so no view, message or page shown before sends it again."""
    if not loan_ids:
        return
    match = {"cid": card.card_id, "loan_id": frozenset(loan_ids)}
    for action in LOAN_ACTIONS:
        await store.callbacks.retire_callbacks(chat_id, action, match)


# --- the loans due ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Tried:
    """A loan sent for renewal: what the library answered (a `Refused`, another
    `LibraryError` for no readable answer, else the new date), and the stored id of its loan
    button claimed on the way, if it had one."""

    loan: Loan
    outcome: RenewResult | LibraryError
    button: str | None = None

    @property
    def kind(self) -> Literal["ok", "refused", "fault", "unknown", "not_done"]:
        if isinstance(self.outcome, Refused):
            return "refused"
        if isinstance(self.outcome, ClientFault):
            return "fault"  # the platform refused the request itself: not renewed, our fault
        if isinstance(self.outcome, LibraryError):
            # Not handled (a 503, no connection, not started in time): surely not renewed.
            return "unknown" if self.outcome.outcome_unknown else "not_done"
        return "ok"

    @property
    def answered(self) -> bool:
        """The library renewed the loan or refused it: an answer to keep, and its ids spent."""
        return self.kind in ("ok", "refused")


@dataclass(frozen=True)
class Skipped:
    """A loan left alone: refused before (`reason`, the library's words), its due date not
    readable (`due`), its own button tapped already ("tried_here"), or renewed through the bot
    today already ("renewed_today": again would give the same date)."""

    loan: Loan
    why: Literal["refused", "unreadable", "tried_here", "renewed_today"]
    reason: str = ""
    due: str = ""


@dataclass(frozen=True)
class RenewedDue:
    """What renewing the loans due within `window` days did, in the order of the list."""

    window: int
    tried: list[Tried] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    later: list[Loan] = field(default_factory=list)  # due after the window: left alone
    # The library refused the card's token partway, after answering other loans: those it
    # refused are "not_done", and the face lapses the card.
    lapsed: TokenRejected | None = None

    def moved(self, loans: Sequence[Loan]) -> list[Loan]:
        """`loans` with the new due dates the library gave."""
        dates = {
            tried.loan.loan_id: tried.outcome.return_date
            for tried in self.tried
            if not isinstance(tried.outcome, LibraryError) and tried.outcome.return_date is not None
        }
        return [
            loan.model_copy(update={"due_date": dates[loan.loan_id]})
            if loan.loan_id in dates
            else loan
            for loan in loans
        ]


@dataclass(frozen=True)
class NoLoans:
    """The card has no loans now."""


@dataclass(frozen=True)
class AllRenewed:
    """ "Renew all" of a card: what it did (`done`), and the card's loans as they were read
    before (`loans`) and its refusals remembered before (`refused_before`), so a face can
    redraw what it showed."""

    card: Card
    done: RenewedDue
    loans: list[Loan]
    refused_before: Mapping[str, Refusal]


AllRenewal = AllRenewed | NotRead | NoLoans | LoginLapsed | CardGone | Already


async def renew_all(
    services: Services,
    *,
    chat_id: int,
    button: str,
    action: str,
    window: int,
    today: dt.date,
    sibling_action: str,
    keyboard: Sequence[str] = (),
    user_id: int | None = None,
) -> AllRenewal:
    """ "Renew all" behind the stored id `button` (stored for `action`), at most once: the
    card it names by identity, its loans read fresh, and of those the id lists (none listed:
    every loan) the ones due within `window` days renewed, each at most once (`renew_due`).

    The id's `buttons` (else `keyboard`, the ids under the tapped message) are the same list's
    single-loan buttons, stored for `sibling_action`: a loan with one is renewed only if that
    id is claimed here, so a tap and "renew all" never both renew it."""
    store, library = services.store, services.library
    claimed = await claim_for_card(
        store, chat_id=chat_id, button=button, action=action, user_id=user_id
    )
    if not isinstance(claimed, tuple):
        return claimed
    card, ref = claimed
    payload = ref.payload
    listed = payload.get("loans")
    buttons = payload.get("buttons")
    sibling_ids = [str(b) for b in buttons] if isinstance(buttons, list) else list(keyboard)
    deadline = Deadline()
    try:
        status = await deadline.run(library.user(card.token))
    except (TokenRejected, NotLoggedIn) as exc:
        return LoginLapsed(card, exc)
    except LibraryError as exc:
        return NotRead(exc)
    if not status.loans:
        return NoLoans()
    siblings = {
        str(row.payload.get("loan_id")): row
        for row in await store.callbacks.callbacks_many(sibling_ids, chat_id)
        if row.action == sibling_action and row.payload.get("loan_id")
    }
    refused_before = await store.renewal_refusals.refusals(chat_id, number=card.number)
    done = await renew_due(
        store,
        library,
        chat_id=chat_id,
        number=card.number,
        token=card.token,
        status=status,
        window=window,
        today=today,
        deadline=deadline,
        listed={str(loan) for loan in listed} if isinstance(listed, list) else None,
        siblings=siblings,
    )
    if isinstance(done, TokenRejected):
        return LoginLapsed(card, done)
    await _answered(store, chat_id, card, [t.loan.loan_id for t in done.tried if t.answered])
    return AllRenewed(card, done, list(status.loans), refused_before)


@dataclass(frozen=True)
class Trip:
    """/away of a card: what renewing the loans due before the patron is back did (`done`),
    and the ready holds whose last pick-up day comes before that (`lapsing`, with the day)."""

    done: RenewedDue
    lapsing: list[tuple[Hold, dt.date]]


async def renew_for_trip(
    services: Services,
    *,
    chat_id: int,
    card: Card,
    status: BorrowerStatus,
    days: int,
    today: dt.date,
    deadline: Deadline,
) -> Trip | LoginLapsed:
    """Before a trip of `days` days: every loan of `card` due by then renewed, each at most
    once (`renew_due`, from the status the caller read), and the ready holds that lapse
    meanwhile, so they can be collected before leaving."""
    store, library = services.store, services.library
    done = await renew_due(
        store,
        library,
        chat_id=chat_id,
        number=card.number,
        token=card.token,
        status=status,
        window=days,
        today=today,
        deadline=deadline,
    )
    if isinstance(done, TokenRejected):
        return LoginLapsed(card, done)
    back = today + dt.timedelta(days=days)
    lapsing = [
        (hold, last)
        for hold in status.orders
        if hold_is_ready(hold)
        and isinstance(last := hold.pick_up_expiry_date, dt.date)
        and last < back
    ]
    return Trip(done, lapsing)


async def renew_due(
    store: Store,
    library: LibraryClient,
    *,
    chat_id: int,
    number: int,
    token: str,
    status: BorrowerStatus,
    window: int,
    today: dt.date,
    deadline: Deadline,
    listed: set[str] | None = None,
    siblings: Mapping[str, CallbackRef] | None = None,
) -> RenewedDue | TokenRejected:
    """Renew card `number`'s loans due within `window` days (of `listed`, when given), each at
    most once, and none renewed through the bot today already. A loan with a button in
    `siblings` (loan id -> its stored button) is renewed only if that button is claimed here,
    so a tap and "renew all" never both renew it. The answers are remembered (`remember`). A
    token refused before any loan had its answer stops it all (returned, not raised); refused
    partway, the answers given are kept and told (`RenewedDue.lapsed`).
    """
    refusals = await store.renewal_refusals.refusals(chat_id, number=number)
    siblings = siblings or {}
    done = RenewedDue(window)
    todo: list[tuple[Loan, str | None]] = []  # the loan, and its claimed button's stored id
    for loan in sort_loans(status.loans):
        if listed is not None and loan.loan_id not in listed:
            continue  # not in this message: a newer loan is not "all" of an older list
        due = loan.due_date
        if isinstance(due, dt.date) and not due_within(due, today, window):
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
        if (
            sibling is not None
            and await store.callbacks.claim_callback(sibling.id, chat_id) is None
        ):
            done.skipped.append(Skipped(loan, "tried_here"))
            continue
        if not await store.notices.claim_renewal(
            chat_id, loan.loan_id, today, number, due=due, settled=UNANSWERED_SETTLED
        ):
            # Renewed today already: again would spend a renewal for the same date.
            if sibling is not None:
                await store.callbacks.release_callback(sibling.id, chat_id)
            done.skipped.append(Skipped(loan, "renewed_today"))
            continue
        todo.append((loan, None if sibling is None else sibling.id))
    outcomes = await renew_each(token, [loan for loan, _ in todo], library, deadline)
    tries = [Tried(loan, o, button) for (loan, button), o in zip(todo, outcomes, strict=True)]
    rejected = next((o for o in outcomes if isinstance(o, TokenRejected)), None)
    if rejected is not None and not any(tried.answered for tried in tries):
        await _settle_claims(store, chat_id, number, today, tries)
        return rejected
    for tried in tries:
        loan, button = tried.loan, tried.button
        await remember(store, chat_id, loan.loan_id, due_key(loan), tried.outcome, number)
        if button is not None and tried.kind == "not_done":
            await store.callbacks.release_callback(button, chat_id)  # tappable again
        done.tried.append(tried)
    await _settle_claims(store, chat_id, number, today, tries)
    return replace(done, lapsed=rejected)


async def _settle_claims(
    store: Store, chat_id: int, number: int, today: dt.date, tries: Sequence[Tried]
) -> None:
    """After the library's answers: today's claims of loans not renewed are let go, those
    renewed are kept, and those whose answer was lost are kept until a read shows their old
    due date (`hold_unanswered`)."""
    unanswered = {
        tried.loan.loan_id: due
        for tried in tries
        if tried.kind == "unknown" and isinstance(due := tried.loan.due_date, dt.date)
    }
    await store.notices.hold_unanswered(chat_id, unanswered, today, number)
    await store.notices.release_renewals(
        chat_id,
        [tried.loan.loan_id for tried in tries if tried.kind not in ("ok", "unknown")],
        today,
        number,
    )


async def remember(
    store: Store,
    chat_id: int,
    loan_id: str,
    due: str,
    outcome: RenewResult | LibraryError,
    number: int = 1,
) -> None:
    """Keep a refusal (so the loan is marked and offered no button); forget it on success."""
    if isinstance(outcome, Refused):
        await store.renewal_refusals.record_refusal(
            chat_id, loan_id, due, raw_reason(outcome), number=number
        )
    elif not isinstance(outcome, LibraryError):
        await store.renewal_refusals.clear_refusal(chat_id, loan_id, number=number)
        if isinstance(outcome.return_date, dt.date):
            await calendar.renewed(store, chat_id, loan_id, outcome.return_date, number)


async def renew_each(
    token: str, loans: Sequence[Loan], library: LibraryClient, deadline: Deadline
) -> list[RenewResult | LibraryError]:
    """Renew each loan once, a few at a time. When time runs out, a loan sent and not
    answered is unknown; a loan still waiting for its turn was not sent (`NOT_SENT`). A
    refused token is one loan's outcome: the others' answers stand."""
    gate = asyncio.Semaphore(RENEW_CONCURRENCY)
    started: set[str] = set()

    async def renew_one(loan: Loan) -> RenewResult | LibraryError:
        async with gate:
            started.add(loan.loan_id)
            try:
                result: RenewResult = await library.renew(token, loan.loan_id)
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
        if (error := task.exception()) is not None:
            raise error
    return [
        task.result()
        if task in done
        else ServiceUnavailable("no answer in time", code="timeout")
        if loan.loan_id in started
        else ServiceUnavailable("no time left to send it", code=NOT_SENT)
        for loan, task in zip(loans, tasks, strict=True)
    ]


async def refusals(services: Services, chat_id: int, number: int) -> dict[str, Refusal]:
    """The card's renewals the library refused lately (loan id -> refusal): a list tells
    them, and offers no button that would be refused again."""
    return await services.store.renewal_refusals.refusals(chat_id, number=number)
