"""Dates, days, amounts and message splitting as the patron sees them."""

from __future__ import annotations

import datetime as dt
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.texts import t
from bot.texts.formatting import (
    format_amount,
    format_date,
    is_zero_amount,
    paginate,
    relative_days,
    shorten,
    split_messages,
    truncate_html,
    utf16_len,
)
from tests.texts.telegram_html import assert_telegram_html

TODAY = dt.date(2026, 11, 22)


@pytest.mark.parametrize(
    ("value", "lang", "expected"),
    [
        (dt.date(2026, 11, 24), "da", "24. nov."),
        (dt.date(2026, 11, 24), "en", "24 Nov"),
        (dt.date(2027, 11, 24), "da", "24. nov. 2027"),
        (dt.date(2027, 11, 24), "en", "24 Nov 2027"),
        (dt.date(2026, 5, 4), "da", "4. maj"),
        (dt.date(2026, 11, 24), "fr", "24. nov."),
        ("24/11-2026 kl. 12", "da", "24/11-2026 kl. 12"),
        (None, "en", "–"),
    ],
)
def test_format_date(value: dt.date | str | None, lang: str, expected: str) -> None:
    assert format_date(value, lang, today=TODAY) == expected


@pytest.mark.parametrize(
    ("days", "da", "en"),
    [
        (0, "i dag", "today"),
        (1, "i morgen", "tomorrow"),
        (3, "om 3 dage", "in 3 days"),
        (-1, "overskredet med 1 dag", "1 day overdue"),
        (-2, "overskredet med 2 dage", "2 days overdue"),
    ],
)
def test_relative_days(days: int, da: str, en: str) -> None:
    due = TODAY + dt.timedelta(days=days)
    assert relative_days(due, TODAY, "da") == da
    assert relative_days(due, TODAY, "en") == en


@pytest.mark.parametrize(
    ("amount", "currency", "da", "en"),
    [
        # Babel's currency formats, with a no-break space between amount and unit.
        ("45.50", "DKK", "45,50\u00a0kr.", "DKK\u00a045.50"),
        ("45", "DKK", "45,00\u00a0kr.", "DKK\u00a045.00"),
        ("1234.5", "DKK", "1.234,50\u00a0kr.", "DKK\u00a01,234.50"),
        ("1234567", "DKK", "1.234.567,00\u00a0kr.", "DKK\u00a01,234,567.00"),
        ("12,75", "dkk", "12,75\u00a0kr.", "DKK\u00a012.75"),
        ("-5", "DKK", "-5,00\u00a0kr.", "-DKK\u00a05.00"),
        ("5", "", "5,00\u00a0kr.", "DKK\u00a05.00"),
        ("3.5", "EUR", "3,50\u00a0€", "€3.50"),
        ("3.5", "SEK", "3,50\u00a0SEK", "SEK\u00a03.50"),
        ("ca. 40", "DKK", "ca. 40 DKK", "ca. 40 DKK"),
        ("NaN", "DKK", "NaN DKK", "NaN DKK"),
        ("1E100", "DKK", "1E100 DKK", "1E100 DKK"),
    ],
)
def test_format_amount(amount: str, currency: str, da: str, en: str) -> None:
    assert format_amount(amount, currency, "da") == da
    assert format_amount(amount, currency, "en") == en


@given(st.text(max_size=30), st.text(max_size=5), st.sampled_from(["da", "en", "xx"]))
def test_format_amount_never_raises(amount: str, currency: str, lang: str) -> None:
    assert isinstance(format_amount(amount, currency, lang), str)


def test_is_zero_amount() -> None:
    assert all(is_zero_amount(a) for a in ("0", "0.00", "0,00", "", " ", "-0"))
    assert not any(is_zero_amount(a) for a in ("45.50", "0.01", "x", "-3"))


def test_utf16_counts_like_telegram() -> None:
    assert utf16_len("æøå") == 3
    assert utf16_len("🔴") == 2


def test_truncate_html_keeps_tags_and_entities_whole() -> None:
    text = "<b>Rødt &amp; sort</b> " + "<i>" + "ord " * 100 + "</i>"
    short = truncate_html(text, 60)
    assert utf16_len(short) <= 60
    assert short.startswith("<b>Rødt &amp; sort</b>")
    assert short.endswith("…</i>")
    assert_telegram_html(short)
    assert truncate_html("kort", 60) == "kort"
    # Cut right after an entity would otherwise be split.
    for limit in range(5, 30):
        cut = truncate_html("<b>" + "&amp;" * 10 + "</b>", limit)
        assert utf16_len(cut) <= limit
        assert_telegram_html(cut)


