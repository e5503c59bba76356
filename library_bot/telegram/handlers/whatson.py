"""/events and /news: what is on at the library of the chat's card, and its latest news.

The card's library is the `agency` of `/v3/user`; it goes to `/v3/events` and `/v3/news` as the
JSON array of strings of spec 9.6. The platform passes the library site's items through in the
site's order, so coming events are picked and sorted here. Each answer is one message.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from telegram import Update
from telegram.ext import BaseHandler, CommandHandler

from library_bot.library.deadline import Deadline
from library_bot.library.errors import LibraryError
from library_bot.rules.isil import normalise_branch
from library_bot.services import services
from library_bot.telegram.handlers.common import borrower_status
from library_bot.telegram.ui import (
    Context,
    answer_library_error,
    chat_and_lang,
    reply,
    require_account,
)
from library_bot.texts import t
from library_bot.texts.formatting import split_messages
from library_bot.texts.whatson import coming_events, latest_news, render_event, render_news

if TYPE_CHECKING:
    from library_bot.library.models import Event, NewsItem
    from library_bot.storage.store import Account

# Items asked for: the site's order is not by date, so more events than are shown.
EVENTS_ASKED = 30
EVENTS_SHOWN = 8
NEWS_ASKED = 10
NEWS_SHOWN = 5
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


async def library_items(
    update: Update,
    context: Context,
    fetch: Callable[[Account, list[str] | None], Awaitable[Sequence[Any]]],
) -> tuple[str, Sequence[Any]] | None:
    """The language and what `fetch` found for the card's library; None once answered."""
    _, lang = await chat_and_lang(update, context)
    account = await require_account(update, context)
    if account is None:
        return None
    deadline = Deadline()
    status = await borrower_status(update, context, account, lang, deadline)
    if status is None:
        return None
    agency = normalise_branch(status.agency)
    try:
        items = await deadline.run(fetch(account, [agency] if agency else None))
    except LibraryError as exc:
        if exc.status == 500 and NO_CONTENT_SERVICE in (exc.code or "").lower():
            await reply(update, context, t(lang, "whatson.no_content"))
        else:
            await answer_library_error(update, context, exc, lang)
        return None
    return lang, items


def _now(context: Context) -> dt.datetime:
    return dt.datetime.now(services(context).settings.timezone)


async def events_command(update: Update, context: Context) -> None:
    library = services(context).library

    async def fetch(account: Account, agencies: list[str] | None) -> list[Event]:
        return await library.events(account.token, agencies, limit=EVENTS_ASKED)

    found = await library_items(update, context, fetch)
    if found is None:
        return
    lang, events = found
    now = _now(context)
    coming = coming_events(events, now)[:EVENTS_SHOWN]
    if not coming:
        await reply(update, context, t(lang, "whatson.events.none"))
        return
    entries = [render_event(event, lang, now.date()) for event in coming]
    text, _ = one_message(entries, header=t(lang, "whatson.events.header"))
    await reply(update, context, text)


async def news_command(update: Update, context: Context) -> None:
    library = services(context).library

    async def fetch(account: Account, agencies: list[str] | None) -> list[NewsItem]:
        return await library.news(account.token, agencies, limit=NEWS_ASKED)

    found = await library_items(update, context, fetch)
    if found is None:
        return
    lang, items = found
    latest = latest_news(items)[:NEWS_SHOWN]
    if not latest:
        await reply(update, context, t(lang, "whatson.news.none"))
        return
    today = _now(context).date()
    entries = [render_news(item, lang, today) for item in latest]
    text, _ = one_message(entries, header=t(lang, "whatson.news.header"))
    await reply(update, context, text)


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [CommandHandler("events", events_command), CommandHandler("news", news_command)]
