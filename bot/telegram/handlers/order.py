"""/order <material id> [pick-up branch]: show what and where, ask, then place exactly one order.

The confirming button is single-use: its stored callback row is claimed atomically, so a double
tap or two racing updates place one order. Orders are never retried (the client does not retry
them either): an order whose outcome is unknown is reported as such.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from telegram import Update
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from bot.actions import buttons as callbacks
from bot.actions import cards as card_actions
from bot.actions import ordering, outcomes
from bot.library.deadline import Deadline
from bot.library.errors import LibraryError
from bot.rules.isil import branch_key, match_branch, normalise_branch
from bot.telegram import orders
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
from bot.telegram.cards import for_card, require_card, require_cards
from bot.telegram.context import Context
from bot.telegram.failures import answer_library_error
from bot.telegram.keyboards import (
    BUTTON_TITLE,
    MAX_BUTTONS,
    PAYLOAD_TITLE,
    callback_buttons,
    one_per_row,
    peek_callback,
    resolve_callback,
    tapped_once,
)
from bot.telegram.replies import plain, reply, send
from bot.texts import t
from bot.texts.cards import card_name
from bot.texts.formatting import format_date, join_and, shorten

if TYPE_CHECKING:
    from bot.actions.vocabulary import Card
    from bot.library.models import Branch, Work

log = logging.getLogger(__name__)

PID = re.compile(r"^\d{6}-[a-z]+:[A-Za-z0-9_\-]+$")
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
        await reply(
            update, context, t(lang, "borrower.order.bad_id", pid=shorten(pid, orders.ECHO_LIMIT))
        )
        return
    branch: str | None = None
    wanted: str | None = None
    if len(args) > 1:
        # A branch id, or a branch's name ("Vesterbro", "islands brygge").
        text = " ".join(args[1:])
        branch = normalise_branch(text)
        if branch is None:
            if len(text) > NAME_LIMIT or not any(char.isalpha() for char in text):
                echo = shorten(text, orders.ECHO_LIMIT)
                await reply(update, context, t(lang, "borrower.order.bad_branch", branch=echo))
                return
            wanted = text
    deadline = Deadline()
    work = await _material(update, context, pid, deadline)
    if work is None:
        return
    if len(cards) > 1:
        # The material and a typed branch id are checked before "which card?": neither
        # depends on the card (a branch's name does: it is looked for at the card's library).
        refused = (
            None
            if branch is None
            else await ordering.branch_refused(context.services, pid, branch, deadline)
        )
        if refused is not None:
            await send(context.bot, context.chat_id, orders.why_not(refused, lang))
            return
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
    sealed = None if wanted is None else callbacks.seal(context.services, wanted, context.chat_id)
    specs: list[tuple[str, Payload]] = [
        (
            plain(t(lang, "cards.order_card", name=card_name(card, lang))),
            OrderCard(pid, card.number, branch, sealed, card.card_id),
        )
        for card in cards
    ]
    buttons = one_per_row(await callback_buttons(update, context, specs))
    text = t(lang, "cards.order_which", title=work.title or pid)
    # A card whose login lapsed is not offered: said, so a parent knows why it is missing.
    every = await card_actions.of_chat(context.services, context.chat_id, lapsed=True)
    lapsed = [card_name(card, lang) for card in every if card.is_lapsed]
    if lapsed:
        names = join_and(lapsed, lang)
        text += "\n" + t(lang, "cards.order_lapsed", count=len(lapsed), names=names)
    await send(context.bot, context.chat_id, text, buttons=buttons)


async def card_tapped(update: Update, context: Context) -> None:
    """A card of "which card?": the order's confirmation for it, in the same message."""
    lang = context.lang
    ref = await resolve_callback(update, context)
    if ref is None:
        return
    tapped = decode(ref.payload, OrderCard)
    wanted = None
    if tapped is not None and tapped.wanted is not None:
        wanted = callbacks.unseal(context.services, tapped.wanted, context.chat_id)
    if tapped is None or not valid_pid(tapped.pid) or (tapped.wanted and wanted is None):
        await send(context.bot, context.chat_id, t(lang, "common.stale_button"))
        return
    card = await require_card(context, tapped=tapped)
    if card is None:
        return
    await prepare_order(
        update,
        context,
        card,
        pid=tapped.pid,
        branch=tapped.branch,
        wanted=wanted,
        edit=True,
    )


