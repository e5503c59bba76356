"""Ordering: the material checked (`material`), the order prepared for a card (`prepare`: a
plan to confirm, or why not), and the confirmed order placed, at most once (`place`).

`prepare` goes step by step, each step able to end it with its own result: the material and
the card read, what the card has of the title already, the pick-up branch (the one named, a
name matched, the saved one, else the card's own library), that branch checked, and what the
order system announces for the card. The results are typed; the chat renders them.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from bot.actions.outcomes import Already, CardGone, LoginLapsed, NotRead, claim_for_card
from bot.library.deadline import Deadline
from bot.library.errors import (
    LibraryError,
    NotLoggedIn,
    ServiceUnavailable,
    TokenRejected,
)
from bot.rules.isil import branch_key, match_branch, normalise_branch
from bot.rules.notices import (
    ORDER_GRACE,
    faust,
    is_unsure,
    placed_text,
    placed_time,
    unsure_text,
)
from bot.rules.urgency import hold_is_ready
from bot.services.checks import check_soon, watch_order

if TYPE_CHECKING:
    from bot.library.models import (
        Availability,
        BorrowerStatus,
        Branch,
        Copy,
        OrderResult,
        Work,
    )
    from bot.services import Services
    from storage.store import Card

log = logging.getLogger(__name__)

# The order system's reasons for refusing an order that `/v3/availability` announces
# (`orderPossible` false): told before any "Yes" is offered.
ANNOUNCED = frozenset(
    {
        "owned_own_catalogue",
        "owned_wrong_mediumtype",
        "not_owned_wrong_ill_mediumtype",
        "not_owned_no_ill_loc",
    }
)
# Reasons that mean the order was accepted, should one ever come as an error.
ACCEPTED = frozenset({"owned_accepted", "not_owned_ill_loc"})


# --- results ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class NotOrderable:
    """The bot can tell before the order system: not found, or lent only online."""

    why: Literal["not_found", "net_only"]
    pid: str
    title: str = ""
    kind: str = ""  # the work's material type, as the platform names it


@dataclass(frozen=True)
class OnCard:
    """What the card has of the title already: on loan (until `due`), ready or on hold at
    `branch` (its name)."""

    kind: Literal["loan", "ready", "hold"]
    due: dt.date | str | None = None
    branch: str = ""


@dataclass(frozen=True)
class OrderedBefore:
    """The card ordered this title through the bot already (`held`: what it has of it;
    `unsure`: that order's answer was lost, so whether it went in is not known yet)."""

    card: Card
    title: str
    held: OnCard | None = None
    unsure: bool = False


@dataclass(frozen=True)
class PickBranch:
    """The typed branch name `wanted` fits several branches, or none (`several`): pick one of
    `branches`."""

    card: Card
    pid: str
    title: str
    wanted: str
    several: bool
    branches: list[Branch]


@dataclass(frozen=True)
class NoBranches:
    """The card's library has no pick-up branches to choose from."""

    pid: str


@dataclass(frozen=True)
class NoBranch:
    """No pick-up branch is named, saved or known for the card."""

    pid: str


@dataclass(frozen=True)
class BranchRefused:
    """The branch is unknown to the platform (`known` False) or takes no pick-ups."""

    pid: str
    branch: str
    name: str
    known: bool


@dataclass(frozen=True)
class Announced:
    """The order system announces it would refuse (`reason`); for a title on the card's
    library's own shelves, where it stands there (`copies`) and the catalogue's `url`."""

    card: Card
    work: Work
    pid: str
    reason: str
    agency: str
    library: str | None
    copies: list[Copy]
    url: str | None


@dataclass(frozen=True)
class Plan:
    """The order to confirm: `work` for `card`, picked up at `branch` (named `branch_name`);
    `available` None when availability could not be read (it never blocks an order)."""

    card: Card
    work: Work
    pid: str
    branch: str
    branch_name: str
    available: Availability | None
    held: OnCard | None


Preparation = (
    Plan
    | NotRead
    | NotOrderable
    | OrderedBefore
    | PickBranch
    | NoBranches
    | NoBranch
    | BranchRefused
    | Announced
)


# --- the material -----------------------------------------------------------------------------


async def material(services: Services, pid: str, deadline: Deadline) -> Work | NotOrderable:
    """The material `pid`, found and checked before anything is asked about it (which card,
    which branch, "yes"). Raises the library's error when it cannot be read."""
    work = await _work(services, pid, deadline)
    if work is None or not work.title:
        return NotOrderable("not_found", pid)
    return orderable(work, pid) or work


def net_only(work: Work) -> bool:
    """A material the library lends only online ("Lydbog (net)", "E-bog (net)"): the order
    system refuses it for pick-up everywhere (`owned_wrong_mediumType`)."""
    return "(net)" in (work.type or "").lower()


def orderable(work: Work | None, pid: str) -> NotOrderable | None:
    """Why `work` cannot be ordered, where the bot can tell before the order system; None
    when it may be ordered."""
    if work is None or not work.title:
        return NotOrderable("not_found", pid)
    if net_only(work):
        return NotOrderable("net_only", pid, work.title, work.type or "")
    return None


async def _work(services: Services, pid: str, deadline: Deadline) -> Work | None:
    try:
        works = await deadline.run(services.library.work_public([pid]))
    except (TokenRejected, NotLoggedIn) as exc:
        # A refused anonymous token is the bot's problem, never a reason to log a patron out.
        raise ServiceUnavailable("the anonymous token was refused", code=exc.code) from exc
    for work in works:
        if work.pid == pid:
            return work
    return works[0] if works else None


# --- prepare ----------------------------------------------------------------------------------


async def prepare(
    services: Services,
    card: Card,
    *,
    pid: str,
    branch: str | None = None,
    wanted: str | None = None,
    work: Work | None = None,
) -> Preparation:
    """The order of `pid` for `card`, to be confirmed, or why not. A given `branch` (or the
    one branch of the card's library whose name `wanted` is) becomes the card's saved choice;
    otherwise the saved choice, else the card's own library. `work`: the material, when the
    caller found and checked it already (`material`)."""
    deadline = Deadline()
    given = branch is not None or wanted is not None
    if not given:
        branch = normalise_branch(card.pickup_branch)
    read = await _read(services, card, pid, work, deadline)
    if not isinstance(read, tuple):
        return read
    work, status, available = read
    title = work.title or pid
    held = await _on_card(services, status, pid, deadline)
    before = await _ordered_here(services, card, pid, held is not None)
    if before is not None:
        return OrderedBefore(card, title, held, unsure=held is None and is_unsure(before))
    home = normalise_branch(status.agency) if branch is None else None
    if wanted is not None:
        chosen = await _branch_named(services, card, pid, title, wanted, home, deadline)
        if not isinstance(chosen, str):
            return chosen
        branch = chosen
    branch = branch or home
    if branch is None:
        return NoBranch(pid)
    refused = await _check_branch(services, card, pid, branch, given, deadline)
    if refused is not None:
        return refused
    announced = await _announced(services, card, status, work, pid, branch, available, deadline)
    if announced is not None:
        return announced
    if given:
        await services.store.cards.set_pickup_branch(card.chat_id, branch, card.number)
    names = await services.branches.lookup(services.library, [branch], deadline)
    return Plan(card, work, pid, branch, names.get(branch, branch), available, held)


async def _read(
    services: Services, card: Card, pid: str, work: Work | None, deadline: Deadline
) -> tuple[Work, BorrowerStatus, Availability | None] | NotRead | NotOrderable:
    """The material (unless given), the card's status and the title's availability for the
    card, side by side."""

    async def given() -> Work | None:
        return work

    try:
        found, status, available = await asyncio.gather(
            _work(services, pid, deadline) if work is None else given(),
            deadline.run(services.library.user(card.token)),
            _availability(services, card, pid, deadline),
        )
    except LibraryError as exc:
        return NotRead(exc)
    refused = orderable(found, pid)
    if refused is not None or found is None:
        return refused or NotOrderable("not_found", pid)
    return found, status, available


async def _availability(
    services: Services, card: Card, pid: str, deadline: Deadline
) -> Availability | None:
    """`/v3/availability` of `pid` for the card; None when it cannot be read, which never
    blocks an order (the confirmation says so). At most a third of the time left."""
    try:
        async with asyncio.timeout(deadline.remaining() / 3):
            found = await services.library.availability(card.token, [pid])
    except (LibraryError, TimeoutError) as exc:
        log.warning("availability not read: %s", type(exc).__name__)
        return None
    first = found[0] if found else None
    return None if first is None or first.unavailable else first


async def _on_card(
    services: Services, status: BorrowerStatus, pid: str, deadline: Deadline
) -> OnCard | None:
    """What the card has of the title already, matched by the record number the status's
    `titleId` carries."""
    wanted = faust(pid)
    for loan in status.loans:
        if loan.title_id and faust(loan.title_id) == wanted:
            return OnCard("loan", due=loan.due_date)
    for hold in status.orders:
        if hold.title_id and faust(hold.title_id) == wanted:
            place = hold.pick_up_agency or ""
            names = await services.branches.lookup(services.library, [place], deadline)
            branch = names.get(place) or place or "?"
            return OnCard("ready" if hold_is_ready(hold) else "hold", branch=branch)
    return None


async def _ordered_here(services: Services, card: Card, pid: str, shown: bool) -> str | None:
    """The card's claim of this title, if it ordered it through the bot already. A claim
    whose hold no longer shows a day after (`ORDER_GRACE`: the order never went in, or its
    loan ended) is let go, so the title can be ordered again."""
    store = services.store
    placed = await store.notices.ordered(card.chat_id, faust(pid), card.number)
    if placed is None:
        return None
    when = placed_time(placed)
    if shown or when is None or dt.datetime.now(dt.UTC) < when + ORDER_GRACE:
        return placed
    await store.notices.release_order(card.chat_id, faust(pid), card.number, placed=placed)
    return None


async def _branch_named(
    services: Services,
    card: Card,
    pid: str,
    title: str,
    wanted: str,
    home: str | None,
    deadline: Deadline,
) -> str | PickBranch | NoBranches:
    """The one pick-up branch of the card's library whose name `wanted` is; else the branches
    to pick from (those it fits, else all)."""
    choices = await pickup_branches(services, home, deadline)
    found = match_branch(wanted, [(branch_key(b.branch_id), b.branch_name or "") for b in choices])
    if len(found) == 1:
        return found[0]
    if not choices:
        return NoBranches(pid)
    fits = [b for b in choices if branch_key(b.branch_id) in found] or choices
    return PickBranch(card, pid, title, wanted, bool(found), fits)


async def pickup_branches(services: Services, home: str | None, deadline: Deadline) -> list[Branch]:
    """The pick-up branches of the library `home` (none when it is not known)."""
    if not home:
        return []
    found = await services.branches.pickup_branches(services.library, home, deadline)
    return list(found or [])


async def home_branch(services: Services, card: Card, deadline: Deadline) -> str | None:
    """The card's own library (`/v3/user`); raises the library's error."""
    status = await deadline.run(services.library.user(card.token))
    return normalise_branch(status.agency)


async def branch_refused(
    services: Services, pid: str, branch: str, deadline: Deadline
) -> BranchRefused | None:
    """Why `branch` takes no pick-ups for anyone (unknown, or not a pick-up branch), or None:
    a branch typed with /order is checked before "which card?", as before "Yes"."""
    checked = await services.branches.check(services.library, branch, deadline)
    if checked.known is not False and checked.pickup:
        return None
    name = services.branches.known(branch) or branch
    return BranchRefused(pid, branch, name, bool(checked.known))


async def _check_branch(
    services: Services, card: Card, pid: str, branch: str, given: bool, deadline: Deadline
) -> BranchRefused | None:
    """The branch checked before asking, so "Yes" is never offered for a branch the platform
    will refuse; a saved choice that fails is forgotten."""
    refused = await branch_refused(services, pid, branch, deadline)
    if refused is not None and not given:
        await forget_branch(services, card, branch)
    return refused


async def _announced(
    services: Services,
    card: Card,
    status: BorrowerStatus,
    work: Work,
    pid: str,
    branch: str,
    available: Availability | None,
    deadline: Deadline,
) -> Announced | None:
    """The order system's answer for the card's own library, when it announces a refusal:
    "on its own shelves" holds only for a pick-up there; the other reasons hold wherever it
    is picked up."""
    reason = ((available and available.order_possible_reason) or "").strip().lower()
    if available is None or available.order_possible is not False or reason not in ANNOUNCED:
        return None
    agency = normalise_branch(status.agency) or ""
    own = services.branches.agency_of(branch) == normalise_branch(status.agency)
    if reason == "owned_own_catalogue" and not own:
        return None
    library = (
        await services.branches.library_name(services.library, agency, deadline) if agency else None
    )
    copies: list[Copy] = []
    url = None
    if reason == "owned_own_catalogue" and agency:
        try:
            holdings = await deadline.run(services.library.holdings_public(agency, [pid]))
        except LibraryError:
            holdings = []
        copies = [copy for h in holdings for copy in h.holdingsitems]
        url = services.branches.catalogue(agency)
    return Announced(card, work, pid, reason, agency, library, copies, url)


async def forget_branch(services: Services, card: Card, branch: str) -> None:
    """Forget the card's saved pick-up branch when it is `branch`."""
    if normalise_branch(card.pickup_branch) == branch:
        await services.store.cards.set_pickup_branch(card.chat_id, None, card.number)


# --- place ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Placed:
    """The order went in (`result.ors_id`: the order system's number, when it gave one)."""

    card: Card
    pid: str
    title: str
    branch: str
    branch_name: str
    result: OrderResult


@dataclass(frozen=True)
class OrderFailed:
    """Not placed, or not known to be (`maybe`: no readable answer, or an answer that means
    accepted; the title stays claimed). `error` carries the order system's reason."""

    card: Card
    pid: str
    title: str
    branch: str
    branch_name: str
    error: LibraryError
    maybe: bool


@dataclass(frozen=True)
class PlacedBefore:
    """The title is claimed for the card already: another confirmation placed it (`unsure`:
    whether that order went in is not known)."""

    card: Card
    title: str
    unsure: bool = False


Placing = Placed | OrderFailed | PlacedBefore | LoginLapsed | CardGone | Already


async def place(
    services: Services,
    *,
    chat_id: int,
    button: str,
    action: str,
    user_id: int | None = None,
) -> Placing:
    """Place the order behind the confirmation's stored "yes" `button` (stored for `action`),
    at most once: the card it names by identity with its login alive, the id claimed, then the
    title claimed for the card (two confirmations of one material place one order), then one
    `/v3/order` call, never retried."""
    claimed = await claim_for_card(
        services.store, chat_id=chat_id, button=button, action=action, user_id=user_id
    )
    if not isinstance(claimed, tuple):
        return claimed
    card, ref = claimed
    payload = ref.payload
    pid, branch = str(payload.get("pid", "")), str(payload.get("branch", ""))
    title = str(payload.get("title") or pid)
    branch_name = services.branches.known(branch) or branch
    store, record = services.store, faust(pid)
    placed = placed_text(dt.datetime.now(dt.UTC))
    if not await store.notices.claim_order(chat_id, record, placed, card.number):
        before = await store.notices.ordered(chat_id, record, card.number)
        return PlacedBefore(card, title, unsure=is_unsure(before))
    try:
        result = await Deadline().run(services.library.order(card.token, [pid], branch))
    except LibraryError as exc:
        maybe = maybe_placed(exc)
        if not maybe:
            await store.notices.release_order(chat_id, record, card.number, placed=placed)
        elif exc.outcome_unknown:  # kept, and told as unknown until it shows or lapses
            unsure = unsure_text(placed)
            await store.notices.restate_order(chat_id, record, placed, unsure, card.number)
        if isinstance(exc, ServiceUnavailable):
            await check_soon(store, services.settings, chat_id, card.number)  # it may be in
        if (exc.code or "").strip().lower() == "unknown_pickupagency":
            await forget_branch(services, card, branch)  # not offered again
        if isinstance(exc, TokenRejected | NotLoggedIn):
            return LoginLapsed(card, exc)
        return OrderFailed(card, pid, title, branch, branch_name, exc, maybe)
    log.info("order placed for chat %s", chat_id)
    await check_soon(store, services.settings, chat_id, card.number)  # a new hold: checked daily
    await watch_order(store, services.settings, chat_id, pid, card.number)
    # Ordered: the card's waits for it on a shelf end.
    await store.watches.end_titles(chat_id, card.number, [pid])
    return Placed(card, pid, title, branch, branch_name, result)


def maybe_placed(exc: LibraryError) -> bool:
    """Whether the order may have gone in despite `exc`: no readable answer, or a reason that
    means it was accepted. Only then is the title's claim kept."""
    if exc.outcome_unknown:
        return True
    return (exc.code or "").strip().lower() in ACCEPTED
