"""/order <material id> [pick-up branch]: show what and where, ask, then place exactly one order.

The confirming button is single-use: its stored callback row is claimed atomically, so a double
tap or two racing updates place one order. Orders are never retried (the client does not retry
them either): an order whose outcome is unknown is reported as such.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import re
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from telegram import Update
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from bot.library.deadline import Deadline
from bot.library.errors import BadRequest, ClientFault, LibraryError, Refused, ServiceUnavailable
from bot.rules.isil import branch_key, match_branch, normalise_branch
from bot.rules.notices import ORDER_GRACE, faust, placed_text, placed_time
from bot.rules.urgency import hold_is_ready
from bot.services.checks import check_soon, watch_order
from bot.telegram.buttons import (
    AbortOrder,
    ButtonId,
    ChooseBranch,
    OrderCard,
    Payload,
    PickBranch,
    PlaceOrder,
    WhereIs,
    decode,
)
from bot.telegram.cards import card_heading, card_name, require_card, require_cards
from bot.telegram.context import Context
from bot.telegram.failures import answer_library_error, public_failure
from bot.telegram.keyboards import (
    BUTTON_TITLE,
    MAX_BUTTONS,
    PAYLOAD_TITLE,
    callback_buttons,
    claim_once,
    one_per_row,
    peek_callback,
    resolve_callback,
)
from bot.telegram.replies import plain, reply, send
from bot.texts import t
from bot.texts.formatting import format_date, shorten
from bot.texts.render import render_copies

if TYPE_CHECKING:
    from bot.library.models import Availability, BorrowerStatus, Branch, Work
    from storage.store import Card

log = logging.getLogger(__name__)

PID = re.compile(r"^\d{6}-[a-z]+:[A-Za-z0-9_\-]+$")
# Longest id or branch echoed back to the patron when it is refused.
ECHO_LIMIT = 60
# Longest text taken for a branch's name.
NAME_LIMIT = 100
ALREADY = "borrower.order.already"


def valid_pid(text: str) -> bool:
    """True for a material id such as `870970-basis:12345678`."""
    return len(text) <= 200 and PID.match(text) is not None


async def order_command(update: Update, context: Context) -> None:
    lang = context.lang
    cards = await require_cards(context)
    if not cards:
        return
    args = list(context.args or [])
    if not args:
        await reply(update, context, t(lang, "borrower.order.usage"))
        return
    pid = args[0].strip()
    if not valid_pid(pid):
        await reply(update, context, t(lang, "borrower.order.bad_id", pid=shorten(pid, ECHO_LIMIT)))
        return
    branch: str | None = None
    wanted: str | None = None
    if len(args) > 1:
        # A branch id, or a branch's name ("Vesterbro", "islands brygge").
        text = " ".join(args[1:])
        branch = normalise_branch(text)
        if branch is None:
            if len(text) > NAME_LIMIT or not any(char.isalpha() for char in text):
                echo = shorten(text, ECHO_LIMIT)
                await reply(update, context, t(lang, "borrower.order.bad_branch", branch=echo))
                return
            wanted = text
    deadline = Deadline()
    work = await _material(update, context, pid, deadline)
    if work is None:
        return
    if len(cards) > 1:
        await ask_card(update, context, cards, work, branch=branch, wanted=wanted)
        return
    await prepare_order(update, context, cards[0], pid=pid, branch=branch, wanted=wanted, work=work)


async def order_found(update: Update, context: Context, pid: str) -> None:
    """An "Order" button of a search or a suggestion: "which card?" with several cards, else
    the confirmation of `/order <pid>`."""
    cards = await require_cards(context)
    if not cards:
        return
    work = await _material(update, context, pid, Deadline())
    if work is None:
        return
    if len(cards) > 1:
        await ask_card(update, context, cards, work)
        return
    await prepare_order(update, context, cards[0], pid=pid, work=work)


async def ask_card(
    update: Update,
    context: Context,
    cards: Sequence[Card],
    work: Work,
    *,
    branch: str | None = None,
    wanted: str | None = None,
) -> None:
    """ "Which card?" for `work`, found and checked already: one button per card; the order
    goes on for the card tapped (`card_tapped`). A new message, so a tapped search result list
    keeps its buttons."""
    lang = context.lang
    pid = work.pid or ""
    specs: list[tuple[str, Payload]] = [
        (
            plain(t(lang, "cards.order_card", name=card_name(account, lang))),
            OrderCard(pid, account.number, branch, wanted, account.card_id),
        )
        for account in cards
    ]
    buttons = one_per_row(await callback_buttons(update, context, specs))
    text = t(lang, "cards.order_which", title=work.title or pid)
    await send(context.bot, context.chat_id, text, buttons=buttons)


async def card_tapped(update: Update, context: Context) -> None:
    """A card of "which card?": the order's confirmation for it, in the same message."""
    lang = context.lang
    ref = await resolve_callback(update, context)
    if ref is None:
        return
    tapped = decode(ref.payload, OrderCard)
    if tapped is None or not valid_pid(tapped.pid):
        await send(context.bot, context.chat_id, t(lang, "common.stale_button"))
        return
    account = await require_card(context, tapped=tapped)
    if account is None:
        return
    await prepare_order(
        update,
        context,
        account,
        pid=tapped.pid,
        branch=tapped.branch,
        wanted=tapped.wanted,
        edit=True,
    )


