"""/events and /news: what is on at the library of the chat's card, and its latest news.

The card's library is the `agency` of `/v3/user`; it goes to `/v3/events` and `/v3/news` as one
string, as the platform's own spec types it (a list there is a 400). The platform passes the
library site's items through in the site's order, so coming events are picked and sorted here.
Each answer is one message.

With several cards in the chat, each library of the cards gets a message of its own, headed by
the names of the cards at it (asked once per library, with the first of its cards' tokens);
when every card is at one library, the answer is the one message of a single card.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from telegram import Update
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from bot.library.deadline import Deadline
from bot.library.errors import LibraryError
from bot.rules.isil import normalise_branch
from bot.telegram.buttons import LibraryHours, decode
from bot.telegram.cards import require_card, require_cards
from bot.telegram.context import Context
from bot.telegram.failures import answer_library_error, error_text
from bot.telegram.handlers.cardlists import (
    CardStatus,
    chat_cards,
    fetch_cards,
    heading,
)
from bot.telegram.handlers.common import borrower_status
from bot.telegram.keyboards import callback_buttons, resolve_callback
from bot.telegram.replies import plain, reply, send
from bot.texts import t
from bot.texts.formatting import split_messages
from bot.texts.whatson import (
    coming_events,
    latest_news,
    render_event,
    render_hours,
    render_news,
)

if TYPE_CHECKING:
    from bot.actions.vocabulary import Card
    from bot.library.models import Event, NewsItem

# Items asked for: the site's order is not by date, so more events than are shown.
EVENTS_ASKED = 30
EVENTS_SHOWN = 8
NEWS_ASKED = 10
NEWS_SHOWN = 5
# Seconds the library's site address may take to look up (`/v3/libraries`, cached).
SITE_BUDGET = 3.0
# The platform's 500 for a library whose site it does not reach (serviceprovider `ddbcms.js`):
# an answer about the library, not an outage to try again after.
NO_CONTENT_SERVICE = "ddbcms-api not available"


def one_message(entries: Sequence[str], *, header: str, footer: str = "") -> tuple[str, int]:
    """As many entries, in order, as fit one message with the header and footer; the message
    and how many entries it holds."""
    count = len(entries)
    while count > 0:
        messages = split_messages(entries[:count], header=header, footer=footer)
        if len(messages) == 1:
            return messages[0], count
        count -= 1
    return split_messages([], header=header, footer=footer)[0], 0


Fetch = Callable[["Card", str | None], Awaitable[Sequence[Any]]]
# What one library of the chat's cards gave: the cards' names, the items or the text saying
# why there are none, and the library (ISIL), when known.
Found = tuple[list[str], Sequence[Any] | str, str | None]


async def libraries_items(
    update: Update, context: Context, fetch: Fetch
) -> tuple[str, list[Found]] | None:
    """The language and what `fetch` found at each library of the chat's cards (one entry with
    no names for a single card, or cards all at one library); None once answered."""
    if len(await chat_cards(update, context)) <= 1:
        single = await library_items(update, context, fetch)
        return None if single is None else (single[0], [([], single[1], single[2])])
    chat, lang = context.chat, context.lang
    cards = await require_cards(context)
    if not cards:
        return None
    deadline = Deadline()
    statuses = await fetch_cards(context, cards, deadline, chat)
    libraries: dict[str, list[CardStatus]] = {}
    found: list[Found] = []
    for card in statuses:
        if card.status is None:
            found.append(([card.name], card.trouble(lang) or "", None))
            continue
        libraries.setdefault(normalise_branch(card.status.agency) or "", []).append(card)

    async def one(agency: str, at: list[CardStatus]) -> Found:
        names = [card.name for card in at]
        try:
            items = await deadline.run(fetch(at[0].card, agency or None))
        except LibraryError as exc:
            if exc.status == 500 and NO_CONTENT_SERVICE in (exc.code or "").lower():
                return names, t(lang, "whatson.no_content"), None
            return names, error_text(lang, exc), None
        return names, items, agency or None

    asked = await asyncio.gather(*(one(agency, at) for agency, at in libraries.items()))
    if len(asked) == 1 and not found:
        return lang, [([], asked[0][1], asked[0][2])]
    return lang, [*asked, *found]


async def answer_libraries(
    update: Update,
    context: Context,
    found: Sequence[Found],
    render: Callable[[Sequence[Any]], str],
    site_key: str,
) -> None:
    """One message per library: `render` of its items, or why there are none, under the names
    of the cards at it (when there are several libraries); with the library's site (the items
    carry no link of their own; `site_key` words it) and a button for its opening hours."""
    lang = context.lang
    svc = context.services
    for names, items, agency in found:
        text = items if isinstance(items, str) else render(items)
        buttons = None
        if agency and not isinstance(items, str):
            await svc.branches.lookup(svc.library, [agency], Deadline(SITE_BUDGET))
            site = svc.branches.website(agency)
            if site:
                text += "\n\n" + t(lang, site_key, url=site)
            label = plain(t(lang, "whatson.hours.button"))
            buttons = [await callback_buttons(update, context, [(label, LibraryHours(agency))])]
        if names:
            text = f"{heading(lang, ', '.join(names))}\n{text}"
        await reply(update, context, text, buttons=buttons)


async def library_items(
    update: Update, context: Context, fetch: Fetch
) -> tuple[str, Sequence[Any], str | None] | None:
    """The language and what `fetch` found for the card's library; None once answered."""
    lang = context.lang
    card = await require_card(context)
    if card is None:
        return None
    deadline = Deadline()
    status = await borrower_status(update, context, card, deadline)
    if status is None:
        return None
    agency = normalise_branch(status.agency)
    try:
        items = await deadline.run(fetch(card, agency))
    except LibraryError as exc:
        if exc.status == 500 and NO_CONTENT_SERVICE in (exc.code or "").lower():
            await reply(update, context, t(lang, "whatson.no_content"))
        else:
            await answer_library_error(update, context, exc)
        return None
    return lang, items, agency


