"""Property tests for the library site's content and the recommender: whatever the platform
passes through, the client returns the model or its own error, and every event and news item
renders as Telegram HTML of bounded length."""

from __future__ import annotations

import datetime as dt
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from bot.library.client import parse_model
from bot.library.errors import LibraryError
from bot.library.models import Event, NewsItem, Recommendation
from bot.texts.whatson import coming_events, latest_news, render_event, render_news
from tests.fixtures.strategies import FAST, TZ, any_json, dates, shaped, texts
from tests.texts.telegram_html import assert_telegram_html


def cms(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A content-service field `{"name", "value", "attr"}` around `values`, or anything."""
    return st.one_of(
        st.fixed_dictionaries(
            {"name": st.text(max_size=10), "value": values | st.lists(values, max_size=2)},
            optional={"attr": any_json},
        ),
        values,
    )


markup = st.one_of(texts, st.sampled_from(["<p>a &amp; b</p>", "<b>x", "Ø & <i>", "&nbsp;"]))
moments = st.one_of(
    dates,
    st.datetimes().map(lambda d: d.strftime("%Y-%m-%d %H:%M:%S")),
    st.integers(min_value=-(2**40), max_value=2**40),
)
terms = st.fixed_dictionaries({"name": texts, "terms": st.lists(texts, max_size=2)}) | any_json
event = shaped(
    {
        "nid": texts,
        "title": cms(markup),
        "created": cms(moments),
        "field_ding_event_lead": cms(markup),
        "field_ding_event_body": cms(markup),
        "field_ding_event_date": cms(
            st.fixed_dictionaries({}, optional={"from": moments, "to": moments})
        ),
        "field_ding_event_location__name_line": cms(markup),
        "field_ding_event_price": cms(texts),
        "field_ding_event_category": terms,
    }
)
news = shaped(
    {
        "nid": texts,
        "title": cms(markup),
        "created": cms(moments),
        "field_ding_news_lead": cms(markup),
        "field_ding_news_body": cms(markup),
    }
)
recommendation = shaped({"pid": texts, "val": texts, "from": st.lists(texts, max_size=2) | texts})
RESOURCES: dict[type[BaseModel], st.SearchStrategy[Any]] = {
    Event: event,
    NewsItem: news,
    Recommendation: recommendation,
}
NOW = dt.datetime(2026, 11, 22, 12, tzinfo=TZ)


@FAST
@given(st.data())
def test_content_parses_to_the_model_or_a_library_error(data: st.DataObject) -> None:
    model = data.draw(st.sampled_from(sorted(RESOURCES, key=lambda m: m.__name__)))
    value = data.draw(st.one_of(RESOURCES[model], any_json))
    try:
        parsed = parse_model(model, value, tz=TZ, endpoint="events")
    except LibraryError:
        return
    assert isinstance(parsed, model)


@FAST
@given(st.lists(event, max_size=4), st.sampled_from(["da", "en"]))
def test_every_event_renders_as_telegram_html(items: list[Any], lang: str) -> None:
    parsed = []
    for item in items:
        try:
            parsed.append(parse_model(Event, item, tz=TZ, endpoint="events"))
        except LibraryError:
            continue
    for found in coming_events(parsed, NOW):
        text = render_event(found, lang, NOW.date())
        assert_telegram_html(text)
        assert len(text) < 1000


@FAST
@given(st.lists(news, max_size=4), st.sampled_from(["da", "en"]))
def test_every_news_item_renders_as_telegram_html(items: list[Any], lang: str) -> None:
    parsed = []
    for item in items:
        try:
            parsed.append(parse_model(NewsItem, item, tz=TZ, endpoint="news"))
        except LibraryError:
            continue
    for found in latest_news(parsed):
        text = render_news(found, lang, NOW.date())
        assert_telegram_html(text)
        assert len(text) < 1000