async def prepare_order(
    update: Update,
    context: Context,
    account: Card,
    *,
    pid: str,
    branch: str | None = None,
    wanted: str | None = None,
    edit: bool = False,
    work: Work | None = None,
) -> None:
    """Ask for confirmation of ordering `pid`, to be picked up at `branch` (or the default).

    Also the target of a search result's "Order" button and of the branch picker (`edit`: in
    the tapped message). A given branch (or the one branch of the patron's library whose name
    `wanted` is) becomes the patron's saved choice; otherwise the saved choice, else the
    patron's own library (`/v3/user`). `work`: the material, when the caller found and
    checked it already (`_material`).
    """
    lang = context.lang
    svc = context.services
    chat_id = context.chat_id
    deadline = Deadline()
    given = branch is not None or wanted is not None
    if branch is None and wanted is None:
        branch = normalise_branch(account.pickup_branch)
    try:
        work, status, available = await asyncio.gather(
            _work(context, pid, deadline) if work is None else _given(work),
            deadline.run(svc.library.user(account.token)),
            _availability(context, account, pid, deadline),
        )
    except LibraryError as exc:
        await answer_library_error(update, context, exc, card=account)
        return
    home = normalise_branch(status.agency) if branch is None else None
    refusal = _refused(work, pid, lang)
    if refusal is not None or work is None or not work.title:
        await send(context.bot, chat_id, refusal or t(lang, "borrower.order.not_found", pid=pid))
        return
    title, creator = work.title, work.creator
    held = await _on_card(context, status, pid, title, deadline)
    if await _ordered_here(context, account, pid, held is not None):
        # The line about what the card has names the title; the next need not again.
        if held:
            text = f"{held}\n{t(lang, 'borrower.order.ordered_before_shown')}"
        else:
            text = t(lang, "borrower.order.ordered_before", title=title)
        text = await _for_card(context, account, text)
        if edit:
            await reply(update, context, text)
        else:
            await send(context.bot, chat_id, text)
        return
    if wanted is not None:
        choices = await svc.branches.pickup_branches(svc.library, home, deadline) if home else None
        named = [(branch_key(b.branch_id), b.branch_name or "") for b in choices or []]
        found = match_branch(wanted, named)
        if len(found) != 1:
            if not choices:
                await send(context.bot, chat_id, t(lang, "borrower.order.no_branches", pid=pid))
                return
            key = "borrower.order.branch_several" if found else "borrower.order.branch_not_found"
            lead = t(lang, key, wanted=shorten(wanted, ECHO_LIMIT))
            fits = [b for b in choices if branch_key(b.branch_id) in found] or choices
            await _picker(update, context, account, pid, title, fits, lead=lead, edit=edit)
            return
        branch = found[0]
    branch = branch or home
    if branch is None:
        await send(context.bot, chat_id, t(lang, "borrower.order.no_branch", pid=pid))
        return
    # Checked before asking, so "Yes" is never offered for a branch the platform will refuse.
    checked = await svc.branches.check(svc.library, branch, deadline)
    if checked.known is False or not checked.pickup:
        if not given:
            await _forget_branch(context, account, branch)
        key = (
            "borrower.order.branch_unknown"
            if not checked.known
            else "borrower.order.branch_no_pickup"
        )
        name = svc.branches.known(branch) or branch
        await send(context.bot, chat_id, t(lang, key, branch=name, pid=pid))
        return
    reason = ((available and available.order_possible_reason) or "").strip().lower()
    if available is not None and available.order_possible is False and reason in ANNOUNCED:
        # The order system's answer for the card's own library: "on its own shelves" holds
        # only for a pick-up there; the other reasons hold wherever it is picked up.
        own = svc.branches.agency_of(branch) == normalise_branch(status.agency)
        if reason != "owned_own_catalogue" or own:
            text = await _announced(context, status, work, pid, reason, deadline)
            await send(context.bot, chat_id, await _for_card(context, account, text))
            return
    if given:
        await svc.store.cards.set_pickup_branch(chat_id, branch, account.number)
    names = await svc.branches.lookup(svc.library, [branch], deadline)
    short = shorten(title, PAYLOAD_TITLE)
    yes, no, change, where = await callback_buttons(
        update,
        context,
        [
            (
                t(lang, "borrower.order.yes"),
                PlaceOrder(pid, branch, short, account.number, account.card_id),
            ),
            (t(lang, "borrower.order.no"), AbortOrder(ButtonId.of(0))),
            (
                t(lang, "borrower.order.change_branch"),
                ChooseBranch(pid, short, account.number, account.card_id),
            ),
            (t(lang, "shelf.button"), WhereIs(pid)),
        ],
    )
    text = t(
        lang,
        "borrower.order.confirm",
        title=title,
        creator=t(lang, "borrower.order.creator", creator=creator) if creator else "",
        branch=names.get(branch, branch),
        pid=pid,
    )
    if available is None:
        text += "\n" + t(lang, "shelf.availability_unknown")
    elif isinstance(available.expected_delivery, dt.date):
        day = format_date(available.expected_delivery, lang, today=context.today)
        text += "\n" + t(lang, "shelf.expected", date=day)
    if held is not None:
        text = f"{held}\n\n{text}"
    text = await _for_card(context, account, text)
    rows = [[yes, no], [change, where]]
    if edit:
        await reply(update, context, text, buttons=rows)
        return
    # A new message: a search result list keeps its other buttons.
    await send(context.bot, chat_id, text, buttons=rows)


