"""How a card is named where a chat has several (a family)."""

from __future__ import annotations

from bot.texts.catalog import Message, _

MESSAGES: tuple[Message, ...] = (
    _("card.name", "Card {number}"),
    _("card.heading", "👤 <b>{name}</b>"),
    _("card.event", "{name}: {summary}"),
    _("card.renew_all", "Renew these: {name}"),
)
