"""Free text is a search: a plain message in a private chat offers "🔎 Search for “…”", and
the words after a bare /search are searched at once. A few fixed phrases ("forny mine lån",
"/lån") point to their command instead, a branch's name typed while the pick-up branch
picker waits is that branch, and a library's name typed while /where asks for one is that
library.

Reached through `fallback` (the last handler), so any area that asks for typed input of its
own sees the message first. Groups keep the fallback's hint: a search offer for every message
in a group would be noise.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from telegram import Update
from telegram.constants import ChatType
from telegram.ext import BaseHandler, CallbackQueryHandler

from bot.actions import buttons as callbacks
from bot.actions.vocabulary import CODE_ALPHABET, CODE_LENGTH, normalize_code
from bot.telegram.buttons import SearchWords, decode
from bot.telegram.context import Context
from bot.telegram.handlers.order import typed_branch
from bot.telegram.handlers.search import (
    MAX_QUERY,
    awaiting_words,
    clean_query,
    is_search_reply,
    run_search,
)
from bot.telegram.handlers.where import typed_library
from bot.telegram.keyboards import callback_buttons, resolve_callback
from bot.telegram.replies import reply
from bot.texts import Raw, t
from bot.texts.formatting import shorten

# Longest query shown in the button (the search itself uses all of it).
BUTTON_QUERY = 40

# Whole messages (folded: lower case, no punctuation or leading "/") that mean a command, in
# Danish, English and Ukrainian. Kept small and exact, so a search is never taken for one.
PHRASES: Mapping[str, str] = MappingProxyType(
    {
        **dict.fromkeys(
            (
                "lån",
                "mine lån",
                "udlån",
                "loans",
                "my loans",
                "видачі",
                "мої видачі",
                # What patrons may still type, though the bot says «видачі».
                "позики",
                "мої позики",
            ),
            "loans",
        ),
        **dict.fromkeys(
            (
                "forny",
                "forny lån",
                "forny mine lån",
                "forny alle",
                "forny alt",
                "renew",
                "renew loans",
                "renew my loans",
                "renew all",
                "продовжити",
                "продовжити видачі",
                "продовжити мої видачі",
                "продовжити позики",
                "продовжити мої позики",
            ),
            "renew",
        ),
        **dict.fromkeys(
            (
                "reserveringer",
                "mine reserveringer",
                "holds",
                "my holds",
                "бронювання",
                "мої бронювання",
            ),
            "holds",
        ),
        **dict.fromkeys(
            ("gebyrer", "mine gebyrer", "gæld", "fees", "my fees", "debt", "борг", "збори"),
            "debt",
        ),
        **dict.fromkeys(("hjælp", "help", "допомога"), "help"),
    }
)
_PUNCTUATION = re.compile(r"[^\w\s]")


def phrase_command(text: str) -> str | None:
    """The command a fixed phrase means ("forny mine lån" -> renew), else None."""
    folded = unicodedata.normalize("NFC", text).casefold().strip().lstrip("/")
    return PHRASES.get(" ".join(_PUNCTUATION.sub(" ", folded).split()))


def looks_like_link_code(text: str) -> bool:
    """A login page's one-time code typed as it is: a secret, never kept in a button's payload
    (it gets the hint towards /help instead)."""
    code = normalize_code(text)
    return len(code) == CODE_LENGTH and all(char in CODE_ALPHABET for char in code)


async def offer_search(update: Update, context: Context) -> bool:
    """Answer a plain message of a private chat as a search; False when it is not one."""
    chat = update.effective_chat
    message = update.effective_message
    if chat is None or chat.type != ChatType.PRIVATE or message is None or not message.text:
        return False
    lang = context.lang
    waited = awaiting_words(update, context)
    if waited or is_search_reply(update, context):
        await run_search(update, context, message.text)
        return True
    command = phrase_command(message.text)
    if command is not None:
        await reply(update, context, t(lang, "whatson.freetext.command", command=command))
        return True
    if await typed_branch(update, context, message.text):
        return True
    if await typed_library(update, context, message.text):
        return True
    query = clean_query(message.text)
    if not query or looks_like_link_code(query):
        return False
    if len(query) > MAX_QUERY:
        await reply(update, context, t(lang, "whatson.freetext.too_long", limit=MAX_QUERY))
        return True
    label = t(lang, "whatson.freetext.button", query=Raw(shorten(query, BUTTON_QUERY)))
    sealed = SearchWords(callbacks.seal(context.services, query, context.chat_id))
    [button] = await callback_buttons(update, context, [(label, sealed)])
    await reply(update, context, t(lang, "whatson.freetext.offer"), buttons=[[button]])
    return True


async def find_tapped(update: Update, context: Context) -> None:
    """The "🔎 Search for »…«" button: the search, as `/search <words>` would do it."""
    ref = await resolve_callback(update, context, asks=True)
    if ref is None:
        return
    words = decode(ref.payload, SearchWords)
    svc = context.services
    query = None if words is None else callbacks.unseal(svc, words.s, context.chat_id)
    await run_search(update, context, query or "")


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [CallbackQueryHandler(find_tapped, pattern=rf"^{SearchWords.ACTION}:")]
