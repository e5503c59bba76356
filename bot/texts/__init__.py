"""Patron-facing texts in Danish, English and Ukrainian, as Telegram HTML, from gettext catalogues.

English is the source: every module in `bot.texts.catalog` holds a `MESSAGES` tuple of
`_(key, text)` / `_n(key, singular, plural)` entries, discovered with `pkgutil` (adding a module
is enough) and merged once at import; a key defined twice is an error at load time rather than a
silent override. Every other language comes from `locale/<lang>/LC_MESSAGES/messages.po`, the
file a translator edits (`make messages`), looked up with the key as msgctxt. The .po is read at
import with Babel rather than compiled to a .mo at build time: there is no build output to
forget, so `pip install .`, a wheel, an sdist and an editable checkout all carry the same texts.
A new language is its .po plus its line in `LOCALES`.
"""

from __future__ import annotations

import functools
import gettext
import html
import importlib
import io
import pkgutil
import re
import string
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Final

from babel import Locale
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal

from bot.texts import catalog
from bot.texts.catalog import Message

# The one list of languages, each with its Babel locale (numbers, dates and money, see
# `bot.texts.formatting`); everything else that lists languages derives from it.
LOCALES: Final = {"da": "da_DK", "en": "en_GB", "uk": "uk_UA"}
LANGUAGES: tuple[str, ...] = tuple(LOCALES)
DEFAULT_LANGUAGE: Final = "da"
SOURCE_LANGUAGE: Final = "en"
# The one place the catalogues' location is named (package data in pyproject.toml lists the .po).
LOCALE_DIR: Final = Path(__file__).parent / "locale"
DOMAIN: Final = "messages"

__all__ = [
    "DEFAULT_LANGUAGE",
    "LANGUAGES",
    "Raw",
    "keys",
    "language_name",
    "pick_language",
    "t",
]


class Raw(str):
    """Already-safe HTML: t() does not escape it."""

    __slots__ = ()


def load_messages(package: ModuleType = catalog) -> Mapping[str, Message]:
    """Every `MESSAGES` entry of `package`'s modules by key; RuntimeError on a key defined twice."""
    merged: dict[str, Message] = {}
    origin: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        entries = getattr(module, "MESSAGES", None)
        if not isinstance(entries, tuple | list):
            raise RuntimeError(f"text catalogue {module.__name__} has no MESSAGES tuple")
        for message in entries:
            if not isinstance(message, Message):
                raise RuntimeError(f"text catalogue {module.__name__}: {message!r} is not _(...)")
            if message.key in merged:
                raise RuntimeError(
                    f"text key {message.key!r} is defined in both {origin[message.key]} "
                    f"and {module.__name__}"
                )
            merged[message.key] = message
            origin[message.key] = module.__name__
    return MappingProxyType(merged)


def load_translations(directory: Path = LOCALE_DIR) -> Mapping[str, gettext.NullTranslations]:
    """The catalogue of each language, read from its .po; English, the source, needs none.

    Fuzzy entries are left out, as `pybabel compile` leaves them out: a patron sees the English
    source until a translator has confirmed the text.
    """
    found: dict[str, gettext.NullTranslations] = {SOURCE_LANGUAGE: gettext.NullTranslations()}
    for lang in LANGUAGES:
        if lang == SOURCE_LANGUAGE:
            continue
        path = directory / lang / "LC_MESSAGES" / f"{DOMAIN}.po"
        try:
            with path.open("rb") as fh:
                catalog_ = read_po(fh, locale=lang, domain=DOMAIN)
        except FileNotFoundError:
            raise RuntimeError(
                f"no {lang} texts at {path}: the installed package is incomplete, reinstall it"
            ) from None
        compiled = io.BytesIO()
        write_mo(compiled, catalog_, use_fuzzy=False)
        compiled.seek(0)
        found[lang] = gettext.GNUTranslations(compiled)
    return MappingProxyType(found)


_MESSAGES: Final = load_messages()
_TRANSLATIONS: Final = load_translations()
_LOCALES: Final = {lang: Locale.parse(code) for lang, code in LOCALES.items()}


# typed: a count of True is refused by `_template`, not answered from the cache for 1.
@functools.lru_cache(maxsize=4096, typed=True)
def _form(lang: str, key: str, n: object) -> tuple[str, frozenset[str], frozenset[str]]:
    """The template `t` formats (the plural form for the count `n`), its bare fields and the
    fields a full stop follows: looked up and parsed once, where a command shows a dozen
    texts."""
    message = _MESSAGES[key]
    template = _template(lang, message, {message.n: n})
    return template, _bare_fields(template), _stopped_fields(template)


