"""Patron-facing texts in Danish and English, as Telegram HTML.

Every module in `library_bot.texts.catalog` defines `DA` and `EN` dicts with the same keys, prefixed
by
its area (`common.`, `render.`, ...). They are discovered with `pkgutil`, so adding a module is
enough, and merged once at import; a key defined twice is an error at load time rather than a
silent override.
"""

from __future__ import annotations

import html
import importlib
import pkgutil
from collections.abc import Mapping
from decimal import Decimal
from types import MappingProxyType, ModuleType
from typing import Final

from library_bot.texts import catalog

LANGUAGES: tuple[str, ...] = ("da", "en")
DEFAULT_LANGUAGE: Final = "da"

__all__ = ["DEFAULT_LANGUAGE", "LANGUAGES", "Raw", "keys", "pick_language", "t"]


class Raw(str):
    """Already-safe HTML: t() does not escape it."""

    __slots__ = ()


def load_catalogue(package: ModuleType = catalog) -> Mapping[str, Mapping[str, str]]:
    """Every module of `package` merged per language; RuntimeError on a key defined twice."""
    merged: dict[str, dict[str, str]] = {lang: {} for lang in LANGUAGES}
    origin: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for lang in LANGUAGES:
            table = getattr(module, lang.upper(), None)
            if not isinstance(table, dict):
                raise RuntimeError(f"text catalogue {module.__name__} has no {lang.upper()} dict")
            for key, text in table.items():
                if not isinstance(key, str) or not isinstance(text, str):
                    raise RuntimeError(f"text catalogue {module.__name__}: {key!r} is not str")
                if key in merged[lang]:
                    raise RuntimeError(
                        f"text key {key!r} is defined in both {origin[key]} and {module.__name__}"
                    )
                merged[lang][key] = text
                origin.setdefault(key, module.__name__)
    return MappingProxyType({lang: MappingProxyType(table) for lang, table in merged.items()})


_CATALOGUE: Final = load_catalogue()


def _param(value: object) -> object:
    # Numbers pass through untouched so `{n:d}`-style format specs keep working.
    if isinstance(value, Raw) or (
        isinstance(value, int | float | Decimal) and not isinstance(value, bool)
    ):
        return value
    return html.escape(str(value))


def t(lang: str, key: str, /, **params: object) -> str:
    """The text `key` in `lang`, formatted with HTML-escaped `params` (Raw ones are kept).

    Returns `Raw`, so a text can be passed into another text without being escaped twice.
    An unknown language falls back to Danish; a key missing from one language falls back to the
    other (a patron gets an answer), and a key missing everywhere raises KeyError.
    """
    table = _CATALOGUE.get(lang, _CATALOGUE[DEFAULT_LANGUAGE])
    template = table.get(key)
    if template is None:
        for other in LANGUAGES:
            template = _CATALOGUE[other].get(key)
            if template is not None:
                break
        else:
            raise KeyError(key)
    return Raw(template.format_map({name: _param(value) for name, value in params.items()}))


def pick_language(saved: str | None, telegram_code: str | None) -> str:
    """The patron's saved choice, else their Telegram language; Danish when nothing is known."""
    if saved in LANGUAGES:
        return saved
    code = (telegram_code or "").strip().lower()
    if not code:
        return DEFAULT_LANGUAGE
    return "da" if code.startswith("da") else "en"


def keys(lang: str) -> frozenset[str]:
    """Every text key known in `lang` (Danish for an unknown language)."""
    return frozenset(_CATALOGUE.get(lang, _CATALOGUE[DEFAULT_LANGUAGE]))