# --- the pick-up branch picker ----------------------------------------------------------------


async def branch_callback(update: Update, context: Context) -> None:
    """ "Change pick-up branch" shows the picker; a branch in it saves that branch and asks
    again about the order, in the same message."""
    lang = context.lang
    ref = await resolve_callback(update, context)
    if ref is None:
        return
    tapped = decode(ref.payload, PickBranch, ChooseBranch)
    if not isinstance(tapped, PickBranch | ChooseBranch):
        await send(context.bot, context.chat_id, t(lang, "common.stale_button"))
        return
    account = await require_card(context, tapped=tapped)
    if account is None:
        return
    if isinstance(tapped, PickBranch):
        await prepare_order(
            update, context, account, pid=tapped.pid, branch=tapped.branch, edit=True
        )
        return
    svc = context.services
    deadline = Deadline()
    try:
        home = await _home_branch(context, account, deadline)
    except LibraryError as exc:
        await answer_library_error(update, context, exc, edit=False, card=account)
        return
    choices = await svc.branches.pickup_branches(svc.library, home, deadline) if home else None
    if not choices:
        await send(
            context.bot, context.chat_id, t(lang, "borrower.order.no_branches", pid=tapped.pid)
        )
        return
    await _picker(update, context, account, tapped.pid, tapped.title, choices, edit=True)


