"""◀ ▶ and the card buttons under a long list: the list read fresh, the asked page (or card)
shown in the same message. The stored `ListPage` says which list and which view."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from telegram import Update
from telegram.ext import BaseHandler, CallbackQueryHandler

from bot.actions import cards as card_actions
from bot.telegram.buttons import ListPage, decode
from bot.telegram.context import Context
from bot.telegram.handlers.borrower import list_debt, list_holds, list_loans
from bot.telegram.handlers.renew import list_renew
from bot.telegram.keyboards import resolve_callback

# A sectioned list's kind (`ListPage.kind`) -> what shows a page of it.
SECTIONED = {"loans": list_loans, "holds": list_holds, "debt": list_debt}


async def _by_identity(context: Context, listing: ListPage) -> ListPage:
    """A view of one card names it by identity: the number that card has now, or every card
    once it is gone (its number may be another person's card by now)."""
    if listing.number is None:
        return listing
    # A lapsed card's view too: the list says its login lapsed, with its login button.
    cards = await card_actions.of_chat(context.services, context.chat_id, lapsed=True)
    number = next((c.number for c in cards if listing.cid and c.card_id == listing.cid), None)
    return replace(listing, number=number)


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [CallbackQueryHandler(page_callback, pattern=rf"^{ListPage.ACTION}:")]


async def page_callback(update: Update, context: Context) -> None:
    ref = await resolve_callback(update, context)
    listing = decode(ref.payload, ListPage) if ref is not None else None
    if ref is None or listing is None:
        return
    query = update.callback_query
    assert query is not None
    try:
        page = int(str(query.data).split(":", 2)[2])
    except (IndexError, ValueError):
        page = 0
    listing = await _by_identity(context, listing)
    if listing.kind in SECTIONED:
        await SECTIONED[listing.kind](update, context, listing.number, page, listing.views, ref.id)
    elif listing.kind == "renew":
        await list_renew(update, context, listing, page, ref.id)