def _template(lang: str, message: Message, params: Mapping[str, object]) -> str:
    translations = _TRANSLATIONS.get(lang, _TRANSLATIONS[DEFAULT_LANGUAGE])
    if message.plural is None:
        return translations.pgettext(message.key, message.text)
    n = params[message.n]  # KeyError, like any missing param
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"{message.key}: the plural count {message.n!r} is not an int: {n!r}")
    return translations.npgettext(message.key, message.text, message.plural, n)


def load_catalogue(package: ModuleType = catalog) -> Mapping[str, Mapping[str, str]]:
    """Every template per language, a plural one in its plural form (enough to look a text up).

    RuntimeError on a key defined twice.
    """
    messages = load_messages(package)
    return MappingProxyType(
        {
            lang: MappingProxyType(
                {key: _template(lang, message, {message.n: 2}) for key, message in messages.items()}
            )
            for lang in LANGUAGES
        }
    )


_STOPPED: Final = re.compile(r"(?<!\{)\{([A-Za-z_]\w*)\}\.")


def _bare_fields(template: str) -> frozenset[str]:
    """Fields the template shows as plain `{name}`: their numbers get the locale's grouping."""
    bare: set[str] = set()
    styled: set[str] = set()
    for _, field, spec, conversion in string.Formatter().parse(template):
        if field is None:
            continue
        if spec or conversion or not field.isidentifier():
            styled.add(field.split(".", 1)[0].split("[", 1)[0])
        else:
            bare.add(field)
    return frozenset(bare - styled)


def _stopped_fields(template: str) -> frozenset[str]:
    """Fields the template ends a sentence after ("afleveres {date}.")."""
    return frozenset(_STOPPED.findall(template))


def _param(value: object, bare: bool, lang: str) -> object:
    if isinstance(value, Raw):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        # 1.234 / 1,234; a template with its own format spec (`{n:d}`) gets the number.
        if not bare:
            return value
        if -1000 < value < 1000:  # nothing to group, and every locale writes ASCII digits
            return str(value)
        return format_decimal(value, locale=_LOCALES.get(lang, _LOCALES[DEFAULT_LANGUAGE]))
    if isinstance(value, float | Decimal):
        return value
    return html.escape(str(value))


def t(lang: str, key: str, /, **params: object) -> str:
    """The text `key` in `lang`, formatted with HTML-escaped `params` (Raw ones are kept).

    Returns `Raw`, so a text can be passed into another text without being escaped twice.
    Integer params are shown with the locale's digit grouping. A plural text (`_n`) takes its
    form from the number in its count param (`count` unless the catalogue names another).
    An unknown language falls back to Danish; a text not (or not yet) translated is shown in
    English (a patron gets an answer), and a key missing everywhere raises KeyError.
    """
    message = _MESSAGES[key]
    template, bare, stopped = _form(lang, key, params[message.n] if message.plural else None)
    values = {name: _param(value, name in bare, lang) for name, value in params.items()}
    for name in stopped:
        # A value ending in a full stop ("30. nov.", an abbreviation) ends the sentence with it.
        value = values.get(name)
        if isinstance(value, str) and value.endswith("."):
            values[name] = value[:-1]
    return Raw(template.format_map(values))


def pick_language(saved: str | None, telegram_code: str | None) -> str:
    """The patron's saved choice, else their Telegram language (an IETF tag such as "uk" or
    "da-DK"); English for a language we do not speak, Danish when nothing is known."""
    if saved in LANGUAGES:
        return saved
    code = (telegram_code or "").strip().lower()
    if not code:
        return DEFAULT_LANGUAGE
    primary = code.replace("_", "-").split("-", 1)[0]
    return primary if primary in LANGUAGES else SOURCE_LANGUAGE


def language_name(lang: str) -> str:
    """The language by its own name ("Dansk", "English", "Українська"), as /language offers
    it: from Babel, so that a new language needs no text of its own in every catalogue."""
    name = str(_LOCALES[lang].get_language_name())
    return name[:1].upper() + name[1:]


def keys(lang: str) -> frozenset[str]:
    """Every text key (each is known in every language: an untranslated one is shown in English)."""
    del lang
    return frozenset(_MESSAGES)
