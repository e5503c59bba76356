"""Shelf watches: a title waited for at a branch, kept per card until a copy is on the shelf
(`bot.jobs.shelf` checks them), listed by /watches and stopped by its button."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from bot.library.deadline import Deadline
from bot.library.errors import LibraryError
from bot.rules.notices import order_shown

if TYPE_CHECKING:
    from bot.services import Services
    from storage.store import Card
    from storage.watches import Watch


async def watch(
    services: Services, card: Card, pid: str, branch: str, agency: str, title: str
) -> Literal["added", "exists", "full", "taken"]:
    """Watch the title at the branch for the card, unless the chat has `MAX_WATCHES` or the
    card borrows or holds it already ("taken": nothing to wait for; the sweep would end the
    watch, but only after a check might have told of a copy on the shelf)."""
    try:
        status = await Deadline().run(services.library.user(card.token))
    except LibraryError:
        status = None  # not known now: kept, and ended by the sweep should it be taken
    if status is not None and order_shown(pid, status):
        return "taken"
    return await services.store.watches.add(card.chat_id, card.number, pid, branch, agency, title)


async def unwatch(services: Services, card: Card, pid: str, branch: str) -> bool:
    """Stop the card's watch of the title at the branch; False when there was none."""
    return await services.store.watches.remove(card.chat_id, card.number, pid, branch)


async def of_chat(services: Services, chat_id: int) -> list[Watch]:
    """The chat's watches, oldest first."""
    return await services.store.watches.of_chat(chat_id)
