"""`/calendar`: a private subscription address for the patron's due dates and pick-up days.

`/calendar` makes the address (with the status just fetched in it), `/calendar new` replaces
it (the old one stops working) and `/calendar off` closes it. Only a hash of the secret is
stored, so the bot cannot show an address again: a patron who lost it makes a new one.
"""

from __future__ import annotations

import asyncio
from typing import Any

from telegram import Update
from telegram.ext import BaseHandler, CommandHandler

from bot.library.errors import LibraryError
from bot.library.models import BorrowerStatus
from bot.rules import calendar
from bot.services import Services
from bot.telegram.context import Context
from bot.telegram.handlers.common import command_status
from bot.telegram.replies import reply
from bot.texts import t
from storage.store import Card


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [CommandHandler("calendar", calendar_command)]


async def calendar_command(update: Update, context: Context) -> None:
    svc = context.services
    chat_id = context.chat_id
    words = [word.lower() for word in context.args or []]
    if words == ["off"]:
        lang = context.lang
        closed = await svc.store.calendar.drop(chat_id)
        await reply(update, context, t(lang, "calendar.off" if closed else "calendar.none"))
        return
    if words not in ([], ["new"]):
        await reply(update, context, t(context.lang, "calendar.unknown"))
        return
    if not svc.settings.PUBLIC_URL:
        await reply(update, context, t(context.lang, "calendar.no_public_url"))
        return
    if not words and (await svc.store.chats.chat(chat_id)).has_calendar:
        await reply(update, context, t(context.lang, "calendar.exists"))
        return
    started = await command_status(update, context)
    if started is None:
        return
    lang, status = started
    statuses = await _statuses(svc, await svc.store.cards.of_chat(chat_id), status)
    entries = {card: calendar.dumps(calendar.entries(seen)) for card, seen in statuses.items()}
    secret = await svc.store.calendar.create(chat_id, entries)
    url = f"{svc.settings.PUBLIC_URL.rstrip('/')}/calendar/{secret}.ics"
    await reply(update, context, t(lang, "calendar.made", url=url))


async def _statuses(
    svc: Services, cards: list[Card], first: BorrowerStatus
) -> dict[int, BorrowerStatus]:
    """Every card's status for a new feed: the first card's was just fetched (and its failures
    told); the others' are fetched side by side, and one that fails is left for the next
    sweep or command to fill in."""

    async def one(account: Card) -> tuple[int, BorrowerStatus | None]:
        try:
            return account.number, await svc.library.user(account.token)
        except LibraryError:
            return account.number, None

    found = {cards[0].number: first} if cards else {}
    for card, status in await asyncio.gather(*(one(account) for account in cards[1:])):
        if status is not None:
            found[card] = status
    return found
