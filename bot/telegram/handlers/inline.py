"""Inline mode: `@<bot> <words>` in any chat lists public catalogue hits to share.

The same public search as `/search` (anonymous token), and nothing else: no card or account is
read. The hits are public, but the cards and buttons speak the asker's language (their own
`/language`, else Telegram's), so every answer with text in it is personal: Telegram caches it
for the asker alone, and nobody is shown another user's language. A shared result is a small
card whose "Order at your library" button deep-links into the private chat
(`/start order-<pid>`), where the normal order flow, with its confirmation, takes over.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from telegram import (
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQuery,
    InlineQueryResultArticle,
    InlineQueryResultsButton,
    InputTextMessageContent,
    Update,
)
from telegram.constants import ParseMode
from telegram.error import TelegramError
from telegram.ext import BaseHandler, InlineQueryHandler

from bot.library.deadline import Deadline
from bot.library.errors import LibraryError
from bot.telegram.context import Context
from bot.telegram.handlers.order import valid_pid
from bot.telegram.handlers.search import MAX_QUERY, clean_query, to_cql
from bot.telegram.replies import NO_PREVIEW
from bot.texts import t
from bot.texts.formatting import shorten
from bot.texts.render import material_type, render_work

if TYPE_CHECKING:
    from bot.library.models import Work

log = logging.getLogger(__name__)

PAGE = 10
# Deeper than this nobody scrolls; the platform need not be asked for it.
MAX_OFFSET = 200
# Seconds Telegram may reuse an answer for the same asker: public data, in their language.
CACHE_SECONDS = 300
ORDER_PREFIX = "order-"
# `/start where-<pid>`: where the shared title stands at the taker's libraries (/where).
WHERE_PREFIX = "where-"
# Telegram's deep-link parameter: at most 64 characters of [A-Za-z0-9_-].
MAX_START = 64
# `/start search`: the private chat's /search, offered when the catalogue did not answer.
SEARCH_START = "search"
TITLE_LIMIT = 100
DESCRIPTION_LIMIT = 120


def encode_pid(pid: str, prefix: str = ORDER_PREFIX) -> str | None:
    """`order-<pid>` (or another `prefix`) as a deep-link parameter, None when it does not fit.

    A valid pid (`870970-basis:12345678`) uses only allowed characters but its one colon, and its
    prefix has no underscore, so the colon becomes the first underscore: readable, and decoded
    without doubt (`decode_pid`).
    """
    if not valid_pid(pid):
        return None
    start = prefix + pid.replace(":", "_", 1)
    return start if len(start) <= MAX_START else None


def decode_pid(start: str, prefix: str = ORDER_PREFIX) -> str | None:
    """The pid of an `order-<...>` (or `prefix`) parameter, None for anything else or invalid."""
    if not start.startswith(prefix) or len(start) > MAX_START:
        return None
    pid = start.removeprefix(prefix).replace("_", ":", 1)
    return pid if valid_pid(pid) else None


def cover_url(work: Work) -> str | None:
    """The thumbnail's URL with a scheme (the platform's are protocol-relative)."""
    url = (work.cover_url_thumbnail or "").strip()
    if url.startswith("//"):
        url = "https:" + url
    return url if url.startswith("https://") else None


def _offset(text: str) -> int | None:
    if not text:
        return 0
    if not (text.isascii() and text.isdigit()) or int(text) > MAX_OFFSET:
        return None
    return int(text)


async def inline_query(update: Update, context: Context) -> None:
    query = update.inline_query
    if query is None:
        return
    lang = context.lang
    words = clean_query(query.query)
    offset = _offset(query.offset)
    cql = to_cql(words) if len(words) <= MAX_QUERY else ""
    if not cql or offset is None:
        await query.answer([], cache_time=CACHE_SECONDS, is_personal=False)
        return
    try:
        found = await Deadline().run(
            context.services.library.search_public(cql, limit=PAGE, offset=offset)
        )
    except LibraryError as exc:
        log.info("inline search failed: %s", type(exc).__name__)
        # Not cached: the next keystroke asks again. The button opens /search in private.
        button = InlineQueryResultsButton(
            text=t(lang, "inline.unavailable"), start_parameter=SEARCH_START
        )
        await query.answer([], cache_time=0, is_personal=True, button=button)
        return
    works = found.works[:PAGE]
    username = context.services.bot_username or context.bot.username
    results = [
        _result(context, work, lang, username, f"{offset + number}")
        for number, work in enumerate(works)
    ]
    more = len(works) == PAGE and offset + PAGE < min(found.hit_count, MAX_OFFSET + PAGE)
    await query.answer(
        results,
        cache_time=CACHE_SECONDS,
        is_personal=True,
        next_offset=str(offset + PAGE) if more else "",
    )


async def answer_outage(query: InlineQuery, lang: str) -> None:
    """The one answer to an inline query while the bot's database is away: no hits, not cached,
    and a button saying so (it opens the private chat)."""
    button = InlineQueryResultsButton(text=t(lang, "inline.outage"), start_parameter=SEARCH_START)
    try:
        await query.answer([], cache_time=0, is_personal=True, button=button)
    except TelegramError as exc:  # too old by now, or Telegram away too: nothing more to tell
        log.debug("inline query not answered: %s", type(exc).__name__)


def _result(
    context: Context, work: Work, lang: str, username: str, result_id: str
) -> InlineQueryResultArticle:
    title = shorten(work.title or t(lang, "render.untitled"), TITLE_LIMIT)
    details = [work.creator or "", material_type(work.type, lang)]
    description = shorten(" · ".join(part for part in details if part), DESCRIPTION_LIMIT)
    start = encode_pid(work.pid or "")
    where = encode_pid(work.pid or "", WHERE_PREFIX)
    markup = None
    if start is not None and where is not None:
        # Each opens the private chat of whoever taps it, which does the rest there.
        link = context.services.chat_link(start, username=username)
        button = InlineKeyboardButton(t(lang, "inline.order_button"), url=link)
        place = context.services.chat_link(where, username=username)
        beside = InlineKeyboardButton(t(lang, "shelf.button"), url=place)
        markup = InlineKeyboardMarkup([[button], [beside]])
    card = f"{render_work(work, lang)}\n\n{t(lang, 'inline.card_footer')}"
    return InlineQueryResultArticle(
        id=result_id,
        title=title,
        description=description or None,
        thumbnail_url=cover_url(work),
        input_message_content=InputTextMessageContent(
            card, parse_mode=ParseMode.HTML, link_preview_options=NO_PREVIEW
        ),
        reply_markup=markup,
    )


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    # A chosen result (with /setinlinefeedback) needs no handler: the update metric counts it
    # (`app.command_label`), and nothing about it is kept.
    return [InlineQueryHandler(inline_query)]
