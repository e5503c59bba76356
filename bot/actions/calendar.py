"""A chat's calendar feed: its secret address made (an older one stops working) or closed,
and the feed an address opens (`GET /calendar/<secret>.ics`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.services import Services
    from storage.calendar import Feed


async def create(services: Services, chat_id: int, entries: Mapping[int, str]) -> str:
    """A new secret address for the chat, with each card's entries (card -> JSON) just seen;
    the raw secret, which is shown once and never kept."""
    return await services.store.calendar.create(chat_id, entries)


async def drop(services: Services, chat_id: int) -> bool:
    """Close the chat's feed; False when it had none."""
    return await services.store.calendar.drop(chat_id)


async def feed(services: Services, secret: str) -> Feed | None:
    """The feed behind a secret address, or None for a wrong or closed one."""
    return await services.store.calendar.open(secret)
