"""Every catalogue module: same keys and placeholders in both languages, valid Telegram HTML."""

from __future__ import annotations

import importlib
import string
import sys
from pathlib import Path

import pytest

from library_bot.texts import LANGUAGES, Raw, keys, load_catalogue, pick_language, t
from tests.texts.telegram_html import assert_telegram_html, telegram_html_problems

CATALOGUE = load_catalogue()


def _placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def test_both_languages_have_exactly_the_same_keys() -> None:
    da, en = set(CATALOGUE["da"]), set(CATALOGUE["en"])
    assert da - en == set(), "only in Danish"
    assert en - da == set(), "only in English"
    assert keys("da") == keys("en") == frozenset(da)


def test_keys_are_prefixed_by_their_area() -> None:
    for key in CATALOGUE["da"]:
        area, _, rest = key.partition(".")
        assert area and rest, key


@pytest.mark.parametrize("key", sorted(CATALOGUE["da"]))
def test_same_placeholders_in_both_languages(key: str) -> None:
    da, en = CATALOGUE["da"][key], CATALOGUE["en"].get(key, "")
    assert _placeholders(da) == _placeholders(en), key


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_text_is_non_empty_valid_telegram_html(lang: str) -> None:
    for key, template in CATALOGUE[lang].items():
        assert template.strip(), key
        params = {name: "Æ & <x> 3" for name in _placeholders(template)}
        try:
            text = t(lang, key, **params)
        except (ValueError, TypeError):  # a numeric format spec: try a number
            text = t(lang, key, **dict.fromkeys(params, 3))
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
    ],
)
def test_pick_language(saved: str | None, telegram: str | None, expected: str) -> None:
    assert pick_language(saved, telegram) == expected


def test_a_duplicate_key_fails_at_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "dupcat"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in ("one", "two"):
        (package / f"{name}.py").write_text(
            f"DA = {{'x.same': 'da {name}'}}\nEN = {{'x.same': 'en {name}'}}\n"
        )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        module = importlib.import_module("dupcat")
        with pytest.raises(RuntimeError, match=r"x\.same"):
            load_catalogue(module)
    finally:
        for name in ("dupcat", "dupcat.one", "dupcat.two"):
            sys.modules.pop(name, None)


def test_the_checker_catches_bad_html() -> None:
    assert telegram_html_problems("<b>x</i>")
    assert telegram_html_problems("<b>x")
    assert telegram_html_problems("a & b")
    assert telegram_html_problems("<div>x</div>")
    assert telegram_html_problems("&nbsp;")
    assert not telegram_html_problems('<a href="https://x.dk/?a=1&amp;b=2">x</a> &lt;3')
