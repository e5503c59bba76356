"""The user's side: set up bots and chats, type, edit, tap buttons, block; see what the bot sent.

What tests and the chat page use. Each action queues the update Telegram would send the bot
(`message`, `edited_message`, `callback_query`, `my_chat_member`, `inline_query`,
`chosen_inline_result`), shaped as on the wire.
"""

from __future__ import annotations

import asyncio
import html
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sandbox.telegram.commands import menu
from sandbox.telegram.markup import Entity, bot_command_entities
from sandbox.telegram.state import Bot, Chat, Message, State
from sandbox.telegram.wire import chat_json, message_json, user_json


@dataclass(frozen=True)
class Button:
    """An inline keyboard button as the user sees it."""

    text: str
    callback_data: str | None = None
    url: str | None = None
    web_app: str | None = None  # the Mini App's address, for a `web_app` button


def buttons(keyboard: list[list[dict[str, Any]]] | None) -> list[list[Button]]:
    return [
        [
            Button(
                str(b["text"]),
                b.get("callback_data"),
                b.get("url"),
                (b.get("web_app") or {}).get("url"),
            )
            for b in row
        ]
        for row in keyboard or []
    ]


@dataclass(frozen=True)
class SentMessage:
    """A snapshot of one of the bot's messages, in its current state."""

    chat_id: int
    message_id: int
    text: str
    html: str
    parse_mode: str | None
    buttons: list[list[Button]]
    edits: int
    entities: list[Entity] = field(default_factory=list)
    reply_to_message_id: int | None = None
    link_preview: bool = True
    date: int = 0
    sent_at: float = 0.0  # when the stand-in took it, `time.time()`

    @classmethod
    def of(cls, message: Message) -> SentMessage:
        return cls(
            chat_id=message.chat_id,
            message_id=message.message_id,
            text=message.text,
            html=message.html,
            parse_mode=message.parse_mode,
            buttons=buttons(message.keyboard),
            edits=message.edits,
            entities=list(message.entities),
            reply_to_message_id=message.reply_to,
            link_preview=message.link_preview,
            date=message.date,
            sent_at=message.sent_at,
        )

    def button(self, text: str) -> Button:
        """The first button whose text contains `text`."""
        for row in self.buttons:
            for candidate in row:
                if text in candidate.text:
                    return candidate
        raise KeyError(f"no button with {text!r} in message {self.message_id}: {self.buttons}")


@dataclass(frozen=True)
class InlineResult:
    """One entry of an inline result list: what the list shows, and what sending it posts."""

    id: str
    title: str
    description: str | None
    thumbnail_url: str | None
    text: str
    html: str
    buttons: list[list[Button]]


@dataclass(frozen=True)
class InlineAnswer:
    results: list[InlineResult]
    next_offset: str
    cache_time: int
    is_personal: bool
    button: dict[str, Any] | None

    @classmethod
    def of(cls, answer: dict[str, Any]) -> InlineAnswer:
        results = [
            InlineResult(
                r["id"],
                r["title"],
                r["description"],
                r["thumbnail_url"],
                r["text"],
                r["html"],
                buttons(r["keyboard"]),
            )
            for r in answer["results"]
        ]
        return cls(
            results,
            answer["next_offset"],
            answer["cache_time"],
            answer["is_personal"],
            answer["button"],
        )


