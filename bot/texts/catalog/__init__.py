"""Text catalogues: one module per area, each a `MESSAGES` tuple of `_(...)` / `_n(...)` entries.

English is the source language and lives here; Danish lives in
`bot/texts/locale/da/LC_MESSAGES/messages.po`. `pybabel extract` (`make messages`) reads
the markers below: the first argument (the key) becomes the msgctxt, the English text the msgid.
`bot.texts` discovers every module here, so adding a file is enough. Keys are prefixed by
the area (`common.`, `render.`, `connect.`, ...); texts are Telegram HTML with `{name}` fields.
A `# TRANSLATORS:` comment right above an entry reaches the translator.
"""

from __future__ import annotations

from dataclasses import dataclass

# Fields a translation may leave out: a greeting's name where the language needs a form of it
# the bot cannot make (Ukrainian's vocative: "Вітаю, Олено!", never "Вітаю, Олена!").
OMITTABLE_FIELDS: dict[str, frozenset[str]] = {
    "connect.welcome": frozenset({"name"}),
    "connect.welcome_connected": frozenset({"name"}),
}


@dataclass(frozen=True, slots=True)
class Message:
    """One patron text: its key, its English text, and for a plural its plural form."""

    key: str
    text: str
    plural: str | None = None
    # The param whose number chooses the plural form.
    n: str = "count"


def _(key: str, text: str, /) -> Message:
    """A text; a no-op marker for `pybabel extract` (keyword `_:1c,2`)."""
    return Message(key, text)


def _n(key: str, singular: str, plural: str, /, *, n: str = "count") -> Message:
    """A text whose wording follows the number in param `n` (keyword `_n:1c,2,3`)."""
    return Message(key, singular, plural, n)
