"""The calendar feed as calendar applications read it."""

from __future__ import annotations

import datetime as dt

from icalendar import Calendar

from bot.rules.calendar import Entry
from bot.texts.ical import render_feed


def test_the_feed_says_how_often_to_refresh_as_durations() -> None:
    entry = Entry(uid="loan-1@library-bot", kind="due", day=dt.date(2026, 12, 1), title="Bog")
    feed = render_feed([(None, [entry])], "en", seen_at=dt.datetime(2026, 11, 24, tzinfo=dt.UTC))
    assert b"X-PUBLISHED-TTL:PT6H\r\n" in feed
    assert b"REFRESH-INTERVAL;VALUE=DURATION:PT6H\r\n" in feed
    assert len(Calendar.from_ical(feed).walk("VEVENT")) == 1
