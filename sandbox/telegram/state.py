"""What the stand-in remembers: bots, chats with their messages, pending updates, callback queries.

One `State` is shared by the Bot API, the user's side, webhook delivery and the chat page. Every
change bumps `version` and sets `changed`, so whoever waits (a long `getUpdates`, the chat page's
poll, a test's `wait_for`) wakes up and looks again instead of polling on a timer.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sandbox.telegram.markup import Entity

DEFAULT_ALLOWED_UPDATES = frozenset(
    {
        "message",
        "edited_message",
        "channel_post",
        "edited_channel_post",
        "business_connection",
        "business_message",
        "edited_business_message",
        "deleted_business_messages",
        "inline_query",
        "chosen_inline_result",
        "callback_query",
        "shipping_query",
        "pre_checkout_query",
        "purchased_paid_media",
        "poll",
        "poll_answer",
        "my_chat_member",
        "chat_join_request",
        "chat_boost",
        "removed_chat_boost",
    }
)


@dataclass
class Message:
    message_id: int
    chat_id: int
    bot_token: str | None  # None: the user's message
    date: int
    text: str
    entities: list[Entity]
    html: str
    parse_mode: str | None
    keyboard: list[list[dict[str, Any]]] | None
    reply_to: int | None = None
    link_preview: bool = True
    edits: int = 0
    edit_date: int | None = None
    user_id: int | None = None  # who wrote a user's message in a group (None: the chat's user)
    via_bot: str | None = None  # the token of the bot whose inline result the user sent
    # When the stand-in took it (`time.time()`): `date`'s whole seconds are too coarse to
    # tell when a bench's last reminder went out.
    sent_at: float = field(default_factory=time.time)

    def edited(self) -> None:
        self.edits += 1
        self.edit_date = int(time.time())


@dataclass
class Chat:
    id: int
    first_name: str
    language_code: str | None
    blocked: bool = False
    messages: dict[int, Message] = field(default_factory=dict)
    next_message_id: int = 1
    used: float = 0.0
    action_until: float = 0.0
    type: str = "private"  # or "group", "supergroup", "channel"
    title: str | None = None

    def new_message_id(self) -> int:
        message_id = self.next_message_id
        self.next_message_id += 1
        return message_id

    def in_order(self) -> list[Message]:
        """The chat's messages, oldest first."""
        return sorted(self.messages.values(), key=lambda m: m.message_id)


@dataclass
class Query:
    """A callback query: answerable once, by the bot that got it, within a time limit."""

    id: str
    chat_id: int
    message_id: int
    bot_token: str
    created: float
    answered: bool = False


@dataclass
class InlineQuery:
    """What a user typed after `@<bot>` in a chat: answerable once, by that bot."""

    id: str
    chat_id: int
    user_id: int
    bot_token: str
    query: str
    offset: str
    created: float
    # The bot's answer as sent (`results`, `next_offset`, `cache_time`, ...), once answered.
    answer: dict[str, Any] | None = None


@dataclass
class Pending:
    """An update not yet confirmed by the bot (a later getUpdates offset or a webhook post)."""

    chat_id: int
    update: dict[str, Any]


@dataclass
class Bot:
    token: str
    id: int
    username: str
    first_name: str
    updates: list[Pending] = field(default_factory=list)
    next_update_id: int = 100_000_001
    allowed_updates: frozenset[str] = DEFAULT_ALLOWED_UPDATES
    webhook_url: str | None = None
    webhook_secret: str | None = None
    webhook_error_date: int | None = None
    webhook_error: str | None = None
    poll_generation: int = 0
    scoped_commands: dict[tuple[str, str], list[dict[str, str]]] = field(default_factory=dict)
    # ("description" or "short_description", language code or ""): the text, as the bot set it.
    profile: dict[tuple[str, str], str] = field(default_factory=dict)
    # BotFather's /setinline (None: inline mode off) and /setinlinefeedback.
    inline_placeholder: str | None = None
    inline_feedback: bool = False

    def user(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "is_bot": True,
            "first_name": self.first_name,
            "username": self.username,
        }


class State:
    """The stand-in's world, and the one place that says it changed."""

    def __init__(self) -> None:
        self.bots: dict[str, Bot] = {}
        self.chats: dict[int, Chat] = {}
        self.queries: dict[str, Query] = {}
        self.callback_answers: dict[str, dict[str, Any]] = {}
        self.inline_queries: dict[str, InlineQuery] = {}
        # The last menu set per language (None: no language), whatever its scope.
        self.commands: dict[str | None, list[dict[str, str]]] = {}
        self.version = 0
        self.changed = asyncio.Event()
        self.closing = False
        # Set by the webhook delivery: called when a bot with a webhook has a new update.
        self.on_queued: Callable[[Bot, int], None] = lambda bot, chat_id: None
        self._query_counter = 0

    def bump(self) -> None:
        self.version += 1
        self.changed.set()
        self.changed = asyncio.Event()

    async def wait_change(self, since: int, seconds: float) -> None:
        """Return when `version` moves past `since`, the stand-in closes, or `seconds` pass."""
        if self.version != since or self.closing:
            return
        event = self.changed
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), seconds)

    def default_bot(self) -> Bot:
        if not self.bots:
            raise RuntimeError("add_bot() first")
        return next(iter(self.bots.values()))

    def chat(self, chat_id: int) -> Chat:
        chat = self.chats.get(chat_id)
        if chat is None:
            raise KeyError(f"no chat {chat_id}; add_chat() first")
        return chat

    def new_query(self, bot: Bot, chat_id: int, message_id: int) -> Query:
        self._query_counter += 1
        query_id = str(bot.id * 1_000_000 + self._query_counter)
        query = Query(query_id, chat_id, message_id, bot.token, time.monotonic())
        self.queries[query_id] = query
        return query

    def new_inline_query(
        self, bot: Bot, chat_id: int, user_id: int, query: str, offset: str
    ) -> InlineQuery:
        self._query_counter += 1
        query_id = str(bot.id * 1_000_000 + self._query_counter)
        inline = InlineQuery(query_id, chat_id, user_id, bot.token, query, offset, time.monotonic())
        self.inline_queries[query_id] = inline
        return inline

    def queue(self, bot: Bot, chat_id: int, kind: str, payload: dict[str, Any]) -> None:
        """An update for `bot`, if it asked for this kind (allowed_updates)."""
        if kind in bot.allowed_updates:
            update = {"update_id": bot.next_update_id, kind: payload}
            bot.next_update_id += 1
            bot.updates.append(Pending(chat_id, update))
            if bot.webhook_url:
                self.on_queued(bot, chat_id)
        self.bump()