html_piece = st.one_of(
    st.text(alphabet="abc æø🔴 \n", min_size=1, max_size=12),
    st.just("&amp;"),
    st.just("&lt;"),
    st.builds(
        lambda tag, inner: f"<{tag}>{inner}</{tag}>",
        st.sampled_from("bisu"),
        st.text(alphabet="xyz &", max_size=8).map(lambda s: s.replace("&", "&amp;")),
    ),
    st.just('<a href="https://x.dk/?a=1&amp;b=2">link</a>'),
)
html_entry = st.lists(html_piece, min_size=1, max_size=12).map("".join)


@settings(max_examples=150, deadline=None)
@given(html_entry, st.integers(min_value=1, max_value=60))
def test_truncate_html_is_valid_and_within_the_limit(text: str, limit: int) -> None:
    short = truncate_html(text, limit)
    assert utf16_len(short) <= limit
    assert_telegram_html(short)
    if utf16_len(text) <= limit:
        assert short == text
    elif short:
        assert "…" in short


@settings(max_examples=200, deadline=None)
@given(
    st.lists(html_entry, max_size=20),
    st.sampled_from(["", "<b>Dine lån</b>"]),
    st.sampled_from(["", "Forny med /renew"]),
    st.integers(min_value=40, max_value=300),
)
def test_split_messages_packs_in_order(
    entries: list[str], header: str, footer: str, limit: int
) -> None:
    # A separator that no entry contains, so the regrouping can be checked exactly.
    sep = "\x1e"
    messages = split_messages(entries, header=header, footer=footer, limit=limit, separator=sep)
    assert all(utf16_len(message) <= limit for message in messages)
    assert all(message for message in messages)
    parts = [part for part in (header, *entries, footer) if part]
    if all(utf16_len(part) <= limit for part in parts):
        # Nothing lost, nothing cut, order kept: the messages are the parts regrouped.
        assert sep.join(messages) == sep.join(parts)
        if header:
            assert messages[0].startswith(header)
        if footer:
            assert messages[-1].endswith(footer)
        # As few as possible: no two neighbours would have fitted together.
        for first, second in itertools.pairwise(messages):
            assert utf16_len(first) + 1 + utf16_len(second.split(sep)[0]) > limit
    for message in messages:
        assert_telegram_html(message.replace(sep, "\n"))


def test_split_messages_shortens_an_entry_longer_than_a_message() -> None:
    entries = ["<b>kort</b>", "<b>" + "langt ord " * 1000 + "</b>", "slut"]
    messages = split_messages(entries, header="Hoved", limit=4096)
    assert len(messages) == 3
    assert messages[0] == "Hoved\n\n<b>kort</b>"
    assert messages[1].endswith("…</b>") and utf16_len(messages[1]) <= 4096
    assert messages[2] == "slut"


def test_split_messages_empty() -> None:
    assert split_messages([]) == []
    assert split_messages([], header="Ingen lån") == ["Ingen lån"]


def test_shorten_plain_text() -> None:
    assert shorten("  a \n b  ", 10) == "a b"
    assert shorten("abcdefghij", 5) == "abcd…"
    assert shorten("abc defghij", 5) == "abc…"
    # A button label is cut between words, not in the middle of one.
    assert shorten("Babettes gæstebud og andre fortællinger", 21) == "Babettes gæstebud og…"
    assert shorten("Babettes gæstebud og andre fortællinger", 19) == "Babettes gæstebud…"
    assert shorten("Tolkien: Ringenes herre", 12) == "Tolkien:…"


def test_paginate_keeps_entries_whole_within_count_and_size() -> None:
    entries = [f"<b>{n}</b>\n" + "x" * (50 + 37 * (n % 7)) for n in range(65)]
    pages = paginate(entries, per_page=10, limit=1000)
    assert [entry for page in pages for entry in page] == entries
    assert all(0 < len(page) <= 10 for page in pages)
    assert all(utf16_len("\n\n".join(page)) <= 1000 for page in pages)
    assert paginate([], per_page=10, limit=1000) == [[]]
    # An entry longer than a page is shortened, not lost.
    [[long]] = paginate(["<b>" + "y" * 3000 + "</b>"], per_page=10, limit=1000)
    assert utf16_len(long) <= 1000 and long.endswith("…</b>")


@pytest.mark.parametrize("lang", ["da", "en", "uk"])
@pytest.mark.parametrize("key", ["shelf.expected", "borrower.order.has_loan"])
def test_a_date_ending_a_sentence_ends_it_with_one_full_stop(lang: str, key: str) -> None:
    """Danish writes "30. nov.": at the end of a sentence its stop is the sentence's."""
    text = str(t(lang, key, date=format_date(dt.date(2026, 11, 30), lang, today=TODAY), title="X"))
    assert ".." not in text
    assert text.endswith(".")


def test_a_title_ending_in_an_ellipsis_keeps_it_before_the_full_stop() -> None:
    text = str(t("en", "borrower.order.has_loan", title="Hmm", date="Wait..."))
    assert text.endswith("due Wait...")
