"""/v3/events, /v3/news and /v3/recommend through the client, against the sandbox over HTTP."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from bot.library.client import LibraryClient
from bot.library.models import Event, NewsItem, parse_cms_time
from tests.fixtures.patrons import KAREN

if TYPE_CHECKING:
    from sandbox.library import LibrarySandbox

CPH = ZoneInfo("Europe/Copenhagen")
BLIXEN_FARM = "870970-basis:27247164"  # "Den afrikanske farm", Karen Blixen
BLIXEN_BABETTE = "870970-basis:23645564"  # "Babettes gæstebud", Karen Blixen


async def test_events_of_the_given_library_as_one_string(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    token = library_sandbox.issue_token(KAREN)
    events = await client.events(token, "DK-751000")
    assert [event.title for event in events] == [
        "Mød forfatteren",
        "Højtlæsning for de mindste",
        "Digital hjælp",
    ]
    first = events[0]
    assert first.place in {"Dokk1", "Risskov Bibliotek", "Viby Bibliotek"}
    assert first.lead == "En aften med samtale og oplæsning."
    assert first.category == "Litteratur" and first.target == "For voksne"
    assert first.price == "50"
    assert first.starts is not None and first.ends is not None
    assert first.starts.tzinfo is not None and first.starts.hour == 19
    assert (first.ends - first.starts) == dt.timedelta(hours=2)
    assert first.starts.date() > dt.datetime.now(CPH).date()
    assert library_sandbox.calls["platform GET /v3/events"] == 1


async def test_events_without_an_agency_are_the_patrons_library(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    token = library_sandbox.issue_token(KAREN)
    events = await client.events(token, limit=2)
    assert len(events) == 2
    copenhagen = {
        "Københavns Hovedbibliotek",
        "Vesterbro Bibliotek",
        "Islands Brygge Bibliotek",
        "Nørrebro Bibliotek",
    }
    assert all(event.place in copenhagen for event in events)


async def test_news_items(library_sandbox: LibrarySandbox, client: LibraryClient) -> None:
    token = library_sandbox.issue_token(KAREN)
    news = await client.news(token, "DK-710100")
    assert [item.title for item in news] == [
        "Nye åbningstider i sommerferien",
        "Månedens anbefalinger",
    ]
    assert all(isinstance(item, NewsItem) and item.created is not None for item in news)
    assert news[0].created is not None and news[1].created is not None
    assert news[0].created > news[1].created
    assert news[0].lead == "Se hvornår biblioteket har åbent."
    assert news[0].category == "Praktisk"


async def test_recommend_likes_ignores_and_caps_the_limit(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    token = library_sandbox.issue_token(KAREN)
    found = await client.recommend(token, [BLIXEN_FARM], limit=3)
    assert [r.pid for r in found][:1] == [BLIXEN_BABETTE]  # the same creator first
    assert len(found) == 3 and found[0].source and found[0].val is not None
    ignored = await client.recommend(token, [BLIXEN_FARM], ignore=[BLIXEN_BABETTE], limit=3)
    assert BLIXEN_BABETTE not in [r.pid for r in ignored]
    # Asking for more than the platform's 50 asks for 50 (a larger limit is a 400).
    many = await client.recommend(token, [BLIXEN_FARM], limit=500)
    assert 0 < len(many) <= 50


async def test_recommend_for_works_the_recommender_does_not_know_is_empty(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    token = library_sandbox.issue_token(KAREN)
    assert await client.recommend(token, ["870970-basis:00000000"]) == []


def test_content_items_as_recorded_parse() -> None:
    """The shape of serviceprovider's `events-isil.snapshot.js` (lists, empty strings)."""
    raw = {
        "title": {"name": "Titel", "value": "Mød forfatteren: Tim Buk-Swienty", "attr": []},
        "created": {"name": "Oprettet", "value": 1387237332, "attr": []},
        "field_ding_event_location__name_line": {"name": "x", "value": [""], "attr": []},
        "field_ding_event_price": {"name": "Price", "value": [], "attr": []},
        "field_ding_event_date": {
            "name": "Event date",
            "value": {"from": "2016-05-15 08:30:00", "to": "2016-05-15 10:00:00"},
            "attr": [],
        },
        "field_ding_event_target": {"name": "Event target", "terms": ["For børn"]},
        "nid": 15,
    }
    event = Event.model_validate(raw, context={"tz": CPH})
    assert event.nid == "15" and event.place is None and event.price is None
    assert event.starts == dt.datetime(2016, 5, 15, 8, 30, tzinfo=CPH)
    assert event.target == "For børn"
    assert Event.model_validate({"field_ding_event_date": {"value": None}}).starts is None
    assert parse_cms_time("2016-05-15T06:30:00Z", CPH) == dt.datetime(
        2016, 5, 15, 8, 30, tzinfo=CPH
    )
    assert parse_cms_time("next tuesday", CPH) is None
    assert parse_cms_time(True, CPH) is None
