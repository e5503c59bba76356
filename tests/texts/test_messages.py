"""The gettext catalogues: every text translated, the same placeholders and tags in every form,
the checked-in template current, the .po being the catalogue in use, and every key used exists."""

from __future__ import annotations

import ast
import gettext
import io
import re
import shutil
import string
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.mofile import write_mo
from babel.messages.plurals import get_plural
from babel.messages.pofile import read_po

import bot
import bot.texts as texts
from bot.texts import LANGUAGES, LOCALE_DIR, SOURCE_LANGUAGE, keys, load_messages
from bot.texts.catalog import OMITTABLE_FIELDS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(bot.__file__).parent
POT = LOCALE_DIR / "messages.pot"
TRANSLATED = tuple(lang for lang in LANGUAGES if lang != SOURCE_LANGUAGE)
UKRAINIAN_PLURALS = (
    "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && "
    "(n%100<10 || n%100>=20) ? 1 : 2);"
)
MESSAGES = load_messages()
_TAG = re.compile(r"</?[A-Za-z][^>]*>")


def _po(lang: str) -> Catalog:
    with (LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po").open("rb") as fh:
        return read_po(fh, locale=lang)


def _entries(catalog: Catalog) -> dict[str, Message]:
    return {str(message.context): message for message in catalog if message.id}


def _forms(value: str | tuple[str, ...] | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _shape(template: str) -> tuple[set[str], Counter[str]]:
    """What must survive translation: the `{name}` fields and the HTML tags."""
    fields = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    return fields, Counter(_TAG.findall(template))


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_text_is_translated_and_nothing_else_is_there(lang: str) -> None:
    catalog = _po(lang)
    entries = _entries(catalog)
    assert set(MESSAGES) - set(entries) == set(), "not in the .po: run `make messages`"
    assert set(entries) - set(MESSAGES) == set(), "in the .po only: run `make messages`"
    for key, message in MESSAGES.items():
        entry = entries[key]
        source = message.text if message.plural is None else (message.text, message.plural)
        # The msgid is what the lookup uses: a stale one shows the patron English.
        assert entry.id == source, f"{key}: the .po has an old English text (`make messages`)"
        assert not entry.fuzzy, f"{key}: fuzzy, the translator has to check it"
        forms = _forms(entry.string)
        assert len(forms) == (1 if message.plural is None else catalog.num_plurals), key
        assert all(form.strip() for form in forms), f"{key}: not translated"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_placeholders_and_tags_are_the_same_in_every_form(lang: str) -> None:
    entries = _entries(_po(lang))
    for key, message in MESSAGES.items():
        english = [message.text] + ([message.plural] if message.plural is not None else [])
        shape = _shape(english[0])
        for text in english[1:]:
            assert _shape(text) == shape, f"{key}: {text!r} differs from {english[0]!r}"
        for text in _forms(entries[key].string):
            assert _fits(key, text, shape), f"{key}: {text!r} differs from {english[0]!r}"


def _fits(key: str, text: str, shape: tuple[set[str], Counter[str]]) -> bool:
    fields, tags = _shape(text)
    return (fields | (shape[0] & OMITTABLE_FIELDS.get(key, frozenset())), tags) == shape


def test_only_an_omittable_field_may_be_left_out() -> None:
    english = _shape("👋 Hi{name}! I help you, <b>{count}</b>")
    assert _fits("connect.welcome", "👋 Вітаю! Я допомагаю, <b>{count}</b>", english)
    assert not _fits("connect.welcome", "👋 Вітаю{name}! Я допомагаю, <b></b>", english)
    assert not _fits("cards.added", "👋 Вітаю! Я допомагаю, <b>{count}</b>", english)


def test_the_shape_check_can_fail() -> None:
    assert _shape("<b>{count}</b> x") != _shape("<b>{n}</b> x")
    assert _shape("<b>{count}</b> x") != _shape("<i>{count}</i> x")
    assert _shape("<b>{count}</b> x") != _shape("{count} x")


def test_the_translated_languages_are_those_of_the_list() -> None:
    assert {"da", "uk"} <= set(TRANSLATED)
    found = sorted(path.parent.parent.name for path in LOCALE_DIR.glob("*/LC_MESSAGES/*.po"))
    assert found == sorted(TRANSLATED), "a .po without its line in LOCALES, or the reverse"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_plural_forms_are_the_languages_own(lang: str) -> None:
    """The .po's header says the rule CLDR gives the language (what `pybabel init` writes)."""
    catalog = _po(lang)
    assert dict(catalog.mime_headers)["Plural-Forms"] == str(get_plural(lang))
    assert not catalog.fuzzy


def test_danish_has_two_plural_forms_and_ukrainian_three() -> None:
    assert _po("da").plural_forms == "nplurals=2; plural=(n != 1);"
    assert _po("uk").plural_forms == UKRAINIAN_PLURALS


@pytest.mark.parametrize(
    ("n", "form"),
    [
        *[(0, 2), (1, 0), (2, 1), (4, 1), (5, 2), (11, 2), (12, 2), (14, 2)],
        *[(21, 0), (22, 1), (25, 2), (101, 0), (111, 2), (1234, 1)],
    ],
)
def test_ukrainian_has_three_plural_forms(n: int, form: int) -> None:
    """One (1, 21, 101), few (2-4, 22-24, not 12-14) and many (0, 5-20, 25-30, ...)."""
    forms = _forms(_entries(_po("uk"))["lists.loans.count"].string)
    assert forms == ["{count} видача", "{count} видачі", "{count} видач"]
    assert texts.t("uk", "lists.loans.count", count=n) == forms[form].format(
        count=texts._param(n, True, "uk")
    )


def test_the_checked_in_template_is_what_make_messages_extracts(tmp_path: Path) -> None:
    make = shutil.which("make")
    assert make is not None, "make is needed to run the same extraction as `make messages`"
    fresh = tmp_path / "messages.pot"
    result = subprocess.run(  # noqa: S603 - our own Makefile, fixed arguments
        [
            make,
            "--no-print-directory",
            "-s",
            "-C",
            str(ROOT),
            "extract-messages",
            f"POT={fresh}",
            f"BIN={Path(sys.executable).parent}",
            "STAMP=",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr

    def load(path: Path) -> list[tuple[object, ...]]:
        with path.open("rb") as fh:
            catalog = read_po(fh)
        return [
            (m.context, m.id, tuple(m.auto_comments), tuple(sorted(m.flags)), tuple(m.locations))
            for m in catalog
            if m.id
        ]

    extracted = load(fresh)
    assert {entry[0] for entry in extracted} == set(MESSAGES)
    assert load(POT) == extracted, "the template is out of date: run `make messages`"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_the_po_compiles_to_the_catalogue_in_use(lang: str) -> None:
    catalog = _po(lang)
    problems = [(message.context, errors) for message, errors in catalog.check() if errors]
    assert problems == []
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    fresh = gettext.GNUTranslations(buffer)
    in_use = texts._TRANSLATIONS[lang]
    for key, message in MESSAGES.items():
        if message.plural is None:
            assert in_use.pgettext(key, message.text) == fresh.pgettext(key, message.text), (
                f"{key}: the catalogue in use is not the .po"
            )
            continue
        for n in (0, 1, 2, 5, 21, 101):
            expected = fresh.npgettext(key, message.text, message.plural, n)
            assert in_use.npgettext(key, message.text, message.plural, n) == expected, key


# --- the keys the code uses -------------------------------------------------------------

_AREAS = sorted({key.split(".", 1)[0] for key in MESSAGES})
_KEY = re.compile(rf"^(?:{'|'.join(_AREAS)})\.[a-z0-9_]+(?:\.[a-z0-9_]+)*$")
_PREFIX = re.compile(rf"^(?:{'|'.join(_AREAS)})\.[a-z0-9_.]*$")
# Strings shaped like a text key that are something else.
NOT_TEXT_KEYS = frozenset({"borrower.branch_names"})  # a cache entry of the bot's data


def _sources() -> list[Path]:
    catalog = PACKAGE / "texts" / "catalog"
    return [path for path in sorted(PACKAGE.rglob("*.py")) if catalog not in path.parents]


def _used_keys() -> tuple[set[str], set[str]]:
    """Every string in the code that looks like a text key, and every f-string key prefix."""
    whole: set[str] = set()
    prefixes: set[str] = set()
    for path in _sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        in_fstrings = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr) and node.values:
                in_fstrings.update(id(value) for value in node.values)
                first = node.values[0]
                if isinstance(first, ast.Constant) and _PREFIX.match(str(first.value)):
                    prefixes.add(str(first.value))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in in_fstrings
                and _KEY.match(node.value)
            ):
                whole.add(node.value)
    return whole - NOT_TEXT_KEYS, prefixes


def test_every_key_the_code_uses_exists() -> None:
    whole, prefixes = _used_keys()
    assert len(whole) > 100  # the scan does find the keys
    assert whole - keys("da") == set()
    assert prefixes  # f"commands.{name}" and the like
    for prefix in prefixes:
        assert any(key.startswith(prefix) for key in keys("da")), prefix


def test_every_t_call_passes_the_params_its_text_needs() -> None:
    """t(lang, "key", ...) with a literal key: each `{field}` and a plural's count is passed."""
    checked = 0
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "t"
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
            ):
                continue
            if any(keyword.arg is None for keyword in node.keywords):  # **params
                continue
            message = MESSAGES[node.args[1].value]
            given = {keyword.arg for keyword in node.keywords}
            needed = _shape(message.text)[0]
            if message.plural is not None:
                needed |= _shape(message.plural)[0] | {message.n}
            where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {message.key}"
            assert needed <= given, f"{where}: missing {sorted(needed - given)}"
            checked += 1
    assert checked > 100
