"""The context every handler and job gets (PTB's `ContextTypes`): the bot's services, and for
an update the chat's settings and language, worked out once by the guard."""

from __future__ import annotations

import datetime as dt
import time
from typing import TYPE_CHECKING, Any

from telegram.ext import CallbackContext, ContextTypes, ExtBot

from bot.actions import chats
from bot.services import Services, services
from bot.texts import pick_language

if TYPE_CHECKING:
    from telegram import CallbackQuery, Update
    from telegram.ext import Application

    from bot.actions.vocabulary import Card, ChatRead, ChatSettings, Refusal


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
        # Kept from PTB's documented arguments: PTB keeps its own copy private.
        self._update_chat_id = chat_id
        self.chat: ChatSettings | None = None
        self._cards: list[Card] | None = None
        self._refusals: dict[int, dict[str, Refusal]] | None = None
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
        assert self._update_chat_id is not None
        return self._update_chat_id

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

    def ask(self, key: str, *values: object) -> None:
        """Remember that the chat's next message answers the question `key` (about `values`),
        in this process's `chat_data`, as a picker or prompt does."""
        if self.chat_data is not None:
            self.chat_data[key] = (*values, time.monotonic())

    def asked(self, key: str, within: float) -> tuple[Any, ...] | None:
        """The values of question `key` (`ask`) when it was asked less than `within` seconds
        ago; an older one is dropped. Read without creating the chat's `chat_data`: every
        plain message asks."""
        data = self.application.chat_data.get(self.chat_id)
        waiting = data.get(key) if data else None
        if data is None or not isinstance(waiting, tuple) or not waiting:
            return None
        *values, when = waiting
        if time.monotonic() - when >= within:
            self.answered(key)
            return None
        return tuple(values)

    def answered(self, key: str) -> None:
        """The question `key` has had its answer (or its subject is gone, or its time): a chat
        left with nothing in `chat_data` keeps no entry in memory."""
        data = self.application.chat_data.get(self.chat_id)
        if data is None:
            return
        data.pop(key, None)
        if not data:
            self.application.drop_chat_data(self.chat_id)

    async def read_chat(
        self, update: Update, *, cards: bool = False, refusals: bool = False
    ) -> str:
        """Read the chat's settings and language for `update` (again after changing them); with
        `cards` (and `refusals`) the chat's cards (and their refused renewals) in the same
        transaction, for the handler to take once (`take_cards`, `take_refusals`)."""
        self.query = update.callback_query
        read, self._lang = await chat_and_lang(update, self, cards=cards, refusals=refusals)
        self.chat = None if read is None else read.settings
        self._cards = None if read is None else read.cards
        self._refusals = None if read is None else read.refusals
        return self._lang

    def take_cards(self) -> list[Card] | None:
        """The chat's cards as `read_chat` read them with the settings, once (None: not read,
        or taken already): whatever the handler changes next is read afresh."""
        cards, self._cards = self._cards, None
        return cards

    def take_refusals(self) -> dict[int, dict[str, Refusal]] | None:
        """The cards' refused renewals (card number -> loan id -> refusal) as `read_chat` read
        them, once (None: not read, or taken already)."""
        refusals, self._refusals = self._refusals, None
        return refusals


Context = BotContext
CONTEXT_TYPES = ContextTypes(context=BotContext)


async def lang_of(update: Update, context: Context) -> str:
    """The chat's saved language, else the one Telegram reports for the user: as the guard read
    it, else read now (an error handler's context is a new one)."""
    return context._lang or await context.read_chat(update)


def told_lang(update: Update, context: Context) -> str:
    """The chat's language as far as it is known without the database: as the guard read it,
    else the one Telegram reports for the user (when the database is what failed)."""
    if context._lang is not None:
        return context._lang
    user = update.effective_user
    return pick_language(None, user.language_code if user else None)


async def chat_and_lang(
    update: Update, context: Context, *, cards: bool = False, refusals: bool = False
) -> tuple[ChatRead | None, str]:
    """The chat's settings (one read, for handlers that need both; with `cards` and `refusals`
    those too, in the same transaction) and its language.

    Telegram's `language_code` is remembered whenever it changes, so the messages nobody asked
    for (reminders, expiry notices) and the login pages speak the patron's language too.
    """
    chat = update.effective_chat
    user = update.effective_user
    code = user.language_code if user else None
    if chat is None:
        # An inline query has no chat: the user's own /language, if their private chat saved one
        # (a read of settings only, never of cards).
        if user is None:
            return None, pick_language(None, code)
        saved = await chats.settings(services(context), user.id)
        return None, pick_language(saved.language, code or saved.telegram_language)
    svc = services(context)
    read = await chats.read(svc, chat.id, cards=cards, refusals=refusals)
    settings = read.settings
    # Only a private chat's: in a group the sender's language is not the chat's, and a group
    # gets no row of its own (nothing is kept for groups).
    if code and chat.type == "private" and code[:16] != settings.telegram_language:
        await chats.set_telegram_language(svc, chat.id, code)
    return read, pick_language(settings.language, code or settings.telegram_language)


async def chat_settings(context: Context) -> ChatSettings:
    """The chat's settings as the guard read them for this update, else read now."""
    return context.chat or await chats.settings(context.services, context.chat_id)


async def chat_lang(context: CallbackContext[Any, Any, Any, Any], chat_id: int) -> str:
    """The chat's language for jobs, which have no update: the saved language, else Telegram's."""
    chat = await chats.settings(services(context), chat_id)
    return pick_language(chat.language, chat.telegram_language)
