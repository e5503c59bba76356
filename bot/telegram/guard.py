"""The private-chat guard: a patron's account is reachable only from their own private chat."""

from __future__ import annotations

import logging
from typing import Any

from telegram import Update
from telegram.constants import ChatType, MessageEntityType
from telegram.ext import ApplicationHandlerStop, BaseHandler, TypeHandler

from bot.actions.vocabulary import is_unavailable
from bot.telegram.buttons import LanguageChoice
from bot.telegram.context import Context, told_lang
from bot.telegram.failures import report_failure
from bot.telegram.handlers import inline
from bot.telegram.replies import answer_query, send, url_button
from bot.texts import t

log = logging.getLogger(__name__)

# What a group, supergroup or channel may use: nothing that reads or changes an account.
# `/start` only without a code; every other command and button is for private chats.
GROUP_COMMANDS = frozenset({"start", "help", "language"})
GROUP_BUTTONS = frozenset({LanguageChoice.ACTION})
# The commands that start by reading the chat's cards (`cards.require_cards`), and of them those
# that show refused renewals: the guard reads these with the chat's settings, in one transaction.
CARD_COMMANDS = frozenset({"loans", "holds", "debt", "renew", "away"})
REFUSAL_COMMANDS = frozenset({"loans"})
# The updates the bot asks Telegram for: what its handlers take, and nothing else. A business
# or guest message comes in a patron's private chat from someone else (a business account
# writing in it), so asking for "all" would let another user act there.
ALLOWED_UPDATES = (
    Update.MESSAGE,
    Update.CHANNEL_POST,
    Update.CALLBACK_QUERY,
    Update.INLINE_QUERY,
    Update.CHOSEN_INLINE_RESULT,  # counted: an inline result shared
)


def private_chat_guard() -> BaseHandler[Update, Any, None]:
    """The one gate every update passes first (group -1, before every area's handlers).

    Edited messages never re-run a command. In a group, supergroup or channel only `/start`
    without a code, `/help`, `/language` and its buttons get through; every other command or
    button addressed to the bot gets a pointer to a private chat and stops there, before any
    account, button or platform is touched. Commands for other bots in a group are left alone.
    Inline queries have no chat and pass (they read public data only); the cards they post
    ("via @bot") are not messages to the bot. A private chat is the patron's only when the
    patron writes in it: a message of a business connection, or from another user, stops here
    before the chat is read (`ALLOWED_UPDATES` keeps such updates away in the first place).
    """
    return TypeHandler(Update, _guard)


async def _guard(update: Update, context: Context) -> None:
    if update.edited_message or update.edited_channel_post or update.edited_business_message:
        raise ApplicationHandlerStop
    message = update.effective_message
    chat, user = update.effective_chat, update.effective_user
    if chat is not None and chat.type == ChatType.PRIVATE:
        if user is None or user.id != chat.id:
            raise ApplicationHandlerStop  # someone else writing in a patron's chat
        if message is not None and message.business_connection_id:
            raise ApplicationHandlerStop  # the patron writing to a business, not to the bot
    if message is not None and message.via_bot is not None and message.via_bot.id == context.bot.id:
        raise ApplicationHandlerStop  # a card shared with this bot's inline mode: not for us
    command = _command(update, context)
    # Once per update, for every handler after this one (`context.chat`, `context.lang`); a
    # list command's cards and refusals come in the same transaction (`Context.take_cards`).
    listing = (
        command[0] if command and command[1] and chat and chat.type == ChatType.PRIVATE else None
    )
    try:
        lang = await context.read_chat(
            update, cards=listing in CARD_COMMANDS, refusals=listing in REFUSAL_COMMANDS
        )
    except Exception as exc:
        # Told here, once: every handler after this one would fail again without the chat.
        await report_failure(update, context, exc)
        if update.inline_query is not None and is_unavailable(exc):
            await inline.answer_outage(update.inline_query, told_lang(update, context))
        raise ApplicationHandlerStop from exc
    if chat is None or chat.type == ChatType.PRIVATE:
        return
    query = update.callback_query
    if query is not None:
        if (query.data or "").partition(":")[0] in GROUP_BUTTONS:
            return
        await answer_query(
            update, t(lang, "common.private_only_button", link=private_chat_link(context))
        )
        raise ApplicationHandlerStop
    if command is None:
        return  # not a command: the fallback's hint
    name, addressed, has_args = command
    if not addressed:
        raise ApplicationHandlerStop  # another bot's command
    if name in GROUP_COMMANDS and not (name == "start" and has_args):
        return
    log.info("%s command refused in a %s chat", name, chat.type)
    link = private_chat_link(context)
    buttons = url_button(t(lang, "common.private_only_open"), link)
    await send(context.bot, chat.id, t(lang, "common.private_only", link=link), buttons=buttons)
    raise ApplicationHandlerStop


def _command(update: Update, context: Context) -> tuple[str, bool, bool] | None:
    """(name, addressed to this bot, has arguments) of a command message, else None."""
    message = update.effective_message
    if message is None or not message.text or not message.entities:
        return None
    entity = message.entities[0]
    if entity.type != MessageEntityType.BOT_COMMAND or entity.offset != 0:
        return None
    word = message.text[1 : entity.length]
    name, _, target = word.partition("@")
    username = context.services.bot_username or context.bot.username or ""
    addressed = not target or target.lower() == username.lower()
    return name.lower(), addressed, bool(message.text[entity.length :].strip())


def private_chat_link(context: Context) -> str:
    """`{TELEGRAM_LINK_URL}/<bot username>`: opens the private chat with the bot."""
    svc = context.services
    return svc.chat_link(username=svc.bot_username or context.bot.username)
