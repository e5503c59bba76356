"""Last resort: unknown commands get a short hint towards /help; plain text in a private chat
is offered as a search (`freetext`), elsewhere it gets the hint too.

Registered after every area handler in the same group, so it only sees what none of them took
(a handler in a later group would also fire for commands that were answered).
"""

from __future__ import annotations

from typing import Any

from telegram import Update
from telegram.ext import BaseHandler, MessageHandler, filters

from bot.telegram.handlers.freetext import offer_search
from bot.telegram.ui import Context, lang_of, reply
from bot.texts import t


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        MessageHandler(filters.COMMAND, unknown_command),
        MessageHandler(filters.TEXT & ~filters.COMMAND, plain_text),
    ]


async def unknown_command(update: Update, context: Context) -> None:
    lang = await lang_of(update, context)
    await reply(update, context, t(lang, "common.unknown_command"))


async def plain_text(update: Update, context: Context) -> None:
    if await offer_search(update, context):
        return
    lang = await lang_of(update, context)
    await reply(update, context, t(lang, "connect.hint"))