async def _picker(
    update: Update,
    context: Context,
    account: Card,
    pid: str,
    title: str,
    branches: Sequence[Branch],
    *,
    lead: str | None = None,
    edit: bool = False,
) -> None:
    """The branches to pick up `pid` at, one button each; the saved one marked ✓."""
    lang = context.lang
    saved = normalise_branch(account.pickup_branch)
    specs: list[tuple[str, Payload]] = []
    for branch in branches[:MAX_BUTTONS]:
        branch_id = branch_key(branch.branch_id)
        name = shorten(branch.branch_name or branch_id, BUTTON_TITLE)
        key = (
            "borrower.order.branch_saved" if branch_id == saved else "borrower.order.branch_button"
        )
        label = plain(t(lang, key, branch=name))
        specs.append((label, PickBranch(pid, branch_id, account.number, account.card_id)))
    buttons = one_per_row(await callback_buttons(update, context, specs))
    # A name typed instead of a tap is the branch too (`typed_branch`).
    if context.chat_data is not None:
        context.chat_data[AWAITING_BRANCH] = (pid, account.number, time.monotonic())
    text = t(lang, "borrower.order.pick_branch", title=title or pid)
    if lead:
        text = f"{lead}\n\n{text}"
    if edit:
        await reply(update, context, text, buttons=buttons)
    else:
        await send(context.bot, context.chat_id, text, buttons=buttons)


async def typed_branch(update: Update, context: Context, text: str) -> bool:
    """A branch's name typed while the picker waits: the order goes on at that branch (or the
    picker narrows to the branches it fits). False when no picker waits or no branch fits, so
    the text is what it would otherwise be (a search)."""
    data = context.application.chat_data.get(context.chat_id)
    waiting = data.get(AWAITING_BRANCH) if data else None
    if data is None or not isinstance(waiting, tuple):
        return False
    pid, card, asked = waiting
    if time.monotonic() - asked >= BRANCH_SECONDS:
        data.pop(AWAITING_BRANCH, None)
        return False
    svc = context.services
    account = await svc.store.cards.get(context.chat_id, card)
    if account is None:
        return False
    deadline = Deadline()
    try:
        home = await _home_branch(context, account, deadline)
    except LibraryError:
        return False  # no branch can be told: the text stays free text
    choices = await svc.branches.pickup_branches(svc.library, home, deadline) if home else None
    found = match_branch(
        text, [(branch_key(b.branch_id), b.branch_name or "") for b in choices or []]
    )
    if not found:
        return False
    data.pop(AWAITING_BRANCH, None)
    if len(found) == 1:
        await prepare_order(update, context, account, pid=pid, branch=found[0])
    else:
        await prepare_order(update, context, account, pid=pid, wanted=text)
    return True


async def _on_card(
    context: Context, status: BorrowerStatus, pid: str, title: str, deadline: Deadline
) -> str | None:
    """What the card has of the title already (on loan, ready for pick-up, on hold), in a
    line, or None. Matched by the record number the status's `titleId` carries."""
    lang = context.lang
    wanted = faust(pid)
    for loan in status.loans:
        if loan.title_id and faust(loan.title_id) == wanted:
            date = format_date(loan.due_date, lang, today=context.today)
            return t(lang, "borrower.order.has_loan", title=title, date=date)
    for hold in status.orders:
        if hold.title_id and faust(hold.title_id) == wanted:
            svc = context.services
            place = hold.pick_up_agency or ""
            names = await svc.branches.lookup(svc.library, [place], deadline)
            branch = names.get(place) or place or "?"
            key = "borrower.order.has_ready" if hold_is_ready(hold) else "borrower.order.has_hold"
            return t(lang, key, title=title, branch=branch)
    return None


