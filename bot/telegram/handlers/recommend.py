"""/recommend: works like the patron's recent loans (`/v3/recommend`), each with an Order button.

The liked works are the loans' `titleId`s (the national bibliography's record ids, so
`870970-basis:<titleId>`), the most recently borrowed first: the loans carry no loan date, so
the latest due date stands for it. Everything on loan or on hold is passed as `ignore`. The
recommender answers only pids; `/v3/work` gives their titles. An Order button leads to the same
confirmation as `/order <material id>` (the handler of a search result's button).

With several cards in the chat, /recommend first asks whose loans to go by (a family's tastes
differ): one button per card; the suggestions then come from that card's loans, and their Order
buttons order with that card.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from telegram import Update
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from bot.actions.ordering import net_only
from bot.library.deadline import Deadline
from bot.library.errors import LibraryError
from bot.telegram.buttons import OrderFound, Payload, RecommendFor, decode
from bot.telegram.cards import require_card
from bot.telegram.context import Context
from bot.telegram.failures import answer_library_error
from bot.telegram.handlers.cardlists import (
    CARDS_PER_ROW,
    chat_cards,
    fetch_cards,
)
from bot.telegram.handlers.common import borrower_status
from bot.telegram.handlers.order import valid_pid
from bot.telegram.handlers.whatson import one_message
from bot.telegram.keyboards import (
    BUTTON_TITLE,
    callback_buttons,
    in_pairs,
    order_and_where,
    resolve_callback,
)
from bot.telegram.replies import plain, reply, send
from bot.texts import t
from bot.texts.cards import card_name
from bot.texts.formatting import shorten
from bot.texts.render import render_work

if TYPE_CHECKING:
    from bot.actions.vocabulary import Card
    from bot.library.models import BorrowerStatus, Loan, Work

# The national bibliography, whose record ids the loans' and holds' `titleId`s are.
NATIONAL_BIBLIOGRAPHY = "870970-basis"
TITLE_ID = re.compile(r"^\d{6,12}$")
LIKES = 10
# Bounds the query string for a patron with very many loans.
IGNORES = 100
# Asked for more than shown: a suggestion /v3/work does not know is left out.
ASKED = 15
SHOWN = 10


def pid_of(title_id: str | None) -> str | None:
    """`870970-basis:<titleId>` for a record id of the national bibliography, else None."""
    text = (title_id or "").strip()
    return f"{NATIONAL_BIBLIOGRAPHY}:{text}" if TITLE_ID.match(text) else None


def _recent_first(loan: Loan) -> tuple[int, int]:
    due = loan.due_date
    return (0, -due.toordinal()) if isinstance(due, dt.date) else (1, 0)


def likes_and_ignores(status: BorrowerStatus) -> tuple[list[str], list[str]]:
    """The pids to find works like (recent loans, else holds) and those to leave out."""
    loans = sorted(status.loans, key=_recent_first)
    liked = [loan.title_id for loan in loans] or [hold.title_id for hold in status.orders]
    everything = [loan.title_id for loan in loans] + [hold.title_id for hold in status.orders]
    return _pids(liked)[:LIKES], _pids(everything)[:IGNORES]


def _pids(title_ids: Sequence[str | None]) -> list[str]:
    return list(dict.fromkeys(p for p in map(pid_of, title_ids) if p))


async def recommend_command(update: Update, context: Context) -> None:
    cards = await chat_cards(update, context)
    if len(cards) > 1:
        lang = context.lang
        specs: list[tuple[str, Payload]] = [
            (plain(card_name(card, lang)), RecommendFor(card.number, card.card_id))
            for card in cards
        ]
        rows = await callback_buttons(update, context, specs)
        buttons = [rows[n : n + CARDS_PER_ROW] for n in range(0, len(rows), CARDS_PER_ROW)]
        await reply(update, context, t(lang, "lists.recommend.which"), buttons=buttons)
        return
    lang = context.lang
    card = await require_card(context)
    if card is None:
        return
    deadline = Deadline()
    status = await borrower_status(update, context, card, deadline)
    if status is None:
        return
    await recommend_for(update, context, card, status, deadline)


async def card_callback(update: Update, context: Context) -> None:
    """A card of "whose loans?": the suggestions from that card's loans, in the same message."""
    ref = await resolve_callback(update, context)
    if ref is None:
        return
    lang = context.lang
    chosen = decode(ref.payload, RecommendFor)
    if chosen is None:
        await send(context.bot, context.chat_id, t(lang, "common.stale_button"))
        return
    card = await require_card(context, tapped=chosen)
    if card is None:
        return
    deadline = Deadline()
    [read] = await fetch_cards(context, [card], deadline)
    if read.status is None:
        await reply(update, context, read.trouble(lang) or t(lang, "common.error"))
        return
    await recommend_for(update, context, card, read.status, deadline)


async def recommend_for(
    update: Update,
    context: Context,
    card: Card,
    status: BorrowerStatus,
    deadline: Deadline,
) -> None:
    """Suggestions from `status`'s loans, asked with `card`'s token; their Order buttons
    order with `card`, named by its identity even in a one-card chat, so a button outliving
    the card says so rather than order on a card logged in since."""
    lang = context.lang
    likes, ignores = likes_and_ignores(status)
    if not likes:
        # Loans or holds with no record id of the national bibliography give nothing to like.
        nothing = not status.loans and not status.orders
        key = "whatson.recommend.no_loans" if nothing else "whatson.recommend.none"
        await reply(update, context, t(lang, key))
        return
    library = context.services.library
    try:
        found = await deadline.run(
            library.recommend(card.token, likes, ignore=ignores, limit=ASKED)
        )
        pids = list(dict.fromkeys(r.pid for r in found if valid_pid(r.pid)))
        works = await deadline.run(library.work(card.token, pids)) if pids else []
    except LibraryError as exc:
        await answer_library_error(update, context, exc, card=card)
        return
    by_pid: dict[str, Work] = {w.pid: w for w in works if w.pid and w.title}
    shown = [by_pid[p] for p in pids if p in by_pid][:SHOWN]
    if not shown:
        await reply(update, context, t(lang, "whatson.recommend.none"))
        return
    entries = [f"{n}. {render_work(work, lang)}" for n, work in enumerate(shown, start=1)]
    text, count = one_message(
        entries,
        header=t(lang, "whatson.recommend.header"),
        footer=t(lang, "whatson.recommend.footer"),
    )
    specs = []
    for number, work in enumerate(shown[:count], start=1):
        if net_only(work):
            continue  # lent only online: no "Order" to be refused after
        title = shorten(work.title or t(lang, "render.untitled"), BUTTON_TITLE)
        # A search result's "Order" (`handlers.search`): the confirmation of `/order <pid>`.
        order = OrderFound(work.pid or "", card.number, card.card_id)
        specs += order_and_where(lang, number, title, order, work.pid or "")
    rows = in_pairs(await callback_buttons(update, context, specs))
    await reply(update, context, text, buttons=rows)


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("recommend", recommend_command),
        CallbackQueryHandler(card_callback, pattern=rf"^{RecommendFor.ACTION}:"),
    ]
