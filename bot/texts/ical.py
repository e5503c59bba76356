"""A patron's calendar feed as iCalendar (RFC 5545), built with the `icalendar` library.

Each entry is an all-day event on its day. Its UID comes from the loan or hold, so a renewal
moves the event in the patron's calendar instead of adding another one; DTSTAMP is when the
bot last saw the status, so clients see the change.
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Callable, Sequence

from icalendar import Calendar, Event, vDuration

from bot.rules.calendar import Entry
from bot.texts import t

PRODID = "-//library-bot//calendar feed//EN"
# How often clients are asked to fetch again; the status behind the feed moves about daily.
REFRESH = dt.timedelta(hours=6)


def _plain(text: str) -> str:
    """Catalogue texts are Telegram HTML; a calendar wants the plain words."""
    return html.unescape(text)


def _no_name(branch: str) -> str | None:
    return None


def render_feed(
    cards: Sequence[tuple[str | None, Sequence[Entry]]],
    lang: str,
    *,
    seen_at: dt.datetime,
    renew: Sequence[tuple[int, str | None]] = (),
    today: dt.date | None = None,
    branch_name: Callable[[str], str | None] = _no_name,
) -> bytes:
    """One feed for every card of a chat: `cards` is each card's name (None: the chat has
    one card, so events need no name) and entries. `renew`: the cards (number, name) whose
    login was lost, whose entries are the last known: each gets an all-day entry on `today`
    asking the patron to log in again. `branch_name` names a pick-up branch's agency id."""
    calendar = Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("method", "PUBLISH")
    calendar.add("x-wr-calname", _plain(t(lang, "calendar.feed.name")))
    calendar.add("refresh-interval", REFRESH, parameters={"VALUE": "DURATION"})
    # A duration (PT6H), as RFC 5545 writes one; a bare timedelta would be written as text.
    calendar.add("x-published-ttl", vDuration(REFRESH))
    for name, entries in cards:
        for entry in entries:
            calendar.add_component(_event(entry, name, lang, seen_at, branch_name))
    for number, name in renew:
        calendar.add_component(_renew(number, name, lang, seen_at, today or dt.date.today()))
    return bytes(calendar.to_ical())


def _renew(number: int, name: str | None, lang: str, seen_at: dt.datetime, today: dt.date) -> Event:
    """The feed's own news: this card's entries stay as they were until the patron logs in
    again (its UID names the card's number only, so it moves day by day)."""
    event = Event()
    event.add("uid", f"login-{number}@library-bot")
    event.add("dtstamp", seen_at.astimezone(dt.UTC))
    event.add("dtstart", today)
    event.add("dtend", today + dt.timedelta(days=1))
    event.add("transp", "TRANSPARENT")
    summary = t(lang, "calendar.event.log_in")
    if name is not None:
        summary = t(lang, "card.event", name=name, summary=summary)
    event.add("summary", _plain(summary))
    event.add("description", _plain(t(lang, "calendar.event.log_in_why")))
    return event


def _event(
    entry: Entry,
    name: str | None,
    lang: str,
    seen_at: dt.datetime,
    branch_name: Callable[[str], str | None],
) -> Event:
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
    lines = [entry.creator] if entry.creator else []
    if entry.branch:
        branch = branch_name(entry.branch) or entry.branch
        event.add("location", branch)
        lines.append(_plain(t(lang, "calendar.event.branch", branch=branch)))
    if entry.number:
        lines.append(_plain(t(lang, "calendar.event.pickup_id", pickup_id=entry.number)))
    if lines:
        event.add("description", "\n".join(lines))
    return event
