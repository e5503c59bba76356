"""`GET /calendar/<secret>.ics`: a patron's calendar feed, from what the bot last saw.

Serving it never calls the library services: the entries are kept with the feed, and branch
names come from what the process remembers. A card whose login was lost is served from its
last known entries, with an entry today asking to log in again. A wrong or closed address is a
plain 404, the same for both, and the secret is never logged (the server keeps no access log).
"""

from __future__ import annotations

import datetime as dt
import re

from aiohttp import web

from bot.actions import calendar as calendar_action
from bot.actions import chats
from bot.actions.vocabulary import SECRET_CHARS
from bot.rules import calendar
from bot.services import Services
from bot.texts import pick_language
from bot.texts.cards import card_name
from bot.texts.ical import render_feed

SUFFIX = ".ics"
# What the store makes (`token_urlsafe`); anything else is not worth a database query.
SECRET = re.compile(rf"[A-Za-z0-9_-]{{{SECRET_CHARS}}}")
CONTENT_TYPE = "text/calendar; charset=utf-8"


async def calendar_feed(request: web.Request, services: Services) -> web.Response:
    name = request.match_info.get("name", "")
    secret = name.removesuffix(SUFFIX)
    if not name.endswith(SUFFIX) or not SECRET.fullmatch(secret):
        raise web.HTTPNotFound(text="no such calendar")
    feed = await calendar_action.feed(services, secret)
    if feed is None:
        raise web.HTTPNotFound(text="no such calendar")
    chat = await chats.settings(services, feed.chat_id)
    lang = pick_language(chat.language, chat.telegram_language)
    several = len(feed.cards) > 1  # a family's events say whose they are
    names = [card_name(card, lang) if several else None for card in feed.cards]
    now = dt.datetime.now(dt.UTC)
    body = render_feed(
        [
            (name, calendar.loads(card.entries) if card.entries else [])
            for name, card in zip(names, feed.cards, strict=True)
        ],
        lang,
        seen_at=feed.seen_at or now,
        renew=[
            (card.number, name)
            for name, card in zip(names, feed.cards, strict=True)
            if card.lost_at is not None
        ],
        today=now.astimezone(services.settings.timezone).date(),
        branch_name=services.branches.known,
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
