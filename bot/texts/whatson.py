"""Events and news of the patron's library as Telegram HTML entries (/events, /news).

The content service's texts are the library's own: plain text is escaped, HTML (a body) is
reduced to its text first. Every entry is bounded, so a whole list fits one message.
"""

from __future__ import annotations

import datetime as dt
import html
import re
from collections.abc import Sequence
from typing import Final

from babel.dates import format_skeleton

from bot.library.models import Event, LibraryPage, NewsItem
from bot.texts import DEFAULT_LANGUAGE, LOCALES, Raw, t
from bot.texts.formatting import format_date, split_messages

TITLE_LIMIT: Final = 120
LEAD_LIMIT: Final = 200
PLACE_LIMIT: Final = 80
_TAG = re.compile(r"<[^>]*>")

__all__ = ["coming_events", "latest_news", "render_event", "render_hours", "render_news"]
HOURS_DAYS: Final = 7


def plain(value: str | None, limit: int) -> str:
    """Library text (HTML or not) as escaped plain text of at most `limit` characters."""
    text = html.unescape(_TAG.sub(" ", value or ""))
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return html.escape(text, quote=False)


def coming_events(events: Sequence[Event], now: dt.datetime) -> list[Event]:
    """Events not yet over, soonest first; the platform passes the site's order through."""
    coming = [
        event
        for event in events
        if event.starts is not None and (event.ends or event.starts) >= now
    ]
    return sorted(coming, key=lambda event: event.starts or now)


def latest_news(items: Sequence[NewsItem]) -> list[NewsItem]:
    """Newest first (undated items last, in the order sent)."""
    floor = dt.datetime.min.replace(tzinfo=dt.UTC)
    return sorted(items, key=lambda item: item.created or floor, reverse=True)


def _day(moment: dt.datetime, lang: str, today: dt.date) -> str:
    skeleton = "MMMEd" if moment.year == today.year else "yMMMEd"
    return str(
        format_skeleton(
            skeleton, moment.date(), locale=LOCALES.get(lang, LOCALES[DEFAULT_LANGUAGE])
        )
    )


def render_event(event: Event, lang: str, today: dt.date) -> str:
    """Title, when (day, start and end), where, price and the lead, one line each."""
    title = plain(event.title, TITLE_LIMIT) or t(lang, "render.untitled")
    lines = [f"<b>{title}</b>"]
    starts, ends = event.starts, event.ends
    if starts is not None:
        day = _day(starts, lang, today)
        start = starts.strftime("%H:%M")
        if ends is not None and ends.date() == starts.date() and ends > starts:
            lines.append(
                t(
                    lang,
                    "whatson.events.when_until",
                    day=day,
                    start=start,
                    end=ends.strftime("%H:%M"),
                )
            )
        else:
            lines.append(t(lang, "whatson.events.when", day=day, start=start))
    place = plain(event.place or event.street, PLACE_LIMIT)
    if place:
        lines.append(t(lang, "whatson.events.place", place=Raw(place)))
    audience = plain(event.target, PLACE_LIMIT)
    if audience:
        lines.append(t(lang, "whatson.events.audience", audience=Raw(audience)))
    price = plain(event.price, 20)
    if price and price != "0":
        lines.append(t(lang, "whatson.events.price", price=Raw(price)))
    lead = plain(event.lead or event.body, LEAD_LIMIT)
    if lead:
        lines.append(f"<i>{lead}</i>")
    return "\n".join(lines)


def render_news(item: NewsItem, lang: str, today: dt.date) -> str:
    """Title and date, then the lead."""
    title = plain(item.title, TITLE_LIMIT) or t(lang, "render.untitled")
    head = f"<b>{title}</b>"
    if item.created is not None:
        head += f" · {html.escape(format_date(item.created.date(), lang, today=today))}"
    lead = plain(item.lead or item.body, LEAD_LIMIT)
    return f"{head}\n{lead}" if lead else head


def render_hours(pages: Sequence[LibraryPage], lang: str, today: dt.date) -> list[str]:
    """Each branch page's dated opening hours for the coming week (`/v3/library`), one line a
    day; the branch's name in bold, in as many messages as a large library's branches need.
    A day a page lists no hours for is left out: the schema does not say whether that means
    closed."""
    days = [today + dt.timedelta(days=n) for n in range(HOURS_DAYS)]
    blocks = []
    for page in sorted(pages, key=lambda p: p.title or ""):
        lines = []
        for day in days:
            spans = page.hours_on(day)
            if spans:
                hours = ", ".join(f"{d.start_time}–{d.end_time}" for d in spans)
                lines.append(t(lang, "whatson.hours.day", day=_day_of(day, lang), hours=hours))
        if lines:
            name = plain(page.title, TITLE_LIMIT) or t(lang, "render.untitled")
            blocks.append("\n".join([f"<b>{name}</b>", *lines]))
    if not blocks:
        return [t(lang, "whatson.hours.none")]
    return split_messages(blocks, header=t(lang, "whatson.hours.header"))


def _day_of(day: dt.date, lang: str) -> str:
    return str(format_skeleton("MMMEd", day, locale=LOCALES.get(lang, LOCALES[DEFAULT_LANGUAGE])))