def _now(context: Context) -> dt.datetime:
    return dt.datetime.now(context.services.settings.timezone)


async def events_command(update: Update, context: Context) -> None:
    library = context.services.library

    async def fetch(card: Card, agency: str | None) -> list[Event]:
        return await library.events(card.token, agency, limit=EVENTS_ASKED)

    found = await libraries_items(update, context, fetch)
    if found is None:
        return
    lang, libraries = found
    now = _now(context)

    def render(events: Sequence[Event]) -> str:
        coming = coming_events(events, now)[:EVENTS_SHOWN]
        if not coming:
            return t(lang, "whatson.events.none")
        entries = [render_event(event, lang, now.date()) for event in coming]
        return one_message(entries, header=t(lang, "whatson.events.header"))[0]

    await answer_libraries(update, context, libraries, render, "whatson.site")


async def news_command(update: Update, context: Context) -> None:
    library = context.services.library

    async def fetch(card: Card, agency: str | None) -> list[NewsItem]:
        return await library.news(card.token, agency, limit=NEWS_ASKED)

    found = await libraries_items(update, context, fetch)
    if found is None:
        return
    lang, libraries = found
    today = _now(context).date()

    def render(items: Sequence[NewsItem]) -> str:
        latest = latest_news(items)[:NEWS_SHOWN]
        if not latest:
            return t(lang, "whatson.news.none")
        entries = [render_news(item, lang, today) for item in latest]
        return one_message(entries, header=t(lang, "whatson.news.header"))[0]

    await answer_libraries(update, context, libraries, render, "whatson.site_news")


async def hours_callback(update: Update, context: Context) -> None:
    """ "🕘 Opening hours": the library's dated hours for the coming week (`/v3/library`), as a
    new message, so the events stay in the chat."""
    ref = await resolve_callback(update, context, asks=True)
    if ref is None:
        return
    tapped = decode(ref.payload, LibraryHours)
    lang = context.lang
    if tapped is None:
        await send(context.bot, context.chat_id, t(lang, "common.stale_button"))
        return
    try:
        pages = await Deadline().run(context.services.library.library_public(tapped.agency))
    except LibraryError as exc:
        await send(context.bot, context.chat_id, error_text(lang, exc))
        return
    for text in render_hours(pages, lang, _now(context).date()):
        await send(context.bot, context.chat_id, text)


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("events", events_command),
        CommandHandler("news", news_command),
        CallbackQueryHandler(hours_callback, pattern=rf"^{LibraryHours.ACTION}:"),
    ]
