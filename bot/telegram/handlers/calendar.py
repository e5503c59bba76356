"""`/calendar`: a private subscription address for the patron's due dates and pick-up days.

`/calendar` makes the address (with the status just fetched in it), `/calendar new` replaces
it (the old one stops working) and `/calendar off` closes it. Only a hash of the secret is
stored, so the bot cannot show an address again: a patron who lost it makes a new one.

Subscribing is one tap: the Bot API takes only HTTP(S) and tg:// URLs in buttons, so the
`webcal://` address (which calendar applications subscribe to) is a link in the text, and the
button opens the https address.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from telegram import Update
from telegram.ext import BaseHandler, CommandHandler

from bot.actions import calendar as calendar_feed
from bot.actions import cards as card_actions
from bot.actions import chats
from bot.actions.vocabulary import Card
from bot.library.deadline import Deadline
from bot.library.errors import LibraryError
from bot.library.models import BorrowerStatus
from bot.rules import calendar
from bot.services import Services
from bot.telegram.context import Context
from bot.telegram.handlers.common import command_status
from bot.telegram.replies import reply, url_button
from bot.texts import t

# At most this long for branch names before making the address (they are decoration).
BRANCH_NAMES_BUDGET = 3.0


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [CommandHandler("calendar", calendar_command)]


async def calendar_command(update: Update, context: Context) -> None:
    svc = context.services
    chat_id = context.chat_id
    words = [word.lower() for word in context.args or []]
    if words == ["off"]:
        lang = context.lang
        closed = await calendar_feed.drop(svc, chat_id)
        await reply(update, context, t(lang, "calendar.off" if closed else "calendar.none"))
        return
    if words not in ([], ["new"]):
        await reply(update, context, t(context.lang, "calendar.unknown"))
        return
    if not svc.settings.PUBLIC_URL:
        await reply(update, context, t(context.lang, "calendar.no_public_url"))
        return
    if not words and (await chats.settings(svc, chat_id)).has_calendar:
        await reply(update, context, t(context.lang, "calendar.exists"))
        return
    started = await command_status(update, context)
    if started is None:
        return
    lang, status = started
    statuses = await _statuses(svc, await card_actions.of_chat(svc, chat_id), status)
    found = {number: calendar.entries(seen) for number, seen in statuses.items()}
    # The feed names pick-up branches from what the process remembers (it never calls out).
    branches = [entry.branch for entries in found.values() for entry in entries if entry.branch]
    if branches:
        await svc.branches.lookup(svc.library, branches, Deadline(BRANCH_NAMES_BUDGET))
    entries = {number: calendar.dumps(seen) for number, seen in found.items()}
    secret = await calendar_feed.create(svc, chat_id, entries)
    url = f"{svc.settings.PUBLIC_URL.rstrip('/')}/calendar/{secret}.ics"
    text = (
        t(lang, "calendar.made", url=url)
        + "\n\n"
        + t(lang, "calendar.subscribe", webcal=webcal(url))
    )
    button = url_button(t(lang, "calendar.open_button"), url)
    await reply(update, context, text, buttons=button)


def webcal(url: str) -> str:
    """The feed's address as calendar applications subscribe to it: `webcal://`, the same
    host and path."""
    return urlunsplit(urlsplit(url)._replace(scheme="webcal"))


async def _statuses(
    svc: Services, cards: list[Card], first: BorrowerStatus
) -> dict[int, BorrowerStatus]:
    """Every card's status for a new feed: the first card's was just fetched (and its failures
    told); the others' are fetched side by side, and one that fails is left for the next
    sweep or command to fill in."""

    async def one(card: Card) -> tuple[int, BorrowerStatus | None]:
        try:
            return card.number, await svc.library.user(card.token)
        except LibraryError:
            return card.number, None

    found = {cards[0].number: first} if cards else {}
    for number, status in await asyncio.gather(*(one(card) for card in cards[1:])):
        if status is not None:
            found[number] = status
    return found
