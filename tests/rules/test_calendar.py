"""What goes into a calendar feed, without servers."""

from __future__ import annotations

import datetime as dt

from icalendar import Calendar

from bot.library.models import BorrowerStatus, Hold, Loan
from bot.rules import calendar
from bot.texts.ical import render_feed

DAY = dt.date(2027, 3, 1)


def status(due: dt.date = DAY) -> BorrowerStatus:
    return BorrowerStatus(
        loans=[
            Loan(loan_id="L1", due_date=due, title="Kongens fald", creator="Johannes V. Jensen"),
            Loan(loan_id="L2", due_date="som snart", title="Ukendt dato"),
        ],
        orders=[
            Hold(
                order_id="O1",
                status="Available for pickup",
                title="Efter uvejret",
                pick_up_expiry_date=DAY + dt.timedelta(days=5),
            ),
            Hold(order_id="O2", status="Reserved", title="Venter stadig"),
        ],
    )


def test_due_dates_and_last_pick_up_days_only() -> None:
    found = calendar.entries(status())
    assert [(e.kind, e.day, e.title) for e in found] == [
        ("due", DAY, "Kongens fald"),
        ("pick_up", DAY + dt.timedelta(days=5), "Efter uvejret"),
    ]


def test_uid_is_the_loans_not_its_dates_and_hides_the_id() -> None:
    [before] = [e for e in calendar.entries(status()) if e.kind == "due"]
    [after] = [e for e in calendar.entries(status(DAY + dt.timedelta(days=30))) if e.kind == "due"]
    assert before.uid == after.uid == calendar.loan_uid("L1")
    assert "L1" not in before.uid


def test_entries_round_trip_and_garbage_is_an_empty_calendar() -> None:
    found = calendar.entries(status())
    assert calendar.loads(calendar.dumps(found)) == found
    for garbage in ("", "{", "[1]", '[{"uid": "x"}]', "null"):
        assert calendar.loads(garbage) == []


def test_the_feed_parses_with_one_all_day_event_per_entry() -> None:
    seen = dt.datetime(2027, 2, 20, 9, 30, tzinfo=dt.UTC)
    feed = Calendar.from_ical(render_feed([(None, calendar.entries(status()))], "en", seen_at=seen))
    assert str(feed["x-wr-calname"]) == "Library"
    events = list(feed.walk("VEVENT"))
    assert [str(e["summary"]) for e in events] == [
        "📚 Due: Kongens fald",
        "📦 Last day to pick up: Efter uvejret",
    ]
    assert events[0].decoded("dtstart") == DAY
    assert events[0].decoded("dtstamp") == seen
    assert str(events[0]["description"]) == "Johannes V. Jensen"


def test_a_title_with_markup_is_plain_text_in_the_feed() -> None:
    entry = calendar.Entry("u@x", "due", DAY, "Rødt & sort <2. udgave>")
    feed = Calendar.from_ical(render_feed([(None, [entry])], "da", seen_at=dt.datetime.now(dt.UTC)))
    [event] = feed.walk("VEVENT")
    assert str(event["summary"]) == "📚 Afleveres: Rødt & sort <2. udgave>"
