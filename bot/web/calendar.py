"""`GET /calendar/<secret>.ics`: a patron's calendar feed, from what the bot last saw.

Serving it never calls the library services: the entries are kept with the feed. A wrong or
closed address is a plain 404, the same for both, and the secret is never logged (the
server keeps no access log).
"""

from __future__ import annotations

import datetime as dt
import re

from aiohttp import web

from bot.rules import calendar
from bot.services import Services
from bot.texts import pick_language
from bot.texts.cards import card_name
from bot.texts.ical import render_feed
from storage.calendar import SECRET_CHARS

SUFFIX = ".ics"
# What the store makes (`token_urlsafe`); anything else is not worth a database query.
SECRET = re.compile(rf"[A-Za-z0-9_-]{{{SECRET_CHARS}}}")
CONTENT_TYPE = "text/calendar; charset=utf-8"


async def calendar_feed(request: web.Request, services: Services) -> web.Response:
    name = request.match_info.get("name", "")
    secret = name.removesuffix(SUFFIX)
    if not name.endswith(SUFFIX) or not SECRET.fullmatch(secret):
        raise web.HTTPNotFound(text="no such calendar")
    feed = await services.store.calendar.open(secret)
    if feed is None:
        raise web.HTTPNotFound(text="no such calendar")
    chat = await services.store.chat(feed.chat_id)
    lang = pick_language(chat.language, chat.telegram_language)
    several = len(feed.cards) > 1  # a family's events say whose they are
    body = render_feed(
        [
            (
                card_name(card.label, card.card, lang) if several else None,
                calendar.loads(card.entries) if card.entries else [],
            )
            for card in feed.cards
        ],
        lang,
        seen_at=feed.seen_at or dt.datetime.now(dt.UTC),
    )
    return web.Response(
        body=body,
        headers={
            "Content-Type": CONTENT_TYPE,
            "Content-Disposition": 'inline; filename="library.ics"',
            # Private: the feed is one patron's; clients fetch again after REFRESH anyway.
            "Cache-Control": "private, max-age=900",
            "X-Robots-Tag": "noindex",
        },
    )
