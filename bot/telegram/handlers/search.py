"""/search <words>: the catalogue through the data platform, public (anonymous token).

A bare /search asks for the words (`ask_for_words`). Works before login. Each result gets an
"Order" button that leads to the same confirmation as `/order <material id>` (which does need a
login).
"""

from __future__ import annotations

import unicodedata
from typing import Any

from telegram import ForceReply, Update
from telegram.constants import ParseMode
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from bot.actions.ordering import net_only
from bot.library.deadline import Deadline
from bot.library.errors import LibraryError
from bot.telegram.buttons import OrderFound, Payload, decode
from bot.telegram.cards import card_identities, require_card
from bot.telegram.context import Context
from bot.telegram.failures import answer_library_error, public_failure
from bot.telegram.handlers.order import order_found, prepare_order, valid_pid
from bot.telegram.keyboards import (
    SHORT_TITLE,
    callback_buttons,
    in_pairs,
    order_and_where,
    resolve_callback,
)
from bot.telegram.replies import NO_PREVIEW, reply, send, send_messages
from bot.texts import LANGUAGES, t
from bot.texts.formatting import shorten, split_messages
from bot.texts.render import render_work

MAX_RESULTS = 10
# chat_data key and lifetime of a bare /search waiting for its words.
AWAITING_WORDS = "search.awaiting_words"
AWAIT_SECONDS = 600.0
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
    words = " ".join(context.args or [])
    if not clean_query(words):
        await ask_for_words(update, context)
        return
    await run_search(update, context, words)


async def ask_for_words(
    update: Update,
    context: Context,
) -> None:
    """A bare /search: ask for the words; the chat's next plain message is the search.

    Remembered in this process's `chat_data`; the prompt also asks Telegram for a reply to it,
    which any process recognises (`is_search_reply`).
    """
    lang = context.lang
    context.ask(AWAITING_WORDS)
    placeholder = t(lang, "whatson.search.placeholder")
    await context.bot.send_message(
        context.chat_id,
        t(lang, "whatson.search.ask"),
        parse_mode=ParseMode.HTML,
        link_preview_options=NO_PREVIEW,
        reply_markup=ForceReply(input_field_placeholder=placeholder),
    )


def awaiting_words(update: Update, context: Context) -> bool:
    """True (once) when the chat's last bare /search is still waiting for its words
    (`BotContext.asked`: a chat that never sent one keeps no `chat_data` entry)."""
    waiting = context.asked(AWAITING_WORDS, AWAIT_SECONDS) is not None
    context.answered(AWAITING_WORDS)
    return waiting


def is_search_reply(update: Update, context: Context) -> bool:
    """True for a reply to this bot's "what are you looking for?" prompt."""
    message = update.effective_message
    replied = message.reply_to_message if message is not None else None
    if replied is None or replied.from_user is None or replied.from_user.id != context.bot.id:
        return False
    return (replied.text or "") in {t(lang, "whatson.search.ask") for lang in LANGUAGES}


async def run_search(update: Update, context: Context, words: str) -> None:
    """Search for the patron's `words` and list the results with an Order button each."""
    lang = context.lang
    query = clean_query(words)
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
    library = context.services.library
    try:
        result = await Deadline().run(library.search_public(cql, limit=MAX_RESULTS))
    except LibraryError as exc:
        await answer_library_error(update, context, public_failure(exc))
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
    cids = await card_identities(context)
    for number, work in enumerate(works, start=1):
        entries.append(f"{number}. {render_work(work, lang)}")
        # A material lent only online cannot be ordered, and stands on no shelf: no buttons.
        if work.pid and valid_pid(work.pid) and not net_only(work):
            title = shorten(work.title or t(lang, "render.untitled"), SHORT_TITLE)
            order = OrderFound(work.pid, cids=cids)
            specs += order_and_where(lang, number, title, order, work.pid)
    buttons = in_pairs(await callback_buttons(update, context, specs))
    footer = t(lang, "borrower.search.footer") if buttons else ""
    messages = split_messages(entries, header=header, footer=footer)
    await send_messages(update, context, messages, buttons)


async def search_callback(update: Update, context: Context) -> None:
    """A result's (or a suggestion's) "Order" button: the confirmation of `/order <pid>`, with
    the card the button names (a suggestion's, from that card's loans)."""
    ref = await resolve_callback(update, context, asks=True)
    if ref is None:
        return
    lang = context.lang
    found = decode(ref.payload, OrderFound)
    pid = found.pid if found is not None else ""
    if found is None or found.number is None:
        if not valid_pid(pid):
            await send(context.bot, context.chat_id, t(lang, "common.stale_button"))
            return
        if (
            found is not None
            and found.cids
            and not set(found.cids) & set(await card_identities(context))
        ):
            # Every card the result was shown to has left: never order for whoever is here now.
            await send(context.bot, context.chat_id, t(lang, "cards.gone"))
            return
        # A search's result: "which card?" when the chat has several.
        await order_found(update, context, pid)
        return
    card = await require_card(context, tapped=found)
    if card is None:
        return
    if not valid_pid(pid):
        await send(context.bot, context.chat_id, t(lang, "common.stale_button"))
        return
    await prepare_order(update, context, card, pid=pid)


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("search", search_command),
        CallbackQueryHandler(search_callback, pattern=rf"^{OrderFound.ACTION}:"),
    ]
