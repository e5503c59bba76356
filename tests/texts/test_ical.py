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


def test_a_lost_login_is_an_all_day_entry_today_in_the_patrons_language() -> None:
    entry = Entry(uid="loan-1@library-bot", kind="due", day=dt.date(2026, 12, 1), title="Bog")
    today = dt.date(2026, 11, 24)
    feed = render_feed(
        [("Sofie", [entry])],
        "uk",
        seen_at=dt.datetime(2026, 11, 20, tzinfo=dt.UTC),
        renew=[(2, "Sofie")],
        today=today,
    )
    events = {str(e["uid"]): e for e in Calendar.from_ical(feed).walk("VEVENT")}
    notice = events["login-2@library-bot"]
    assert str(notice["summary"]) == ("Sofie: 🔑 Увійдіть знову, щоб календар залишався актуальним")
    assert notice.decoded("dtstart") == today
    assert notice.decoded("dtend") == today + dt.timedelta(days=1)
    assert "/login" in str(notice["description"])
    assert "loan-1@library-bot" in events  # the last known entries stay
