"""The context every handler and job gets (PTB's `ContextTypes`): the bot's services, and for
an update the chat's settings and language, worked out once by the guard."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from telegram.ext import CallbackContext, ContextTypes, ExtBot

from bot.services import Services, services
from bot.texts import pick_language

if TYPE_CHECKING:
    from telegram import CallbackQuery, Update
    from telegram.ext import Application

    from storage.store import ChatSettings


class BotContext(CallbackContext[ExtBot[None], dict[Any, Any], dict[Any, Any], dict[Any, Any]]):
    """PTB's context with what every handler needs: `services`, the chat (`chat_id`), and once
    `read_chat` has run for the update (the guard runs it first), the chat's settings (`chat`),
    its language (`lang`) and the tapped button (`query`). PTB builds one context per update,
    so every handler group shares the read."""

    def __init__(
        self,
        application: Application[Any, Any, Any, Any, Any, Any],
        chat_id: int | None = None,
        user_id: int | None = None,
    ) -> None:
        super().__init__(application, chat_id, user_id)
        self.chat: ChatSettings | None = None
        self._lang: str | None = None
        # The tapped button of a callback update (`read_chat`), so what answers it needs no
        # update.
        self.query: CallbackQuery | None = None

    @property
    def services(self) -> Services:
        return services(self)

    @property
    def chat_id(self) -> int:
        """The chat of this update (every update our handlers accept has one)."""
        assert self._chat_id is not None
        return self._chat_id

    @property
    def today(self) -> dt.date:
        """Today in the bot's time zone, which is what due dates are compared against."""
        return dt.datetime.now(self.services.settings.timezone).date()

    @property
    def lang(self) -> str:
        """The chat's language for this update (`read_chat`)."""
        if self._lang is None:
            raise RuntimeError("the chat's language was not read for this update")
        return self._lang

    async def read_chat(self, update: Update) -> str:
        """Read the chat's settings and language for `update` (again after changing them)."""
        self.query = update.callback_query
        self.chat, self._lang = await chat_and_lang(update, self)
        return self._lang


Context = BotContext
CONTEXT_TYPES = ContextTypes(context=BotContext)


async def lang_of(update: Update, context: Context) -> str:
    """The chat's saved language, else the one Telegram reports for the user: as the guard read
    it, else read now (an error handler's context is a new one)."""
    return context._lang or await context.read_chat(update)


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
    settings = await store.chats.chat(chat.id)
    # Only a private chat's: in a group the sender's language is not the chat's, and a group
    # gets no row of its own (nothing is kept for groups).
    if code and chat.type == "private" and code[:16] != settings.telegram_language:
        await store.chats.set_telegram_language(chat.id, code)
    return settings, pick_language(settings.language, code or settings.telegram_language)


async def chat_settings(context: Context) -> ChatSettings:
    """The chat's settings as the guard read them for this update, else read now."""
    return context.chat or await context.services.store.chats.chat(context.chat_id)


async def chat_lang(context: CallbackContext[Any, Any, Any, Any], chat_id: int) -> str:
    """The chat's language for jobs, which have no update: the saved language, else Telegram's."""
    chat = await services(context).store.chats.chat(chat_id)
    return pick_language(chat.language, chat.telegram_language)
