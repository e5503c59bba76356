"""A patron's calendar feed as iCalendar (RFC 5545), built with the `icalendar` library.

Each entry is an all-day event on its day. Its UID comes from the loan or hold, so a renewal
moves the event in the patron's calendar instead of adding another one; DTSTAMP is when the
bot last saw the status, so clients see the change.
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Sequence

from icalendar import Calendar, Event

from bot.rules.calendar import Entry
from bot.texts import t

PRODID = "-//library-bot//calendar feed//EN"
# How often clients are asked to fetch again; the status behind the feed moves about daily.
REFRESH = dt.timedelta(hours=6)


def _plain(text: str) -> str:
    """Catalogue texts are Telegram HTML; a calendar wants the plain words."""
    return html.unescape(text)


def render_feed(
    cards: Sequence[tuple[str | None, Sequence[Entry]]],
    lang: str,
    *,
    seen_at: dt.datetime,
) -> bytes:
    """One feed for every card of a chat: `cards` is each card's name (None: the chat has
    one card, so events need no name) and entries."""
    calendar = Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("method", "PUBLISH")
    calendar.add("x-wr-calname", _plain(t(lang, "calendar.feed.name")))
    calendar.add("refresh-interval", REFRESH, parameters={"VALUE": "DURATION"})
    calendar.add("x-published-ttl", REFRESH)
    for name, entries in cards:
        for entry in entries:
            calendar.add_component(_event(entry, name, lang, seen_at))
    return bytes(calendar.to_ical())


def _event(entry: Entry, name: str | None, lang: str, seen_at: dt.datetime) -> Event:
    event = Event()
    event.add("uid", entry.uid)
    event.add("dtstamp", seen_at.astimezone(dt.UTC))
    event.add("dtstart", entry.day)
    event.add("dtend", entry.day + dt.timedelta(days=1))
    event.add("transp", "TRANSPARENT")  # a reminder, not time the patron is busy
    key = "calendar.event.due" if entry.kind == "due" else "calendar.event.pick_up"
    summary = t(lang, key, title=entry.title or "?")
    if name is not None:
        summary = t(lang, "card.event", name=name, summary=summary)
    event.add("summary", _plain(summary))
    if entry.creator:
        event.add("description", entry.creator)
    return event
