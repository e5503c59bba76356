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

from library_bot.rules.calendar import Entry
from library_bot.texts import t

PRODID = "-//library-bot//calendar feed//EN"
# How often clients are asked to fetch again; the status behind the feed moves about daily.
REFRESH = dt.timedelta(hours=6)


def _plain(text: str) -> str:
    """Catalogue texts are Telegram HTML; a calendar wants the plain words."""
    return html.unescape(text)


def render_feed(
    entries: Sequence[Entry],
    lang: str,
    *,
    seen_at: dt.datetime,
) -> bytes:
    calendar = Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("method", "PUBLISH")
    calendar.add("x-wr-calname", _plain(t(lang, "calendar.feed.name")))
    calendar.add("refresh-interval", REFRESH, parameters={"VALUE": "DURATION"})
    calendar.add("x-published-ttl", REFRESH)
    for entry in entries:
        event = Event()
        event.add("uid", entry.uid)
        event.add("dtstamp", seen_at.astimezone(dt.UTC))
        event.add("dtstart", entry.day)
        event.add("dtend", entry.day + dt.timedelta(days=1))
        event.add("transp", "TRANSPARENT")  # a reminder, not time the patron is busy
        key = "calendar.event.due" if entry.kind == "due" else "calendar.event.pick_up"
        event.add("summary", _plain(t(lang, key, title=entry.title or "?")))
        if entry.creator:
            event.add("description", entry.creator)
        calendar.add_component(event)
    return bytes(calendar.to_ical())