async def prepare_order(
    update: Update,
    context: Context,
    card: Card,
    *,
    pid: str,
    branch: str | None = None,
    wanted: str | None = None,
    edit: bool = False,
    work: Work | None = None,
) -> None:
    """Ask for confirmation of ordering `pid` (`ordering.prepare`), to be picked up at `branch`
    or the branch whose name is `wanted` (else the saved one, else the card's library), or say
    why not. Also the target of a search result's "Order" button and of the branch picker
    (`edit`: in the tapped message). `work`: the material, found and checked already."""
    result = await ordering.prepare(
        context.services, card, pid=pid, branch=branch, wanted=wanted, work=work
    )
    lang, chat_id = context.lang, context.chat_id
    if isinstance(result, ordering.Plan):
        await _confirm(update, context, result, edit=edit)
    elif isinstance(result, outcomes.NotRead):
        await answer_library_error(update, context, result.error, card=card)
    elif isinstance(result, ordering.OrderedBefore):
        # The line about what the card has names the title; the next need not again.
        if result.held is not None:
            held = orders.held_line(result.held, result.title, lang, context.today)
            text = f"{held}\n{t(lang, 'borrower.order.ordered_before_shown')}"
        else:
            text = t(lang, _before(result.unsure), title=result.title)
        text = await for_card(context, card, text)
        if edit:
            await reply(update, context, text)
        else:
            await send(context.bot, chat_id, text)
    elif isinstance(result, ordering.PickBranch):
        key = (
            "borrower.order.branch_several" if result.several else "borrower.order.branch_not_found"
        )
        lead = t(lang, key, wanted=shorten(result.wanted, orders.ECHO_LIMIT))
        await _picker(
            update, context, card, pid, result.title, result.branches, lead=lead, edit=edit
        )
    elif isinstance(result, ordering.Announced):
        await send(
            context.bot,
            chat_id,
            await for_card(context, card, orders.announced_text(result, lang)),
        )
    else:
        await send(context.bot, chat_id, orders.why_not(result, lang))


async def _confirm(update: Update, context: Context, plan: ordering.Plan, *, edit: bool) -> None:
    """The order's question: what, where, when it may come, with Yes, No, another branch and
    where it stands."""
    lang = context.lang
    card, pid, branch = plan.card, plan.pid, plan.branch
    title, creator = plan.work.title or pid, plan.work.creator
    short = shorten(title, PAYLOAD_TITLE)
    yes, no, change, where = await callback_buttons(
        update,
        context,
        [
            (
                t(lang, "borrower.order.yes"),
                PlaceOrder(pid, branch, short, card.number, card.card_id),
            ),
            (t(lang, "borrower.order.no"), AbortOrder(ButtonId.of(0))),
            (
                t(lang, "borrower.order.change_branch"),
                ChooseBranch(pid, short, card.number, card.card_id),
            ),
            (t(lang, "shelf.button"), WhereIs(pid)),
        ],
    )
    text = t(
        lang,
        "borrower.order.confirm",
        title=title,
        creator=t(lang, "borrower.order.creator", creator=creator) if creator else "",
        branch=plan.branch_name,
        pid=pid,
    )
    available = plan.available
    if available is None:
        text += "\n" + t(lang, "shelf.availability_unknown")
    elif isinstance(available.expected_delivery, dt.date):
        day = format_date(available.expected_delivery, lang, today=context.today)
        text += "\n" + t(lang, "shelf.expected", date=day)
    if plan.held is not None:
        text = f"{orders.held_line(plan.held, title, lang, context.today)}\n\n{text}"
    text = await for_card(context, card, text)
    rows = [[yes, no], [change, where]]
    if edit:
        await reply(update, context, text, buttons=rows)
        return
    # A new message: a search result list keeps its other buttons.
    await send(context.bot, context.chat_id, text, buttons=rows)


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
    card = await require_card(context, tapped=tapped)
    if card is None:
        return
    if isinstance(tapped, PickBranch):
        await prepare_order(update, context, card, pid=tapped.pid, branch=tapped.branch, edit=True)
        return
    deadline = Deadline()
    try:
        home = await ordering.home_branch(context.services, card, deadline)
    except LibraryError as exc:
        await answer_library_error(update, context, exc, edit=False, card=card)
        return
    choices = await ordering.pickup_branches(context.services, home, deadline)
    if not choices:
        await send(
            context.bot, context.chat_id, t(lang, "borrower.order.no_branches", pid=tapped.pid)
        )
        return
    await _picker(update, context, card, tapped.pid, tapped.title, choices, edit=True)


async def _picker(
    update: Update,
    context: Context,
    card: Card,
    pid: str,
    title: str,
    branches: Sequence[Branch],
    *,
    lead: str | None = None,
    edit: bool = False,
) -> None:
    """The branches to pick up `pid` at, one button each; the saved one marked ✓."""
    lang = context.lang
    saved = normalise_branch(card.pickup_branch)
    specs: list[tuple[str, Payload]] = []
    for branch in branches[:MAX_BUTTONS]:
        branch_id = branch_key(branch.branch_id)
        name = shorten(branch.branch_name or branch_id, BUTTON_TITLE)
        key = (
            "borrower.order.branch_saved" if branch_id == saved else "borrower.order.branch_button"
        )
        label = plain(t(lang, key, branch=name))
        specs.append((label, PickBranch(pid, branch_id, card.number, card.card_id)))
    buttons = one_per_row(await callback_buttons(update, context, specs))
    # A name typed instead of a tap is the branch too (`typed_branch`).
    context.ask(AWAITING_BRANCH, pid, card.card_id)
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
    waiting = context.asked(AWAITING_BRANCH, BRANCH_SECONDS)
    if waiting is None:
        return False
    pid, cid = waiting
    svc = context.services
    # The card the picker was shown for, by identity: not whoever holds its number now.
    card = outcomes.card_for(await card_actions.of_chat(svc, context.chat_id), cid)
    if isinstance(card, outcomes.CardGone | outcomes.LoginLapsed):
        context.answered(AWAITING_BRANCH)
        return False
    deadline = Deadline()
    try:
        home = await ordering.home_branch(svc, card, deadline)
    except LibraryError:
        return False  # no branch can be told: the text stays free text
    choices = await ordering.pickup_branches(svc, home, deadline)
    found = match_branch(text, [(branch_key(b.branch_id), b.branch_name or "") for b in choices])
    if not found:
        return False
    context.answered(AWAITING_BRANCH)
    if len(found) == 1:
        await prepare_order(update, context, card, pid=pid, branch=found[0])
    else:
        await prepare_order(update, context, card, pid=pid, wanted=text)
    return True