async def _ordered_here(context: Context, account: Card, pid: str, shown: bool) -> bool:
    """Whether the card ordered this title through the bot already. A claim whose hold no
    longer shows a day after (`ORDER_GRACE`: the order never went in, or its loan ended) is
    let go, so the title can be ordered again."""
    store = context.services.store
    placed = await store.notices.ordered(account.chat_id, faust(pid), account.number)
    if placed is None:
        return False
    when = placed_time(placed)
    if shown or when is None or dt.datetime.now(dt.UTC) < when + ORDER_GRACE:
        return True
    await store.notices.release_order(account.chat_id, faust(pid), account.number, placed=placed)
    return False


async def _given(work: Work) -> Work | None:
    return work


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


async def _availability(
    context: Context, account: Card, pid: str, deadline: Deadline
) -> Availability | None:
    """`/v3/availability` of `pid` for the card; None when it cannot be read, which never
    blocks an order (the confirmation says so). At most a third of the time left."""
    try:
        async with asyncio.timeout(deadline.remaining() / 3):
            found = await context.services.library.availability(account.token, [pid])
    except (LibraryError, TimeoutError) as exc:
        log.warning("availability not read: %s", type(exc).__name__)
        return None
    first = found[0] if found else None
    return None if first is None or first.unavailable else first


async def _announced(
    context: Context,
    status: BorrowerStatus,
    work: Work,
    pid: str,
    reason: str,
    deadline: Deadline,
) -> str:
    """The order system's announced refusal in words; for a title on the card's library's
    own shelves, where it stands there and the library's catalogue."""
    lang = context.lang
    svc = context.services
    agency = normalise_branch(status.agency) or ""
    library = (await svc.branches.library_name(svc.library, agency, deadline)) if agency else None
    text = t(
        lang, ORDER_REASONS[reason], title=work.title or pid, pid=pid, branch=library or agency
    )
    if reason != "owned_own_catalogue" or not agency:
        return text
    try:
        holdings = await deadline.run(svc.library.holdings_public(agency, [pid]))
    except LibraryError:
        holdings = []
    lines = render_copies([copy for h in holdings for copy in h.holdingsitems], lang)
    if lines:
        text += "\n\n" + "\n".join([t(lang, "shelf.where_it_stands"), *lines])
    url = svc.branches.catalogue(agency)
    if url:
        text += "\n" + t(lang, "borrower.order.catalogue", url=url)
    return text


async def _work(context: Context, pid: str, deadline: Deadline) -> Work | None:
    library = context.services.library

    try:
        works = await deadline.run(library.work_public([pid]))
    except LibraryError as exc:
        raise public_failure(exc) from exc
    for work in works:
        if work.pid == pid:
            return work
    return works[0] if works else None


async def _material(update: Update, context: Context, pid: str, deadline: Deadline) -> Work | None:
    """The material `pid`, found and checked before anything is asked about it (which card,
    which branch, "yes"); None after telling the patron why it cannot be ordered."""
    try:
        work = await _work(context, pid, deadline)
    except LibraryError as exc:
        await answer_library_error(update, context, exc, edit=False)
        return None
    refusal = _refused(work, pid, context.lang)
    if refusal is not None or work is None:
        lang = context.lang
        await send(
            context.bot, context.chat_id, refusal or t(lang, "borrower.order.not_found", pid=pid)
        )
        return None
    return work


def net_only(work: Work) -> bool:
    """A material the library lends only online ("Lydbog (net)", "E-bog (net)"): the order
    system refuses it for pick-up everywhere (`owned_wrong_mediumType`)."""
    return "(net)" in (work.type or "").lower()


def _refused(work: Work | None, pid: str, lang: str) -> str | None:
    """Why `work` cannot be ordered, where the bot can tell before the order system: not
    found, or lent only online; None when it may be ordered."""
    if work is None or not work.title:
        return t(lang, "borrower.order.not_found", pid=pid)
    if net_only(work):
        return t(lang, "borrower.order.wrong_medium", title=work.title)
    return None


