"""Last resort: an unknown command gets the nearest known one, or a hint towards /help; plain
text in a private chat is offered as a search (`freetext`); in a group it gets no answer (the
group is talking among itself).

Registered after every area handler in the same group, so it only sees what none of them took
(a handler in a later group would also fire for commands that were answered).
"""

from __future__ import annotations

import difflib
from typing import Any

from telegram import Update
from telegram.constants import ChatType
from telegram.ext import BaseHandler, MessageHandler, filters

from bot.telegram.context import Context
from bot.telegram.handlers import COMMANDS
from bot.telegram.handlers.freetext import offer_search, phrase_command
from bot.telegram.replies import reply
from bot.texts import t


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        MessageHandler(filters.COMMAND, unknown_command),
        MessageHandler(filters.TEXT & ~filters.COMMAND, plain_text),
    ]


async def unknown_command(update: Update, context: Context) -> None:
    """A fixed phrase's command ("/lån" -> /loans), else the nearest command by spelling
    ("/lons" -> /loans), else the hint towards /help."""
    lang = context.lang
    message = update.effective_message
    word = (message.text or "").split(maxsplit=1)[0] if message is not None else ""
    typed = word.lstrip("/").partition("@")[0]
    command = phrase_command(typed)
    if command is None:
        near = difflib.get_close_matches(typed.lower(), COMMANDS, n=1, cutoff=0.6)
        command = near[0] if near else None
    if command is None:
        await reply(update, context, t(lang, "common.unknown_command"))
        return
    await reply(update, context, t(lang, "common.unknown_command_near", command=command))


async def plain_text(update: Update, context: Context) -> None:
    chat = update.effective_chat
    if chat is None or chat.type != ChatType.PRIVATE:
        return  # a group's own conversation: no answer
    if await offer_search(update, context):
        return
    lang = context.lang
    await reply(update, context, t(lang, "connect.hint"))
