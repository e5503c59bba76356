"""t() and the catalogue modules: keys, escaping, plurals, numbers, valid Telegram HTML.

The gettext side (every text translated, same placeholders, the .pot current) is in
test_messages.py.
"""

from __future__ import annotations

import datetime as dt
import importlib
import string
import sys
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po
from babel.numbers import format_decimal

import bot.texts as texts
from bot.texts import (
    LANGUAGES,
    SOURCE_LANGUAGE,
    Raw,
    keys,
    language_name,
    load_catalogue,
    load_messages,
    load_translations,
    pick_language,
    t,
)
from bot.texts.catalog import OMITTABLE_FIELDS
from bot.texts.formatting import relative_days
from tests.texts.telegram_html import assert_telegram_html, telegram_html_problems

CATALOGUE = load_catalogue()
MESSAGES = load_messages()


def _placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def test_every_language_has_exactly_the_same_keys() -> None:
    assert set(CATALOGUE) == set(LANGUAGES) == {"da", "en", "uk"}
    for lang in LANGUAGES:
        assert set(CATALOGUE[lang]) == set(MESSAGES), lang
        assert keys(lang) == frozenset(MESSAGES), lang
    assert keys("fr") == frozenset(MESSAGES)


def test_keys_are_prefixed_by_their_area() -> None:
    for key in CATALOGUE["da"]:
        area, _, rest = key.partition(".")
        assert area and rest, key


@pytest.mark.parametrize("key", sorted(CATALOGUE["da"]))
def test_same_placeholders_in_every_language(key: str) -> None:
    english = _placeholders(CATALOGUE[SOURCE_LANGUAGE][key])
    may_go = OMITTABLE_FIELDS.get(key, frozenset())
    for lang in LANGUAGES:
        assert _placeholders(CATALOGUE[lang][key]) | (english & may_go) == english, (lang, key)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("n", [0, 1, 2, 1234])
def test_every_text_is_non_empty_valid_telegram_html(lang: str, n: int) -> None:
    for key, template in CATALOGUE[lang].items():
        assert template.strip(), key
        params: dict[str, object] = {name: "Æ & <x> 3" for name in _placeholders(template)}
        params[MESSAGES[key].n] = n  # a plural's count (ignored by the others)
        try:
            text = t(lang, key, **params)
        except (ValueError, TypeError):  # a numeric format spec: try a number
            text = t(lang, key, **dict.fromkeys(params, n))
        assert text.strip(), key
        assert_telegram_html(text)


def test_common_texts_exist_and_read_naturally() -> None:
    for key in (
        "common.not_connected",
        "common.login_button",
        "common.unavailable",
        "common.malformed",
        "common.reconnect",
        "common.stale_button",
        "common.unknown_command",
        "common.yes",
        "common.no",
        "common.cancel",
        "common.done",
        "common.too_long_input",
    ):
        assert key in keys("da"), key
    assert "bibliotek" in t("da", "common.unavailable").lower()
    assert "try again shortly" in t("en", "common.unavailable").lower()
    assert "/help" in t("da", "common.unknown_command")
    assert "/help" in t("en", "common.unknown_command")
    assert "бібліотечна система" in t("uk", "common.unavailable").lower()
    assert "/help" in t("uk", "common.unknown_command")


def test_each_language_is_offered_by_its_own_name() -> None:
    assert [language_name(lang) for lang in LANGUAGES] == ["Dansk", "English", "Українська"]


def test_params_are_escaped_unless_raw() -> None:
    text = t("en", "render.hold.branch", branch="<b>Børn & unge</b>")
    assert text == "Pick up at &lt;b&gt;Børn &amp; unge&lt;/b&gt;"
    assert t("en", "render.hold.branch", branch=Raw("<i>X</i>")) == "Pick up at <i>X</i>"
    # A rendered text is Raw, so nesting does not escape it twice.
    inner = t("da", "render.hold.branch", branch="A & B")
    assert t("da", "render.hold.branch", branch=inner) == "Afhentes på Afhentes på A &amp; B"


