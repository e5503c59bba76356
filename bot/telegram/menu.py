"""The command menu Telegram shows: per language for everyone, and per chat once the patron
has chosen a language with /language (`BotCommandScopeChat`).

Telegram picks the menu of the narrowest scope that has one: the chat's own, else the one for
the user's app language, else the default. A chat set back to automatic loses its own menu and
follows the app language again. The menu is cosmetic: a refusal is logged, never raised.
"""

from __future__ import annotations

import logging

from telegram import Bot, BotCommand, BotCommandScopeChat
from telegram.error import TelegramError

from bot.telegram.handlers import COMMANDS
from bot.texts import t

log = logging.getLogger(__name__)


def bot_commands(lang: str) -> list[BotCommand]:
    """Every command with its menu description in `lang`."""
    return [BotCommand(name, t(lang, f"commands.{name}")) for name in COMMANDS]


async def set_chat_menu(bot: Bot, chat_id: int, lang: str | None) -> bool:
    """The chat's own menu in `lang`, or (None) none, so the language menus apply again."""
    scope = BotCommandScopeChat(chat_id)
    try:
        if lang is None:
            return await bot.delete_my_commands(scope=scope)
        return await bot.set_my_commands(bot_commands(lang), scope=scope)
    except TelegramError as exc:
        log.warning("the chat's command menu was not set: %s", type(exc).__name__)
        return False