async def _home_branch(context: Context, account: Card, deadline: Deadline) -> str | None:
    status = await deadline.run(context.services.library.user(account.token))
    return normalise_branch(status.agency)


async def order_callback(update: Update, context: Context) -> None:
    """The `order` buttons: "yes" places the order once; "no" leaves it."""
    lang = context.lang
    peek = await peek_callback(update, context)
    if peek is not None and decode(peek.payload, AbortOrder) is not None:
        await _abort(update, context)
        return
    placing = decode(peek.payload, PlaceOrder) if peek is not None else None
    # The tapped "yes" is claimed only once the card it is for is known to be connected.
    claimed = await claim_once(update, context, ALREADY, tapped=placing)
    if claimed is None:
        return
    account, ref = claimed
    order = decode(ref.payload, PlaceOrder)
    if order is None:
        await send(context.bot, context.chat_id, t(lang, "common.stale_button"))
        return
    await place_order(update, context, account, order)


async def _abort(
    update: Update,
    context: Context,
) -> None:
    lang = context.lang
    ref = await resolve_callback(update, context)
    abort = decode(ref.payload, AbortOrder) if ref is not None else None
    if abort is None:
        return
    confirm = await context.services.store.callbacks.callback(abort.abort, context.chat_id)
    done = confirm is not None and confirm.used_at is not None
    await reply(
        update, context, t(lang, "borrower.order.already" if done else "borrower.order.aborted")
    )


async def place_order(update: Update, context: Context, account: Card, order: PlaceOrder) -> None:
    """One `/v3/order` call, its answer or refusal told in plain words."""
    lang = context.lang
    svc = context.services
    pid, branch = order.pid, order.branch
    title = order.title or pid
    branch_name = svc.branches.known(branch) or branch
    chat_id, record = context.chat_id, faust(pid)
    # The title is claimed for this card before the order is sent: two confirmations of one
    # material (a search's and /order's, or an old and a new) place one order.
    placed = placed_text(dt.datetime.now(dt.UTC))
    if not await svc.store.notices.claim_order(chat_id, record, placed, account.number):
        already = t(lang, "borrower.order.ordered_before", title=title)
        await reply(update, context, await _for_card(context, account, already))
        return
    try:
        result = await Deadline().run(svc.library.order(account.token, [pid], branch))
    except LibraryError as exc:
        if not _maybe_placed(exc):
            await svc.store.notices.release_order(chat_id, record, account.number, placed=placed)
        if isinstance(exc, ServiceUnavailable):
            await check_soon(
                svc.store, svc.settings, context.chat_id, account.number
            )  # it may have gone in
        if (exc.code or "").strip().lower() == "unknown_pickupagency":
            # Do not keep offering a branch the platform does not know.
            await _forget_branch(context, account, branch)
        text = _refusal(exc, lang, title=title, pid=pid, branch=branch, branch_name=branch_name)
        if text is not None and (exc.code or "").strip().lower() == "owned_own_catalogue":
            url = exc.url or svc.branches.catalogue(branch)
            if url and url.startswith(("https://", "http://")):
                text = f"{text}\n{t(lang, 'borrower.order.catalogue', url=url)}"
        if text is None and isinstance(exc, ServiceUnavailable):
            # No readable answer: the order may have gone in. One message says what to check
            # and when to order again (a "try again" beside it would contradict it).
            text = t(lang, "borrower.order.maybe", title=title)
        if text is not None:
            await reply(update, context, text)
            return
        await answer_library_error(update, context, exc, card=account)
        return
    log.info("order placed for chat %s", context.chat_id)
    await check_soon(
        svc.store, svc.settings, context.chat_id, account.number
    )  # a new hold: checked daily
    await watch_order(svc.store, svc.settings, context.chat_id, pid, account.number)
    # Ordered: the card's waits for it on a shelf end.
    await svc.store.watches.end_titles(context.chat_id, account.number, [pid])
    if result.ors_id:
        text = t(
            lang, "borrower.order.placed", title=title, branch=branch_name, ors_id=result.ors_id
        )
    else:
        text = t(lang, "borrower.order.placed_no_id", title=title, branch=branch_name)
    await reply(update, context, await _for_card(context, account, text))