def test_unknown_language_is_danish_and_a_missing_key_raises() -> None:
    assert t("fr", "common.yes") == t("da", "common.yes") == "Ja"
    assert t("en", "common.yes") == "Yes"
    with pytest.raises(KeyError):
        t("da", "common.no_such_key")
    with pytest.raises(KeyError):
        t("da", "render.hold.branch")  # its parameter is missing
    with pytest.raises(KeyError):
        t("da", "borrower.search.header", query="x")  # a plural without its count
    with pytest.raises(TypeError):
        t("da", "borrower.search.header", query="x", count="3")


@pytest.mark.parametrize(
    ("lang", "n", "expected"),
    [
        ("da", 0, "🔎 <b>0 resultater</b> for »ø«"),
        ("da", 1, "🔎 <b>1 resultat</b> for »ø«"),
        ("da", 2, "🔎 <b>2 resultater</b> for »ø«"),
        ("da", 1234, "🔎 <b>1.234 resultater</b> for »ø«"),
        ("en", 1, "🔎 <b>1 result</b> for “ø”"),
        ("en", 21, "🔎 <b>21 results</b> for “ø”"),
        ("en", 1234567, "🔎 <b>1,234,567 results</b> for “ø”"),
        ("uk", 0, "🔎 <b>0 результатів</b> за запитом «ø»"),
        ("uk", 1, "🔎 <b>1 результат</b> за запитом «ø»"),
        ("uk", 3, "🔎 <b>3 результати</b> за запитом «ø»"),
        ("uk", 5, "🔎 <b>5 результатів</b> за запитом «ø»"),
        ("uk", 12, "🔎 <b>12 результатів</b> за запитом «ø»"),
        ("uk", 21, "🔎 <b>21 результат</b> за запитом «ø»"),
        ("uk", 1234, "🔎 <b>1\u00a0234 результати</b> за запитом «ø»"),
    ],
)
def test_plurals_follow_the_count_and_numbers_are_grouped(lang: str, n: int, expected: str) -> None:
    assert t(lang, "borrower.search.header", count=n, query="ø") == expected


def test_a_plural_can_follow_a_param_other_than_count() -> None:
    assert t("da", "connect.expiry_warning", days=1).startswith(
        "⏳ Dit bibliotekslogin udløber om 1 dag."
    )
    assert t("da", "connect.expiry_warning", days=3).startswith(
        "⏳ Dit bibliotekslogin udløber om 3 dage."
    )
    assert t("en", "connect.expiry_warning", days=1).startswith(
        "⏳ Your library login expires in 1 day."
    )
    assert t("en", "connect.expiry_warning", days=3).startswith(
        "⏳ Your library login expires in 3 days."
    )
    for days, word in ((1, "день"), (3, "дні"), (5, "днів"), (21, "день")):
        assert t("uk", "connect.expiry_warning", days=days).startswith(
            f"⏳ Термін дії вашого входу до бібліотеки спливає через {days} {word}."
        )
    today = dt.date(2026, 11, 22)
    assert relative_days(dt.date(2026, 11, 1), today, "da") == "overskredet med 21 dage"
    assert relative_days(dt.date(2026, 11, 21), today, "en") == "1 day overdue"
    assert relative_days(dt.date(2026, 11, 1), today, "uk") == "прострочено на 21 день"
    assert relative_days(dt.date(2026, 11, 20), today, "uk") == "прострочено на 2 дні"
    assert relative_days(dt.date(2026, 11, 27), today, "uk") == "через 5 днів"
    assert relative_days(dt.date(2026, 11, 23), today, "uk") == "завтра"