async def _material(update: Update, context: Context, pid: str, deadline: Deadline) -> Work | None:
    """The material `pid`, found and checked before anything is asked about it (which card,
    which branch, "yes"); None after telling the patron why it cannot be ordered."""
    try:
        found = await ordering.material(context.services, pid, deadline)
    except LibraryError as exc:
        await answer_library_error(update, context, exc, edit=False)
        return None
    if isinstance(found, ordering.NotOrderable):
        await send(context.bot, context.chat_id, orders.why_not(found, context.lang))
        return None
    return found


async def order_callback(update: Update, context: Context) -> None:
    """The `order` buttons: "yes" places the order once (`ordering.place`); "no" leaves it."""
    lang = context.lang
    peek = await peek_callback(update, context)
    if peek is not None and decode(peek.payload, AbortOrder) is not None:
        await _abort(update, context)
        return
    ref = await tapped_once(update, context, ALREADY)
    if ref is None:
        return
    placing = decode(ref.payload, PlaceOrder)
    if placing is None:
        await send(context.bot, context.chat_id, t(lang, "common.stale_button"))
        return
    svc = context.services
    result = await ordering.place(
        svc, chat_id=context.chat_id, button=ref.id, action=PlaceOrder.ACTION, user_id=ref.user_id
    )
    if isinstance(result, outcomes.Already):
        await send(context.bot, context.chat_id, t(lang, ALREADY))
    elif isinstance(result, outcomes.CardGone) or (
        isinstance(result, outcomes.LoginLapsed) and result.error is None
    ):
        await require_card(context, tapped=placing)  # the chat's words for a card gone or lapsed
    elif isinstance(result, outcomes.LoginLapsed):
        assert result.error is not None
        await answer_library_error(update, context, result.error, card=result.card)
    elif isinstance(result, ordering.PlacedBefore):
        already = t(lang, _before(result.unsure), title=result.title)
        await reply(update, context, await for_card(context, result.card, already))
    elif isinstance(result, ordering.OrderFailed):
        await _tell_failed(update, context, result)
    else:
        await _tell_placed(update, context, result)


def _before(unsure: bool) -> str:
    """The text of a title the card ordered through the bot already: placed, or its answer
    lost (it is not ordered again until it has had its day to show up)."""
    return "borrower.order.unsure_before" if unsure else "borrower.order.ordered_before"


async def _abort(
    update: Update,
    context: Context,
) -> None:
    lang = context.lang
    ref = await resolve_callback(update, context)
    abort = decode(ref.payload, AbortOrder) if ref is not None else None
    if abort is None:
        return
    confirm = await callbacks.stored(context.services, abort.abort, context.chat_id)
    done = confirm is not None and confirm.used_at is not None
    await reply(
        update, context, t(lang, "borrower.order.already" if done else "borrower.order.aborted")
    )


async def _tell_failed(update: Update, context: Context, failed: ordering.OrderFailed) -> None:
    """An order not placed (or not known to be), in plain words; else the generic failure."""
    catalogue = context.services.branches.catalogue(failed.branch)
    text = orders.failed_text(failed, context.lang, catalogue)
    if text is not None:
        await reply(update, context, await for_card(context, failed.card, text))
        return
    await answer_library_error(update, context, failed.error, card=failed.card)


async def _tell_placed(update: Update, context: Context, placed: ordering.Placed) -> None:
    text = orders.placed_text(placed, context.lang)
    await reply(update, context, await for_card(context, placed.card, text))


# A branch picker waiting for a typed name instead of a tap (`chat_data`): (pid, the card's
# identity, when).
AWAITING_BRANCH = "order.awaiting_branch"
BRANCH_SECONDS = 600.0


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("order", order_command),
        CallbackQueryHandler(order_callback, pattern=rf"^{PlaceOrder.ACTION}:"),
        CallbackQueryHandler(branch_callback, pattern=rf"^{PickBranch.ACTION}:"),
        CallbackQueryHandler(card_tapped, pattern=rf"^{OrderCard.ACTION}:"),
    ]
