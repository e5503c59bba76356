"""The chat an update belongs to and its language, and today's date for the bot."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from telegram.ext import ContextTypes

from library_bot.services import services
from library_bot.texts import pick_language

if TYPE_CHECKING:
    from telegram import Update

    from library_bot.storage.store import ChatSettings

Context = ContextTypes.DEFAULT_TYPE
# Where `chat_and_lang` leaves this update's settings read for `chat_settings` (PTB's chat_data).
SETTINGS_READ = "context.settings_read"


def chat_id_of(update: Update) -> int:
    """The chat an update belongs to (every update our handlers accept has one)."""
    chat = update.effective_chat
    assert chat is not None
    return chat.id


async def lang_of(update: Update, context: Context) -> str:
    """The chat's saved language, else the one Telegram reports for the user."""
    return (await chat_and_lang(update, context))[1]


async def chat_and_lang(update: Update, context: Context) -> tuple[ChatSettings | None, str]:
    """The chat's settings (one read, for handlers that need both) and its language.

    Telegram's `language_code` is remembered whenever it changes, so the messages nobody asked
    for (reminders, expiry notices) and the login pages speak the patron's language too.
    """
    chat = update.effective_chat
    user = update.effective_user
    code = user.language_code if user else None
    if chat is None:
        return None, pick_language(None, code)
    store = services(context).store
    settings = await store.chat(chat.id)
    if context.chat_data is not None:
        context.chat_data[SETTINGS_READ] = (update.update_id, settings)
    # Only a private chat's: in a group the sender's language is not the chat's, and a group
    # gets no row of its own (nothing is kept for groups).
    if code and chat.type == "private" and code[:16] != settings.telegram_language:
        await store.set_telegram_language(chat.id, code)
    return settings, pick_language(settings.language, code or settings.telegram_language)


async def chat_settings(update: Update, context: Context) -> ChatSettings:
    """The chat's settings as `chat_and_lang` read them for this update, else read now: a
    command's helpers share one read (each costs a database round trip per command)."""
    found = context.chat_data.get(SETTINGS_READ) if context.chat_data is not None else None
    if isinstance(found, tuple) and found[0] == update.update_id:
        settings: ChatSettings = found[1]
        return settings
    return await services(context).store.chat(chat_id_of(update))


async def chat_lang(context: Context, chat_id: int) -> str:
    """Like `lang_of` for jobs, which have no update: the saved language, else Telegram's."""
    chat = await services(context).store.chat(chat_id)
    return pick_language(chat.language, chat.telegram_language)


def today_in(context: Context) -> dt.date:
    """Today in the bot's time zone, which is what due dates are compared against."""
    return dt.datetime.now(services(context).settings.timezone).date()
