"""A card's name as the patron sees it: the label (the borrower's first name, or the patron's
own name for it), else its number."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from bot.texts import t
from bot.texts.formatting import join_and

if TYPE_CHECKING:
    from collections.abc import Sequence


class Named(Protocol):
    """What names a card: a stored card, a card read with its lists, a calendar feed's card."""

    @property
    def label(self) -> str | None: ...

    @property
    def number(self) -> int: ...


def card_name(card: Named, lang: str) -> str:
    """Plain text: `t` escapes it where it goes into a text, `plain` keeps a button's as is."""
    label = card.label
    return label.strip() if label and label.strip() else t(lang, "card.name", number=card.number)


def card_heading(card: Named, lang: str) -> str:
    """`👤 <b>Karen</b>`: a card's section heading in a message that shows several cards
    (escaped once, by `t`)."""
    return t(lang, "card.heading", name=card_name(card, lang))


def lapsed_lead(cards: Sequence[Named], lang: str, *, one: str, many: str) -> str:
    """The line naming the lapsed `cards`: `one` with the card's `name`, else `many` with
    their `names` joined ("Anna, Sofie og Emil")."""
    if len(cards) == 1:
        return t(lang, one, name=card_name(cards[0], lang))
    return t(lang, many, names=join_and([card_name(card, lang) for card in cards], lang))
