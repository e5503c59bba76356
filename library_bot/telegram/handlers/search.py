"""/search <words>: the catalogue through the data platform, public (anonymous token).

Works before login. Each result gets an "Order" button that leads to the same confirmation as
`/order <material id>` (which does need a login).
"""

from __future__ import annotations

import unicodedata
from typing import Any

from telegram import Update
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from library_bot.library.deadline import Deadline
from library_bot.library.errors import LibraryError
from library_bot.services import services
from library_bot.telegram.buttons import OrderFound, Payload, decode
from library_bot.telegram.handlers.order import prepare_order, valid_pid
from library_bot.telegram.ui import (
    SHORT_TITLE,
    Context,
    answer_library_error,
    callback_buttons,
    chat_id_of,
    lang_of,
    one_per_row,
    public_failure,
    reply,
    require_account,
    resolve_callback,
    send,
    send_messages,
)
from library_bot.texts import Raw, t
from library_bot.texts.formatting import shorten, split_messages
from library_bot.texts.render import render_work

MAX_RESULTS = 10
# Longer queries are refused: nobody types that much, and the platform's CQL parser need not
# see it.
MAX_QUERY = 200


def clean_query(text: str) -> str:
    """Words without control or format characters, single-spaced."""
    kept = "".join(" " if unicodedata.category(char).startswith("C") else char for char in text)
    return " ".join(kept.split())


def to_cql(query: str) -> str:
    """The patron's words as a CQL query: each word a quoted term, all of them required.

    Quoting keeps words such as `and` or `=` from being read as CQL syntax.
    """
    terms = [word.replace("\\", "").replace('"', "") for word in query.split()]
    return " and ".join(f'"{term}"' for term in terms if term)


async def search_command(update: Update, context: Context) -> None:
    lang = await lang_of(update, context)
    query = clean_query(" ".join(context.args or []))
    if not query:
        await reply(update, context, t(lang, "borrower.search.usage"))
        return
    if len(query) > MAX_QUERY:
        await reply(update, context, t(lang, "borrower.search.too_long", limit=MAX_QUERY))
        return
    cql = to_cql(query)
    if not cql:
        await reply(update, context, t(lang, "borrower.search.usage"))
        return
    library = services(context).library
    try:
        result = await Deadline().run(library.search_public(cql, limit=MAX_RESULTS))
    except LibraryError as exc:
        await answer_library_error(update, context, public_failure(exc), lang)
        return
    works = result.works[:MAX_RESULTS]
    if not works:
        await reply(update, context, t(lang, "borrower.search.none", query=query))
        return
    count = max(result.hit_count, len(works))
    if count > len(works):
        header = t(lang, "borrower.search.header_more", count=count, query=query, shown=len(works))
    else:
        header = t(lang, "borrower.search.header", count=count, query=query)
    entries: list[str] = []
    specs: list[tuple[str, Payload]] = []
    for number, work in enumerate(works, start=1):
        entries.append(f"{number}. {render_work(work, lang)}")
        if work.pid and valid_pid(work.pid):
            title = shorten(work.title or t(lang, "render.untitled"), SHORT_TITLE)
            text = t(lang, "borrower.search.button", number=number, title=Raw(title))
            specs.append((text, OrderFound(work.pid)))
    buttons = one_per_row(await callback_buttons(update, context, specs))
    footer = t(lang, "borrower.search.footer") if buttons else ""
    messages = split_messages(entries, header=header, footer=footer)
    await send_messages(update, context, messages, buttons)


async def search_callback(update: Update, context: Context) -> None:
    """A result's "Order" button: the confirmation of `/order <pid>`."""
    ref = await resolve_callback(update, context)
    if ref is None:
        return
    lang = await lang_of(update, context)
    account = await require_account(update, context)
    if account is None:
        return
    found = decode(ref.payload, OrderFound)
    pid = found.pid if found is not None else ""
    if not valid_pid(pid):
        await send(context.bot, chat_id_of(update), t(lang, "common.stale_button"))
        return
    await prepare_order(update, context, account, lang, pid=pid)


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("search", search_command),
        CallbackQueryHandler(search_callback, pattern=rf"^{OrderFound.ACTION}:"),
    ]
