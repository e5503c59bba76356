"""`/language`: one of the languages, each by its own name, or automatic (Telegram's
language), saved per chat."""

from __future__ import annotations

from typing import Any

from telegram import Update
from telegram.constants import ChatType
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from bot.actions import chats
from bot.telegram.buttons import LanguageChoice, decode
from bot.telegram.context import Context
from bot.telegram.keyboards import callback_buttons, resolve_callback
from bot.telegram.menu import set_chat_menu
from bot.telegram.replies import reply
from bot.texts import LANGUAGES, language_name, t

AUTO = "auto"


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("language", language),
        CallbackQueryHandler(language_tapped, pattern=rf"^{LanguageChoice.ACTION}:"),
    ]


async def language(update: Update, context: Context) -> None:
    """`/language <code>` sets that language at once (`auto`: Telegram's); without a code, or
    with one the bot does not speak, the picker."""
    code = (context.args or [""])[0].strip().lower() if context.args else ""
    if code in LANGUAGES or code == AUTO:
        await _choose(update, context, code if code in LANGUAGES else None)
        return
    lang = context.lang
    chat_id = context.chat_id
    saved = (await chats.settings(context.services, chat_id)).language
    auto = t(lang, "connect.language_auto")
    current = language_name(saved) if saved in LANGUAGES else auto
    specs = [(language_name(choice), LanguageChoice(choice)) for choice in LANGUAGES]
    specs.append((auto, LanguageChoice(AUTO)))
    rows = [[button] for button in await callback_buttons(update, context, specs)]
    await reply(update, context, t(lang, "connect.language_prompt", current=current), buttons=rows)


async def language_tapped(update: Update, context: Context) -> None:
    ref = await resolve_callback(update, context)
    if ref is None:
        return
    choice = decode(ref.payload, LanguageChoice)
    await _choose(update, context, choice.lang if choice is not None else None)


async def _choose(update: Update, context: Context, choice: str | None) -> None:
    """Save `choice` (None or anything unknown: Telegram's language) and say so in it."""
    saved = choice if choice in LANGUAGES else None
    await chats.set_language(context.services, context.chat_id, saved)
    chat = update.effective_chat
    if chat is not None and chat.type == ChatType.PRIVATE:
        # The menu follows the choice (a group's menu stays everyone's own language).
        await set_chat_menu(context.bot, chat.id, saved)
    lang = await context.read_chat(update)  # the language just chosen
    key = "connect.language_set" if saved else "connect.language_set_auto"
    await reply(update, context, t(lang, key))
