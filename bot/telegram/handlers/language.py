"""`/language`: Dansk, English or automatic (Telegram's language), saved per chat."""

from __future__ import annotations

from typing import Any

from telegram import Update
from telegram.constants import ChatType
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from bot.services import services
from bot.telegram.buttons import LanguageChoice, decode
from bot.telegram.menu import set_chat_menu
from bot.telegram.ui import (
    Context,
    callback_buttons,
    chat_id_of,
    lang_of,
    reply,
    resolve_callback,
)
from bot.texts import LANGUAGES, t

AUTO = "auto"


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("language", language),
        CallbackQueryHandler(language_tapped, pattern=rf"^{LanguageChoice.ACTION}:"),
    ]


async def language(update: Update, context: Context) -> None:
    lang = await lang_of(update, context)
    chat_id = chat_id_of(update)
    saved = (await services(context).store.chat(chat_id)).language
    current = t(lang, f"connect.language_{saved}") if saved else t(lang, "connect.language_auto")
    specs = [
        (t(lang, f"connect.language_{choice}"), LanguageChoice(choice))
        for choice in (*LANGUAGES, AUTO)
    ]
    rows = [[button] for button in await callback_buttons(update, context, specs)]
    await reply(update, context, t(lang, "connect.language_prompt", current=current), buttons=rows)


async def language_tapped(update: Update, context: Context) -> None:
    ref = await resolve_callback(update, context)
    if ref is None:
        return
    choice = decode(ref.payload, LanguageChoice)
    saved = choice.lang if choice is not None and choice.lang in LANGUAGES else None
    await services(context).store.set_language(chat_id_of(update), saved)
    chat = update.effective_chat
    if chat is not None and chat.type == ChatType.PRIVATE:
        # The menu follows the choice (a group's menu stays everyone's own language).
        await set_chat_menu(context.bot, chat.id, saved)
    lang = await lang_of(update, context)
    key = "connect.language_set" if saved else "connect.language_set_auto"
    await reply(update, context, t(lang, key))
