"""A card's name as the patron sees it: the label (the borrower's first name, or the patron's
own name for it), else its number."""

from __future__ import annotations

from bot.texts import t


def card_name(label: str | None, card: int, lang: str) -> str:
    """Plain text: `t` escapes it where it goes into a text, `plain` keeps a button's as is."""
    return label.strip() if label and label.strip() else t(lang, "card.name", number=card)


def card_heading(label: str | None, card: int, lang: str) -> str:
    """A card's section heading in a message that shows several cards (escaped once, by `t`)."""
    return t(lang, "card.heading", name=card_name(label, card, lang))