async def _for_card(context: Context, account: Card, text: str) -> str:
    """`text` headed by the card's name when the chat has several: whose order it is."""
    lang = context.lang
    cards = await context.services.store.cards.of_chat(account.chat_id)
    return f"{card_heading(account, lang)}\n{text}" if len(cards) > 1 else text


async def _forget_branch(context: Context, account: Card, branch: str) -> None:
    if normalise_branch(account.pickup_branch) == branch:
        await context.services.store.cards.set_pickup_branch(account.chat_id, None, account.number)


# The order system's reasons (OpenOrder, passed on by the platform in `error`) -> the text that
# says what it means and what the patron can do next. See production-notes.md.
ORDER_REASONS: dict[str, str] = {
    "owned_own_catalogue": "borrower.order.owned",
    "owned_wrong_mediumtype": "borrower.order.wrong_medium",
    "not_owned_wrong_ill_mediumtype": "borrower.order.wrong_medium",
    "not_owned_no_ill_loc": "borrower.order.no_lender",
    "unknown_pickupagency": "borrower.order.unknown_branch",
    "unknown_user": "borrower.order.unknown_user",
    "invalid_order": "borrower.order.invalid",
    "ors_error": "borrower.order.ors_error",
    "service_unavailable": "borrower.order.system_down",
    "authentication_error": "borrower.order.auth_error",
    "order not placed": "borrower.order.not_placed",
    # Reasons that mean the order was accepted, should one ever come as an error.
    "owned_accepted": "borrower.order.accepted",
    "not_owned_ill_loc": "borrower.order.accepted",
}


def _maybe_placed(exc: LibraryError) -> bool:
    """Whether the order may have gone in despite `exc`: no readable answer, or a reason that
    means it was accepted. Only then is the title's claim kept."""
    if isinstance(exc, ServiceUnavailable) and exc.status is None:
        return True
    return ORDER_REASONS.get((exc.code or "").strip().lower()) == "borrower.order.accepted"


def _refusal(
    exc: LibraryError,
    lang: str,
    *,
    title: str,
    pid: str,
    branch: str = "",
    branch_name: str = "",
) -> str | None:
    """The sentence for a refusal the patron can act on; None for the generic failures (a
    request the platform refused as malformed among them: the bot's fault, not a refusal)."""
    if isinstance(exc, ClientFault):
        return None
    code = (exc.code or "").strip()
    lowered = code.lower()
    key = ORDER_REASONS.get(lowered)
    if key is not None:
        return t(
            lang,
            key,
            title=title,
            pid=pid,
            branch=branch_name or branch,
            code=shorten(code, ECHO_LIMIT),
        )
    if "pickupbranch" in lowered.replace(" ", "").replace("_", ""):
        return t(lang, "borrower.order.missing_branch", pid=pid)
    if isinstance(exc, Refused | BadRequest):
        if not code:
            return t(lang, "borrower.order.not_placed", title=title)
        return t(lang, "borrower.order.refused", title=title, code=shorten(code, ECHO_LIMIT))
    return None


# A branch picker waiting for a typed name instead of a tap (`chat_data`): (pid, card, when).
AWAITING_BRANCH = "order.awaiting_branch"
BRANCH_SECONDS = 600.0


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("order", order_command),
        CallbackQueryHandler(order_callback, pattern=rf"^{PlaceOrder.ACTION}:"),
        CallbackQueryHandler(branch_callback, pattern=rf"^{PickBranch.ACTION}:"),
        CallbackQueryHandler(card_tapped, pattern=rf"^{OrderCard.ACTION}:"),
    ]