class UserDriver:
    """The users of the stand-in's chats, and what they see."""

    def __init__(self, state: State) -> None:
        self.state = state

    # ------------------------------------------------------------------ setup

    def add_bot(
        self,
        token: str,
        *,
        username: str = "library_sandbox_bot",
        first_name: str = "Library Bot",
        inline_placeholder: str | None = "Search the catalogue",
        inline_feedback: bool = True,
    ) -> None:
        """Register a bot; its id is the digits before the colon of the token. Inline mode and
        its feedback are on, as BotFather's checklist sets them (None: /setinline off)."""
        digits, _, secret = token.partition(":")
        if not digits.isdigit() or not secret:
            raise ValueError("a bot token looks like '<digits>:<secret>'")
        self.state.bots[token] = Bot(
            token,
            int(digits),
            username,
            first_name,
            inline_placeholder=inline_placeholder,
            inline_feedback=inline_feedback,
        )

    def add_chat(
        self, chat_id: int, *, first_name: str = "Patron", language_code: str | None = "da"
    ) -> None:
        """A private chat with a user whose id is the chat id."""
        chats = self.state.chats
        if chat_id in chats:
            chat = chats[chat_id]
            chat.first_name, chat.language_code = first_name, language_code
        else:
            chats[chat_id] = Chat(chat_id, first_name, language_code, used=time.time())
        self.state.bump()

    def add_group(
        self, chat_id: int, *, title: str = "Book club", chat_type: str = "supergroup"
    ) -> None:
        """A group, supergroup or channel with the bot in it (ids are negative, as Telegram's).

        Members are the users of private chats (`add_chat`); they write with `user_id=`.
        """
        if chat_type not in ("group", "supergroup", "channel") or chat_id >= 0:
            raise ValueError("a group is a group, supergroup or channel with a negative id")
        self.state.chats[chat_id] = Chat(
            chat_id, title, None, used=time.time(), type=chat_type, title=title
        )
        self.state.bump()

    # ------------------------------------------------------------------ acting

    async def send_text(self, chat_id: int, text: str, *, user_id: int | None = None) -> int:
        """The user types `text` (in a group: the member `user_id`); returns its message id."""
        chat = self.state.chat(chat_id)
        return self.type_text(chat, text, self.state.default_bot(), self._sender(chat, user_id))

    async def edit_text(self, chat_id: int, message_id: int, text: str) -> None:
        """The user edits their message `message_id` to `text` (an `edited_message` update)."""
        chat = self.state.chat(chat_id)
        message = chat.messages.get(message_id)
        if message is None or message.bot_token is not None:
            raise KeyError(f"no user message {message_id} in chat {chat_id}")
        message.text, message.html = text, html.escape(text, quote=False)
        message.entities = bot_command_entities(text)
        message.edited()
        kind = "edited_channel_post" if chat.type == "channel" else "edited_message"
        self.state.queue(
            self.state.default_bot(), chat.id, kind, message_json(self.state, chat, message)
        )

    async def tap(
        self, chat_id: int, message_id: int, callback_data: str, *, user_id: int | None = None
    ) -> str:
        """The user (in a group: the member `user_id`) taps the inline button carrying
        `callback_data`; returns the query id."""
        state = self.state
        chat = state.chat(chat_id)
        sender = self._sender(chat, user_id)
        message = chat.messages.get(message_id)
        if message is None or message.bot_token is None:
            raise KeyError(f"no bot message {message_id} in chat {chat_id}")
        datas = [b.get("callback_data") for row in message.keyboard or [] for b in row]
        if callback_data not in datas:
            raise ValueError(f"message {message_id} has no button with data {callback_data!r}")
        bot = state.bots[message.bot_token]
        query = state.new_query(bot, chat_id, message_id)
        chat.used = time.time()
        state.queue(
            bot,
            chat_id,
            "callback_query",
            {
                "id": query.id,
                "from": user_json(sender),
                "message": message_json(state, chat, message),
                "chat_instance": str(abs(hash((bot.id, chat_id))) % 10**18),
                "data": callback_data,
            },
        )
        return query.id

    async def inline_query(
        self, chat_id: int, query: str, *, user_id: int | None = None, offset: str = ""
    ) -> str:
        """The user (in a group: the member `user_id`) types `@<bot> query` in the chat (the
        next page: the answer's `offset`); returns the inline query's id."""
        state = self.state
        chat = state.chat(chat_id)
        sender = self._sender(chat, user_id)
        bot = state.default_bot()
        if bot.inline_placeholder is None:
            raise ValueError("the bot has no inline mode (BotFather's /setinline)")
        inline = state.new_inline_query(bot, chat.id, sender.id, query, offset)
        state.queue(
            bot,
            chat.id,
            "inline_query",
            {
                "id": inline.id,
                "from": user_json(sender),
                "query": query,
                "offset": offset,
                # "sender": the private chat with the bot itself
                "chat_type": "sender" if chat.type == "private" else chat.type,
            },
        )
        return inline.id

    async def inline_answer(
        self,
        query_id: str,
        *,
        timeout: float = 10.0,  # noqa: ASYNC109 - as wait_for
    ) -> InlineAnswer:
        """The bot's answer to an inline query, as the user's list shows it."""
        state = self.state
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            query = state.inline_queries[query_id]
            if query.answer is not None:
                return InlineAnswer.of(query.answer)
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"inline query {query_id} not answered within {timeout}s")
            await state.wait_change(state.version, remaining)

    async def choose(self, query_id: str, result_id: str) -> int:
        """The user sends result `result_id`: its message appears in the chat "via @bot" (and
        reaches the bot in a private chat), and with /setinlinefeedback the bot hears of it
        (`chosen_inline_result`). Returns the message's id."""
        state = self.state
        query = state.inline_queries[query_id]
        if query.answer is None:
            raise ValueError(f"inline query {query_id} has no answer yet")
        found = [r for r in query.answer["results"] if r["id"] == result_id]
        if not found:
            raise ValueError(f"inline query {query_id} has no result {result_id!r}")
        result = found[0]
        chat = state.chat(query.chat_id)
        bot = state.bots[query.bot_token]
        message = Message(
            message_id=chat.new_message_id(),
            chat_id=chat.id,
            bot_token=None,
            date=int(time.time()),
            text=result["text"],
            entities=list(result["entities"]),
            html=result["html"],
            parse_mode=result["parse_mode"],
            keyboard=result["keyboard"],
            link_preview=result["link_preview"],
            user_id=query.user_id if chat.type != "private" else None,
            via_bot=bot.token,
        )
        chat.messages[message.message_id] = message
        chat.used = time.time()
        if chat.type == "private":  # in a group the bot's privacy mode keeps it out
            state.queue(bot, chat.id, "message", message_json(state, chat, message))
        if bot.inline_feedback:
            chosen: dict[str, Any] = {
                "result_id": result_id,
                "from": user_json(state.chat(query.user_id)),
                "query": query.query,
            }
            if message.keyboard:
                chosen["inline_message_id"] = f"{chat.id}_{message.message_id}"
            state.queue(bot, chat.id, "chosen_inline_result", chosen)
        else:
            state.bump()
        return message.message_id

    def posted_via(self, chat_id: int) -> list[SentMessage]:
        """The messages users sent in the chat from a bot's inline results, oldest first."""
        chat = self.state.chats.get(chat_id)
        if chat is None:
            return []
        return [SentMessage.of(m) for m in chat.in_order() if m.via_bot is not None]

    def block(self, chat_id: int) -> None:
        """The user blocks the bot: sends to the chat answer 403."""
        self.set_blocked(self.state.chat(chat_id), True)

    def unblock(self, chat_id: int) -> None:
        """The user restarts the bot."""
        self.set_blocked(self.state.chat(chat_id), False)

    # ------------------------------------------------------------------ seeing

    def sent(self, chat_id: int) -> list[SentMessage]:
        """The bot's messages in the chat, as they stand now, oldest first."""
        chat = self.state.chats.get(chat_id)
        if chat is None:
            return []
        return [SentMessage.of(m) for m in chat.in_order() if m.bot_token is not None]

    async def wait_for(
        self,
        chat_id: int,
        predicate: Callable[[SentMessage], bool] | str,
        *,
        timeout: float = 10.0,  # noqa: ASYNC109 - the public interface names it so
        after: int = 0,
    ) -> SentMessage:
        """The first bot message after `after` that matches (a str: a substring of its text)."""
        matches: Callable[[SentMessage], bool]
        if isinstance(predicate, str):
            needle = predicate
            matches = lambda message: needle in message.text  # noqa: E731
        else:
            matches = predicate
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for message in self.sent(chat_id):
                if message.message_id > after and matches(message):
                    return message
            remaining = deadline - loop.time()
            if remaining <= 0:
                seen = [m.text for m in self.sent(chat_id) if m.message_id > after]
                raise TimeoutError(
                    f"no matching message in chat {chat_id} within {timeout}s; "
                    f"the bot's messages after {after}: {seen!r}"
                )
            await self.state.wait_change(self.state.version, remaining)

    def chat_commands(self, chat_id: int) -> list[dict[str, str]]:
        """The command menu the chat's user sees: Telegram's scope and language fallback."""
        return menu(self.state, chat_id)

    # ------------------------------------------------------------------ shared with the page

    def type_text(self, chat: Chat, text: str, bot: Bot, sender: Chat | None = None) -> int:
        """A message from the chat's user (or `sender`, in a group) to `bot`; its id."""
        if chat.blocked:
            # writing to a blocked bot means pressing "Restart" first
            self.set_blocked(chat, False, bot)
        message = Message(
            message_id=chat.new_message_id(),
            chat_id=chat.id,
            bot_token=None,
            date=int(time.time()),
            text=text,
            entities=bot_command_entities(text),
            html=html.escape(text, quote=False),
            parse_mode=None,
            keyboard=None,
            user_id=sender.id if sender is not None and sender is not chat else None,
        )
        chat.messages[message.message_id] = message
        chat.used = time.time()
        kind = "channel_post" if chat.type == "channel" else "message"
        self.state.queue(bot, chat.id, kind, message_json(self.state, chat, message))
        return message.message_id

    def set_blocked(self, chat: Chat, blocked: bool, bot: Bot | None = None) -> None:
        """Block or restart the bot: a `my_chat_member` update when it changes anything."""
        if chat.blocked == blocked:
            return
        chat.blocked = blocked
        target = bot or self.state.default_bot()
        old, new = ("member", "kicked") if blocked else ("kicked", "member")
        new_member: dict[str, Any] = {"user": target.user(), "status": new}
        if blocked:
            new_member["until_date"] = 0
        self.state.queue(
            target,
            chat.id,
            "my_chat_member",
            {
                "chat": chat_json(chat),
                "from": user_json(chat),
                "date": int(time.time()),
                # Telegram always sends `until_date` (0 = forever) with "kicked"; PTB needs it.
                "old_chat_member": {"user": target.user(), "status": old}
                | ({} if blocked else {"until_date": 0}),
                "new_chat_member": new_member,
            },
        )

    def _sender(self, chat: Chat, user_id: int | None) -> Chat:
        """The private chat of the user writing in `chat` (a group needs `user_id`)."""
        if chat.type == "private":
            if user_id not in (None, chat.id):
                raise ValueError("only the chat's own user writes in a private chat")
            return chat
        if user_id is None:
            if chat.type == "channel":
                return chat  # a channel post is signed by the channel
            raise ValueError("say which member writes in a group: user_id=")
        return self.state.chat(user_id)