def test_numbers_are_grouped_unless_the_template_formats_them() -> None:
    assert t("da", "borrower.loans.header", count=12345) == "📚 <b>Dine lån</b> (12.345)"
    assert t("en", "borrower.loans.header", count=12345) == "📚 <b>Your loans</b> (12,345)"
    assert t("fr", "borrower.loans.header", count=1000) == "📚 <b>Dine lån</b> (1.000)"
    assert t("uk", "borrower.loans.header", count=12345) == "📚 <b>Ваші видачі</b> (12\u00a0345)"
    # bool is no number here; a Raw number-like string is left alone.
    assert t("en", "borrower.loans.header", count=True) == "📚 <b>Your loans</b> (True)"
    assert t("en", "borrower.loans.header", count=Raw("1234")) == "📚 <b>Your loans</b> (1234)"
    for lang, code in texts.LOCALES.items():  # small numbers skip Babel: the same text
        for n in (-1000, -999, -1, 0, 7, 999, 1000, 10**9):
            assert texts._param(n, True, lang) == format_decimal(n, locale=code), (lang, n)
    # A field with its own format spec gets the number itself.
    assert texts._bare_fields("{a} {b:d} {c!r} {d.real} {a:>3}") == frozenset()
    assert texts._bare_fields("{a} {b:d} {c}") == {"a", "c"}


def test_a_text_not_translated_yet_is_shown_in_english(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for lang, yes in (("da", "Jo"), ("uk", "Атож")):
        catalog = Catalog(locale=lang)
        catalog.add("Yes", yes, context="common.yes")
        folder = tmp_path / lang / "LC_MESSAGES"
        folder.mkdir(parents=True)
        with (folder / "messages.po").open("wb") as fh:
            write_po(fh, catalog)
    monkeypatch.setattr(texts, "_TRANSLATIONS", load_translations(tmp_path))
    texts._form.cache_clear()  # the templates looked up in the installed catalogues
    try:
        assert t("da", "common.yes") == "Jo"
        assert t("uk", "common.yes") == "Атож"
        for lang in ("da", "uk"):
            assert t(lang, "common.no") == "No"
            assert (
                t(lang, "borrower.search.header", count=1, query="x")
                == "🔎 <b>1 result</b> for “x”"
            )
    finally:
        texts._form.cache_clear()


def test_missing_compiled_texts_are_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="reinstall"):
        load_translations(tmp_path)


@pytest.mark.parametrize(
    ("saved", "telegram", "expected"),
    [
        ("en", "da", "en"),
        ("da", "en-GB", "da"),
        (None, "da", "da"),
        (None, "da-DK", "da"),
        (None, "en", "en"),
        (None, "de", "en"),
        (None, None, "da"),
        (None, "", "da"),
        ("xx", None, "da"),
        (None, "uk", "uk"),
        (None, "uk-UA", "uk"),
        (None, "UK", "uk"),
        ("uk", "da", "uk"),
        ("da", "uk", "da"),
        (None, "ru", "en"),
        (None, "ukr", "en"),
    ],
)
def test_pick_language(saved: str | None, telegram: str | None, expected: str) -> None:
    assert pick_language(saved, telegram) == expected


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, modules: dict[str, str]) -> str:
    package = tmp_path / "scratchcat"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, source in modules.items():
        (package / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    return package.name


@pytest.fixture
def scratch_modules() -> object:
    yield
    for name in [name for name in sys.modules if name.startswith("scratchcat")]:
        sys.modules.pop(name, None)


@pytest.mark.usefixtures("scratch_modules")
def test_a_duplicate_key_fails_at_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = "from bot.texts.catalog import _\nMESSAGES = (_('x.same', 'en {name}'),)\n"
    name = _package(tmp_path, monkeypatch, {"one": source, "two": source})
    with pytest.raises(RuntimeError, match=r"x\.same"):
        load_catalogue(importlib.import_module(name))


@pytest.mark.usefixtures("scratch_modules")
def test_a_module_in_the_old_dict_form_fails_at_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = _package(tmp_path, monkeypatch, {"old": "DA = {'x.a': 'a'}\nEN = {'x.a': 'a'}\n"})
    with pytest.raises(RuntimeError, match=r"old has no MESSAGES"):
        load_messages(importlib.import_module(name))


def test_the_checker_catches_bad_html() -> None:
    assert telegram_html_problems("<b>x</i>")
    assert telegram_html_problems("<b>x")
    assert telegram_html_problems("a & b")
    assert telegram_html_problems("<div>x</div>")
    assert telegram_html_problems("&nbsp;")
    assert not telegram_html_problems('<a href="https://x.dk/?a=1&amp;b=2">x</a> &lt;3')
