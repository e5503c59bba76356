"""A chat's settings and language, as the faces read and change them: the language it chose
(and the one Telegram reports), its reminders and notices, whether it is connected or why its
last card ended, and forgetting the chat."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.services import Services
    from storage.store import ChatRead, ChatSettings


async def settings(services: Services, chat_id: int) -> ChatSettings:
    """The chat's settings (defaults for a chat the bot keeps nothing of)."""
    return await services.store.chats.chat(chat_id)


async def read(
    services: Services, chat_id: int, *, cards: bool = False, refusals: bool = False
) -> ChatRead:
    """The chat's settings, with its cards (and their refused renewals) when asked, in one
    read: what a command needs of its chat."""
    return await services.store.read_chat(chat_id, cards=cards, refusals=refusals)


async def set_language(services: Services, chat_id: int, language: str | None) -> None:
    """The language the chat chose in /language (None: Telegram's again)."""
    await services.store.chats.set_language(chat_id, language)


async def set_telegram_language(services: Services, chat_id: int, code: str) -> None:
    """The language Telegram reports for the chat's user, for the messages nobody asked for."""
    await services.store.chats.set_telegram_language(chat_id, code)


async def set_connected(services: Services, chat_id: int) -> None:
    """A card of the chat logged in: no card's end is left to tell."""
    await services.store.chats.set_connected(chat_id)


async def set_card_ended(services: Services, chat_id: int, why: str | None) -> None:
    """Why the chat's last card ended ("logged_out", "expired", "rejected")."""
    await services.store.chats.set_card_ended(chat_id, why)


async def set_fresh_login(services: Services, chat_id: int, fresh: bool) -> None:
    """Whether the chat's next login asks for the password again (after a /logout)."""
    await services.store.chats.set_fresh_login(chat_id, fresh)


async def set_reminders(
    services: Services,
    chat_id: int,
    *,
    enabled: bool | None = None,
    days: Sequence[int] | None = None,
) -> ChatSettings:
    """Reminders on or off, and their days (`()`: the operator's again)."""
    return await services.store.set_reminders(chat_id, enabled=enabled, days=days)


async def set_reminder_hour(services: Services, chat_id: int, hour: int | None) -> ChatSettings:
    """The hour of the chat's reminders (None: the operator's)."""
    return await services.store.chats.set_reminder_hour(chat_id, hour)


async def set_notices(services: Services, chat_id: int, enabled: frozenset[str]) -> ChatSettings:
    """The notices the chat has turned on."""
    return await services.store.chats.set_notices(chat_id, enabled)


async def forget(services: Services, chat_id: int) -> None:
    """Everything the bot keeps of the chat, gone (/forget, once its cards are logged out)."""
    await services.store.forget_chat(chat_id)
