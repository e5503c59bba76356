"""A wire-level stand-in for the Telegram Bot API, with a chat page for people.

One aiohttp server answers `/bot<token>/<method>` like api.telegram.org (form, JSON or
multipart bodies; Telegram's error descriptions), plays the user's side (messages, button taps,
blocking) for tests, and serves a chat page at `/` with a small JSON API under `/api/`.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import html
import json
import logging
import math
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web

from library_bot.sandbox.telegram.faults import Failures
from library_bot.sandbox.telegram.markup import (
    MAX_TEXT_LENGTH,
    Entity,
    ParseError,
    bot_command_entities,
    entities_from_utf16,
    parse,
    to_html,
    utf16_entities,
)

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).parent / "static"
CHAT_COOKIE = "tg_chat"
CALLBACK_QUERY_TTL = 15 * 60.0
WEBHOOK_ATTEMPTS = 3
PAGE_CHAT_IDS_FROM = 5_000_001
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
CHAT_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)
_COMMAND_NAME = re.compile(r"[a-z0-9_]{1,32}")
_START_PAYLOAD = re.compile(r"[A-Za-z0-9_-]{1,64}")
_SECRET_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,256}")
_NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup "
    "are exactly the same as a current content and reply markup of the message"
)
_QUERY_TOO_OLD = "Bad Request: query is too old and response timeout expired or query ID is invalid"

Action = Callable[[], Awaitable[str]]


@dataclass(frozen=True)
class Button:
    """An inline keyboard button as the user sees it."""

    text: str
    callback_data: str | None = None
    url: str | None = None


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

    def button(self, text: str) -> Button:
        """The first button whose text contains `text`."""
        for row in self.buttons:
            for candidate in row:
                if text in candidate.text:
                    return candidate
        raise KeyError(f"no button with {text!r} in message {self.message_id}: {self.buttons}")


_DEFAULT_SCOPE = json.dumps({"type": "default"})


class ApiError(Exception):
    """An error answer of the Bot API."""

    def __init__(
        self, status: int, description: str, parameters: dict[str, Any] | None = None
    ) -> None:
        super().__init__(description)
        self.status = status
        self.description = description
        self.parameters = parameters


def _bad(description: str) -> ApiError:
    return ApiError(400, f"Bad Request: {description}")


@dataclass
class _Message:
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


@dataclass
class _Chat:
    id: int
    first_name: str
    language_code: str | None
    blocked: bool = False
    messages: dict[int, _Message] = field(default_factory=dict)
    next_message_id: int = 1
    used: float = 0.0
    action_until: float = 0.0
    type: str = "private"  # or "group", "supergroup", "channel"
    title: str | None = None


@dataclass
class _Query:
    id: str
    chat_id: int
    message_id: int
    bot_token: str
    created: float
    answered: bool = False


@dataclass
class _Pending:
    chat_id: int
    update: dict[str, Any]


@dataclass
class _Bot:
    token: str
    id: int
    username: str
    first_name: str
    updates: list[_Pending] = field(default_factory=list)
    next_update_id: int = 100_000_001
    allowed_updates: frozenset[str] = DEFAULT_ALLOWED_UPDATES
    webhook_url: str | None = None
    webhook_secret: str | None = None
    webhook_error_date: int | None = None
    webhook_error: str | None = None
    poll_generation: int = 0
    delivering: dict[int, asyncio.Task[None]] = field(default_factory=dict)
    scoped_commands: dict[tuple[str, str], list[dict[str, str]]] = field(default_factory=dict)

    def user(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "is_bot": True,
            "first_name": self.first_name,
            "username": self.username,
        }


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value)


def _as_json(value: Any, error: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            raise _bad(error) from None
    return value


def _as_int(value: Any, error: ApiError) -> int:
    if isinstance(value, bool):
        raise error
    try:
        return int(value)
    except (TypeError, ValueError):
        raise error from None


def _valid_button_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme == "tg":
            return bool(parts.netloc or parts.path)
        host = parts.hostname
        _ = parts.port  # raises on a malformed port
    except ValueError:
        return False
    if scheme not in ("http", "https") or not host:
        return False
    labels = host.split(".")
    return len(labels) >= 2 and all(labels)


def _parse_keyboard(raw: Any) -> list[list[dict[str, Any]]] | None:
    """Validate reply_markup; returns the inline keyboard rows (None for other markups)."""
    if raw is None or raw == "":
        return None
    markup = _as_json(raw, "can't parse reply keyboard markup JSON object")
    if not isinstance(markup, dict):
        raise _bad("can't parse reply keyboard markup JSON object")
    if "inline_keyboard" not in markup:
        return None  # reply keyboards, remove_keyboard and force_reply are accepted as is
    rows = markup["inline_keyboard"]
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise _bad(
            'field "inline_keyboard" of the InlineKeyboardMarkup should be an Array of Arrays'
        )
    for row in rows:
        for button in row:
            _check_button(button)
    return [[dict(button) for button in row] for row in rows]


def _check_button(button: Any) -> None:
    prefix = "can't parse inline keyboard button: "
    if not isinstance(button, dict):
        raise _bad(prefix + "InlineKeyboardButton must be an Object")
    if not isinstance(button.get("text"), str):
        raise _bad(prefix + 'Field "text" must be of type String')
    if "callback_data" in button:
        data = button["callback_data"]
        if not isinstance(data, str) or not 1 <= len(data.encode("utf-8")) <= 64:
            raise _bad("BUTTON_DATA_INVALID")
        return
    if "url" in button:
        if not isinstance(button["url"], str) or not _valid_button_url(button["url"]):
            raise _bad("BUTTON_URL_INVALID")
        return
    others = (
        "login_url",
        "web_app",
        "switch_inline_query",
        "switch_inline_query_current_chat",
        "switch_inline_query_chosen_chat",
        "copy_text",
        "callback_game",
        "pay",
    )
    if not any(key in button for key in others):
        raise _bad(prefix + "Text buttons are unallowed in the inline keyboard")


def _buttons(keyboard: list[list[dict[str, Any]]] | None) -> list[list[Button]]:
    return [
        [Button(str(b["text"]), b.get("callback_data"), b.get("url")) for b in row]
        for row in keyboard or []
    ]


class TelegramStandIn:
    """The Bot API stand-in: one bot server, the users' side, and the chat page."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        rate_limit: float | None = None,
        actions: Mapping[str, Action] | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.rate_limit = rate_limit
        self.actions: dict[str, Action] = dict(actions or {})
        self.url = ""
        self.callback_answers: dict[str, dict[str, Any]] = {}
        self.commands: dict[str | None, list[dict[str, str]]] = {}
        self.calls: collections.Counter[str] = collections.Counter()
        self.failures = Failures()
        self.callback_query_ttl = CALLBACK_QUERY_TTL
        self._bots: dict[str, _Bot] = {}
        self._chats: dict[int, _Chat] = {}
        self._queries: dict[str, _Query] = {}
        self._query_counter = 0
        self._sends: collections.deque[float] = collections.deque()
        self._version = 0
        self._changed = asyncio.Event()
        self._closing = False
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", r"/bot{token}/{method}", self._api)
        app.router.add_get("/", self._page)
        app.router.add_get("/t.me/{username}", self._deep_link)
        app.router.add_get("/api/poll", self._page_poll)
        app.router.add_post("/api/chats", self._page_new_chat)
        app.router.add_post("/api/chats/{chat_id}/select", self._page_select)
        app.router.add_post("/api/chats/{chat_id}/send", self._page_send)
        app.router.add_post("/api/chats/{chat_id}/tap", self._page_tap)
        app.router.add_post("/api/chats/{chat_id}/block", self._page_block)
        app.router.add_post("/api/actions", self._page_action)
        app.router.add_static("/static/", STATIC_DIR)
        self._closing = False
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10))
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        server = site._server
        assert server is not None
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1]
        self.url = f"http://{self.host}:{self.port}"

    async def stop(self) -> None:
        self._closing = True
        self._bump()
        for bot in self._bots.values():
            for task in list(bot.delivering.values()):
                task.cancel()
            for task in list(bot.delivering.values()):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            bot.delivering.clear()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> TelegramStandIn:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.stop()

    # ------------------------------------------------------------------ setup

    def add_bot(
        self,
        token: str,
        *,
        username: str = "library_sandbox_bot",
        first_name: str = "Library Bot",
    ) -> None:
        """Register a bot; its id is the digits before the colon of the token."""
        digits, _, secret = token.partition(":")
        if not digits.isdigit() or not secret:
            raise ValueError("a bot token looks like '<digits>:<secret>'")
        self._bots[token] = _Bot(token, int(digits), username, first_name)

    def add_chat(
        self, chat_id: int, *, first_name: str = "Patron", language_code: str | None = "da"
    ) -> None:
        """A private chat with a user whose id is the chat id."""
        if chat_id in self._chats:
            chat = self._chats[chat_id]
            chat.first_name, chat.language_code = first_name, language_code
        else:
            self._chats[chat_id] = _Chat(chat_id, first_name, language_code, used=time.time())
        self._bump()

    def add_group(
        self, chat_id: int, *, title: str = "Book club", chat_type: str = "supergroup"
    ) -> None:
        """A group, supergroup or channel with the bot in it (ids are negative, as Telegram's).

        Members are the users of private chats (`add_chat`); they write with `user_id=`.
        """
        if chat_type not in ("group", "supergroup", "channel") or chat_id >= 0:
            raise ValueError("a group is a group, supergroup or channel with a negative id")
        self._chats[chat_id] = _Chat(
            chat_id, title, None, used=time.time(), type=chat_type, title=title
        )
        self._bump()

    # ------------------------------------------------------------------ the user's side

    async def send_text(self, chat_id: int, text: str, *, user_id: int | None = None) -> int:
        """The user types `text` (in a group: the member `user_id`); returns its message id."""
        chat = self._chat(chat_id)
        return self._user_text(chat, text, self._default_bot(), self._sender(chat, user_id))

    async def edit_text(self, chat_id: int, message_id: int, text: str) -> None:
        """The user edits their message `message_id` to `text` (an `edited_message` update)."""
        chat = self._chat(chat_id)
        message = chat.messages.get(message_id)
        if message is None or message.bot_token is not None:
            raise KeyError(f"no user message {message_id} in chat {chat_id}")
        message.text, message.html = text, html.escape(text, quote=False)
        message.entities = bot_command_entities(text)
        message.edits += 1
        message.edit_date = int(time.time())
        kind = "edited_channel_post" if chat.type == "channel" else "edited_message"
        self._queue(self._default_bot(), chat.id, kind, self._message_json(chat, message))

    async def tap(
        self, chat_id: int, message_id: int, callback_data: str, *, user_id: int | None = None
    ) -> str:
        """The user (in a group: the member `user_id`) taps the inline button carrying
        `callback_data`; returns the query id."""
        chat = self._chat(chat_id)
        sender = self._sender(chat, user_id)
        message = chat.messages.get(message_id)
        if message is None or message.bot_token is None:
            raise KeyError(f"no bot message {message_id} in chat {chat_id}")
        datas = [b.get("callback_data") for row in message.keyboard or [] for b in row]
        if callback_data not in datas:
            raise ValueError(f"message {message_id} has no button with data {callback_data!r}")
        bot = self._bots[message.bot_token]
        self._query_counter += 1
        query_id = str(bot.id * 1_000_000 + self._query_counter)
        self._queries[query_id] = _Query(query_id, chat_id, message_id, bot.token, time.monotonic())
        chat.used = time.time()
        self._queue(
            bot,
            chat_id,
            "callback_query",
            {
                "id": query_id,
                "from": self._user_json(sender),
                "message": self._message_json(chat, message),
                "chat_instance": str(abs(hash((bot.id, chat_id))) % 10**18),
                "data": callback_data,
            },
        )
        return query_id

    def block(self, chat_id: int) -> None:
        """The user blocks the bot: sends to the chat answer 403."""
        self._set_blocked(self._chat(chat_id), True)

    def unblock(self, chat_id: int) -> None:
        """The user restarts the bot."""
        self._set_blocked(self._chat(chat_id), False)

    def sent(self, chat_id: int) -> list[SentMessage]:
        """The bot's messages in the chat, as they stand now, oldest first."""
        chat = self._chats.get(chat_id)
        if chat is None:
            return []
        return [
            self._snapshot(chat, message)
            for message in sorted(chat.messages.values(), key=lambda m: m.message_id)
            if message.bot_token is not None
        ]

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
            await self._wait_change(self._version, remaining)

    # ------------------------------------------------------------------ internals

    def _bump(self) -> None:
        self._version += 1
        self._changed.set()
        self._changed = asyncio.Event()

    async def _wait_change(self, since: int, seconds: float) -> None:
        if self._version != since or self._closing:
            return
        event = self._changed
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), seconds)

    def _default_bot(self) -> _Bot:
        if not self._bots:
            raise RuntimeError("add_bot() first")
        return next(iter(self._bots.values()))

    def _chat(self, chat_id: int) -> _Chat:
        chat = self._chats.get(chat_id)
        if chat is None:
            raise KeyError(f"no chat {chat_id}; add_chat() first")
        return chat

    def _sender(self, chat: _Chat, user_id: int | None) -> _Chat:
        """The private chat of the user writing in `chat` (a group needs `user_id`)."""
        if chat.type == "private":
            if user_id not in (None, chat.id):
                raise ValueError("only the chat's own user writes in a private chat")
            return chat
        if user_id is None:
            if chat.type == "channel":
                return chat  # a channel post is signed by the channel
            raise ValueError("say which member writes in a group: user_id=")
        return self._chat(user_id)

    def _user_json(self, chat: _Chat) -> dict[str, Any]:
        user: dict[str, Any] = {"id": chat.id, "is_bot": False, "first_name": chat.first_name}
        if chat.language_code:
            user["language_code"] = chat.language_code
        return user

    @staticmethod
    def _chat_json(chat: _Chat) -> dict[str, Any]:
        if chat.type != "private":
            return {"id": chat.id, "title": chat.title or "", "type": chat.type}
        return {"id": chat.id, "first_name": chat.first_name, "type": "private"}

    def _message_json(
        self, chat: _Chat, message: _Message, *, nested: bool = False
    ) -> dict[str, Any]:
        result: dict[str, Any] = {"message_id": message.message_id}
        if message.bot_token is not None and message.bot_token in self._bots:
            result["from"] = self._bots[message.bot_token].user()
        elif chat.type == "channel":
            result["sender_chat"] = self._chat_json(chat)
        else:
            result["from"] = self._user_json(self._chats.get(message.user_id or chat.id, chat))
        result |= {
            "chat": self._chat_json(chat),
            "date": message.date,
            "text": message.text,
        }
        if message.entities:
            result["entities"] = utf16_entities(message.text, message.entities)
        if message.keyboard:
            result["reply_markup"] = {"inline_keyboard": message.keyboard}
        if message.edit_date is not None:
            result["edit_date"] = message.edit_date
        if not message.link_preview:
            result["link_preview_options"] = {"is_disabled": True}
        if message.reply_to is not None and not nested:
            replied = chat.messages.get(message.reply_to)
            if replied is not None:
                result["reply_to_message"] = self._message_json(chat, replied, nested=True)
        return result

    def _snapshot(self, chat: _Chat, message: _Message) -> SentMessage:
        return SentMessage(
            chat_id=chat.id,
            message_id=message.message_id,
            text=message.text,
            html=message.html,
            parse_mode=message.parse_mode,
            buttons=_buttons(message.keyboard),
            edits=message.edits,
            entities=list(message.entities),
            reply_to_message_id=message.reply_to,
            link_preview=message.link_preview,
            date=message.date,
        )

    def _new_message_id(self, chat: _Chat) -> int:
        message_id = chat.next_message_id
        chat.next_message_id += 1
        return message_id

    def _user_text(self, chat: _Chat, text: str, bot: _Bot, sender: _Chat | None = None) -> int:
        if chat.blocked:
            # writing to a blocked bot means pressing "Restart" first
            self._set_blocked(chat, False, bot)
        message = _Message(
            message_id=self._new_message_id(chat),
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
        self._queue(bot, chat.id, kind, self._message_json(chat, message))
        return message.message_id

    def _set_blocked(self, chat: _Chat, blocked: bool, bot: _Bot | None = None) -> None:
        if chat.blocked == blocked:
            return
        chat.blocked = blocked
        target = bot or self._default_bot()
        old, new = ("member", "kicked") if blocked else ("kicked", "member")
        new_member: dict[str, Any] = {"user": target.user(), "status": new}
        if blocked:
            new_member["until_date"] = 0
        self._queue(
            target,
            chat.id,
            "my_chat_member",
            {
                "chat": self._chat_json(chat),
                "from": self._user_json(chat),
                "date": int(time.time()),
                # Telegram always sends `until_date` (0 = forever) with "kicked"; PTB needs it.
                "old_chat_member": {"user": target.user(), "status": old}
                | ({} if blocked else {"until_date": 0}),
                "new_chat_member": new_member,
            },
        )

    def _queue(self, bot: _Bot, chat_id: int, kind: str, payload: dict[str, Any]) -> None:
        if kind in bot.allowed_updates:
            update = {"update_id": bot.next_update_id, kind: payload}
            bot.next_update_id += 1
            bot.updates.append(_Pending(chat_id, update))
            if bot.webhook_url:
                self._ensure_delivery(bot, chat_id)
        self._bump()

    # ------------------------------------------------------------------ webhook delivery

    def _ensure_delivery(self, bot: _Bot, chat_id: int) -> None:
        task = bot.delivering.get(chat_id)
        if task is None or task.done():
            bot.delivering[chat_id] = asyncio.create_task(self._deliver(bot, chat_id))

    async def _deliver(self, bot: _Bot, chat_id: int) -> None:
        """Post the chat's updates one at a time, in order, retrying a failed post."""
        try:
            while bot.webhook_url and not self._closing and self._session is not None:
                pending = next((p for p in bot.updates if p.chat_id == chat_id), None)
                if pending is None:
                    return
                url = bot.webhook_url
                headers = {"Content-Type": "application/json"}
                if bot.webhook_secret:
                    headers["X-Telegram-Bot-Api-Secret-Token"] = bot.webhook_secret
                for attempt in range(WEBHOOK_ATTEMPTS):
                    try:
                        async with self._session.post(
                            url, data=json.dumps(pending.update), headers=headers
                        ) as response:
                            await response.read()
                            if 200 <= response.status < 300:
                                break
                            error = f"Wrong response from the webhook: {response.status} "
                            error += response.reason or ""
                    except (aiohttp.ClientError, TimeoutError) as exc:
                        error = f"Connection failed: {exc.__class__.__name__}"
                    bot.webhook_error, bot.webhook_error_date = error.strip(), int(time.time())
                    log.info("webhook delivery failed (attempt %d): %s", attempt + 1, error)
                    if attempt + 1 < WEBHOOK_ATTEMPTS:
                        await asyncio.sleep(0.2 * 2**attempt)
                if pending in bot.updates:
                    bot.updates.remove(pending)
                self._bump()
        finally:
            if bot.delivering.get(chat_id) is asyncio.current_task():
                del bot.delivering[chat_id]

    # ------------------------------------------------------------------ Bot API

    async def _api(self, request: web.Request) -> web.Response:
        token = request.match_info["token"]
        method = request.match_info["method"]
        bot = self._bots.get(token)
        handler = _METHODS.get(method.lower())
        self.calls[handler[0] if handler else method] += 1
        if bot is None:
            return _error(ApiError(401, "Unauthorized"))
        if handler is None:
            return _error(ApiError(404, "Not Found"))
        name, implementation = handler
        try:
            params = await _read_params(request)
            fault = self.failures.take(name)
            if fault is not None:
                if fault.delay:
                    await asyncio.sleep(fault.delay)
                if fault.status is not None:
                    parameters = {"retry_after": fault.retry_after} if fault.retry_after else None
                    raise ApiError(fault.status, fault.error_description(), parameters)
            result = await implementation(self, bot, params)
            if fault is not None and fault.garbled:
                result = _garbled(result)
        except ApiError as exc:
            return _error(exc)
        body: dict[str, Any] = {"ok": True, "result": result}
        if name == "setWebhook":
            body["description"] = (
                "Webhook was set" if params.get("url") else "Webhook is already deleted"
            )
        return web.json_response(body)

    def _api_chat(self, params: dict[str, Any]) -> _Chat:
        raw = params.get("chat_id")
        if raw is None or raw == "":
            raise _bad("chat_id is empty")
        chat_id = _as_int(raw, _bad("chat not found"))
        chat = self._chats.get(chat_id)
        if chat is None:
            raise _bad("chat not found")
        return chat

    def _parse_text(self, params: dict[str, Any]) -> tuple[str, list[Entity], str, str | None]:
        raw = params.get("text")
        if raw is None or str(raw) == "":
            raise _bad("message text is empty")
        source = str(raw)
        parse_mode = params.get("parse_mode") or None
        try:
            text, entities = parse(source, parse_mode)
        except ParseError as exc:
            raise _bad(f"can't parse entities: {exc}") from None
        except ValueError:
            raise _bad(f"unsupported parse_mode {parse_mode}") from None
        if parse_mode is None and params.get("entities"):
            raw_entities = _as_json(params["entities"], "can't parse entities JSON object")
            if isinstance(raw_entities, list):
                entities = entities_from_utf16(text, raw_entities)
        if not text.strip():
            raise _bad("message text is empty")
        if len(text) > MAX_TEXT_LENGTH:
            raise _bad("message is too long")
        return text, entities, source, parse_mode

    def _check_rate(self) -> None:
        if self.rate_limit is None:
            return
        capacity = max(1, round(self.rate_limit))
        window = capacity / self.rate_limit
        now = time.monotonic()
        while self._sends and self._sends[0] <= now - window:
            self._sends.popleft()
        if len(self._sends) >= capacity:
            retry_after = max(1, math.ceil(self._sends[0] + window - now))
            raise ApiError(
                429,
                f"Too Many Requests: retry after {retry_after}",
                {"retry_after": retry_after},
            )
        self._sends.append(now)

    @staticmethod
    def _link_preview(params: dict[str, Any]) -> bool:
        options = params.get("link_preview_options")
        if options:
            parsed = _as_json(options, "can't parse link preview options JSON object")
            if isinstance(parsed, dict) and _as_bool(parsed.get("is_disabled", False)):
                return False
        return not _as_bool(params.get("disable_web_page_preview", False))

    async def _send_message(self, bot: _Bot, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("chat_id") in (None, ""):
            raise _bad("chat_id is empty")
        text, entities, source, parse_mode = self._parse_text(params)
        keyboard = _parse_keyboard(params.get("reply_markup"))
        chat = self._api_chat(params)
        if chat.blocked:
            raise ApiError(403, "Forbidden: bot was blocked by the user")
        reply_to = self._reply_to(chat, params)
        self._check_rate()
        message = _Message(
            message_id=self._new_message_id(chat),
            chat_id=chat.id,
            bot_token=bot.token,
            date=int(time.time()),
            text=text,
            entities=entities,
            html=source,
            parse_mode=parse_mode,
            keyboard=keyboard,
            reply_to=reply_to,
            link_preview=self._link_preview(params),
        )
        chat.messages[message.message_id] = message
        chat.action_until = 0.0
        self._bump()
        return self._message_json(chat, message)

    def _reply_to(self, chat: _Chat, params: dict[str, Any]) -> int | None:
        message_id: int | None = None
        allow_missing = _as_bool(params.get("allow_sending_without_reply", False))
        if params.get("reply_parameters"):
            reply = _as_json(params["reply_parameters"], "can't parse reply parameters JSON")
            if isinstance(reply, dict) and "message_id" in reply:
                message_id = _as_int(reply["message_id"], _bad("message to be replied not found"))
                allow_missing = _as_bool(reply.get("allow_sending_without_reply", allow_missing))
        elif params.get("reply_to_message_id") not in (None, ""):
            message_id = _as_int(
                params["reply_to_message_id"], _bad("message to be replied not found")
            )
        if message_id is None:
            return None
        if message_id not in chat.messages:
            if allow_missing:
                return None
            raise _bad("message to be replied not found")
        return message_id

    def _editable(self, params: dict[str, Any]) -> tuple[_Chat, _Message]:
        if params.get("inline_message_id"):
            raise _bad("message to edit not found")
        chat = self._api_chat(params)
        if params.get("message_id") in (None, ""):
            raise _bad("message identifier is not specified")
        message_id = _as_int(params["message_id"], _bad("message to edit not found"))
        message = chat.messages.get(message_id)
        if message is None:
            raise _bad("message to edit not found")
        if message.bot_token is None:
            raise _bad("message can't be edited")
        if chat.blocked:
            raise ApiError(403, "Forbidden: bot was blocked by the user")
        return chat, message

    async def _edit_text(self, bot: _Bot, params: dict[str, Any]) -> dict[str, Any]:
        text, entities, source, parse_mode = self._parse_text(params)
        keyboard = _parse_keyboard(params.get("reply_markup"))
        chat, message = self._editable(params)
        if (message.text, message.entities, message.keyboard) == (text, entities, keyboard):
            raise _bad(_NOT_MODIFIED.removeprefix("Bad Request: "))
        self._check_rate()
        message.text, message.entities, message.html = text, entities, source
        message.parse_mode, message.keyboard = parse_mode, keyboard
        message.link_preview = self._link_preview(params)
        message.edits += 1
        message.edit_date = int(time.time())
        self._bump()
        return self._message_json(chat, message)

    async def _edit_markup(self, bot: _Bot, params: dict[str, Any]) -> dict[str, Any]:
        keyboard = _parse_keyboard(params.get("reply_markup"))
        chat, message = self._editable(params)
        if message.keyboard == keyboard:
            raise _bad(_NOT_MODIFIED.removeprefix("Bad Request: "))
        self._check_rate()
        message.keyboard = keyboard
        message.edits += 1
        message.edit_date = int(time.time())
        self._bump()
        return self._message_json(chat, message)

    async def _delete_message(self, bot: _Bot, params: dict[str, Any]) -> bool:
        chat = self._api_chat(params)
        message_id = _as_int(params.get("message_id"), _bad("message to delete not found"))
        if message_id not in chat.messages:
            raise _bad("message to delete not found")
        del chat.messages[message_id]
        self._bump()
        return True

    async def _answer_callback(self, bot: _Bot, params: dict[str, Any]) -> bool:
        query_id = str(params.get("callback_query_id") or "")
        query = self._queries.get(query_id)
        if (
            query is None
            or query.bot_token != bot.token
            or query.answered
            or time.monotonic() - query.created > self.callback_query_ttl
        ):
            raise _bad(_QUERY_TOO_OLD.removeprefix("Bad Request: "))
        query.answered = True
        answer: dict[str, Any] = {
            "text": params.get("text"),
            "show_alert": _as_bool(params.get("show_alert", False)),
        }
        if params.get("url"):
            answer["url"] = params["url"]
        if params.get("cache_time") not in (None, ""):
            answer["cache_time"] = _as_int(params["cache_time"], _bad("wrong cache_time"))
        self.callback_answers[query_id] = answer
        self._bump()
        return True

    async def _send_chat_action(self, bot: _Bot, params: dict[str, Any]) -> bool:
        action = params.get("action")
        if action not in CHAT_ACTIONS:
            raise _bad("wrong parameter action in request")
        chat = self._api_chat(params)
        if chat.blocked:
            raise ApiError(403, "Forbidden: bot was blocked by the user")
        chat.action_until = time.monotonic() + 5.0
        self._bump()
        return True

    # ---- commands

    def _scope_key(self, params: dict[str, Any]) -> str:
        scope = _as_json(params.get("scope") or {"type": "default"}, "can't parse scope JSON")
        if not isinstance(scope, dict) or "type" not in scope:
            raise _bad("can't parse BotCommandScope JSON object")
        if scope["type"] == "chat":
            # As Telegram: a chat's scope names a chat the bot knows.
            chat_id = str(scope.get("chat_id", ""))
            if not re.fullmatch(r"-?\d+", chat_id) or int(chat_id) not in self._chats:
                raise _bad("chat not found")
            scope["chat_id"] = int(chat_id)
        return json.dumps(scope, sort_keys=True)

    @staticmethod
    def _language(params: dict[str, Any]) -> str:
        language = str(params.get("language_code") or "")
        if language and not re.fullmatch(r"[a-z]{2}", language):
            raise _bad("invalid language code specified")
        return language

    async def _set_commands(self, bot: _Bot, params: dict[str, Any]) -> bool:
        raw = _as_json(params.get("commands"), "can't parse commands JSON object")
        if not isinstance(raw, list):
            raise _bad("can't parse commands JSON object")
        commands: list[dict[str, str]] = []
        for item in raw:
            if not isinstance(item, dict):
                raise _bad("can't parse BotCommand JSON object")
            command = str(item.get("command", ""))
            description = str(item.get("description", ""))
            if not _COMMAND_NAME.fullmatch(command):
                raise _bad("BOT_COMMAND_INVALID")
            if not 1 <= len(description) <= 256:
                raise _bad("BOT_COMMAND_DESCRIPTION_INVALID")
            commands.append({"command": command, "description": description})
        if len(commands) > 100:
            raise _bad("too many commands")
        key = (self._scope_key(params), self._language(params))
        default = key[0] == _DEFAULT_SCOPE  # `commands` mirrors the default scope only
        if commands:
            bot.scoped_commands[key] = commands
            if default:
                self.commands[key[1] or None] = commands
        else:
            bot.scoped_commands.pop(key, None)
            if default:
                self.commands.pop(key[1] or None, None)
        self._bump()
        return True

    async def _get_commands(self, bot: _Bot, params: dict[str, Any]) -> list[dict[str, str]]:
        key = (self._scope_key(params), self._language(params))
        return list(bot.scoped_commands.get(key, []))

    async def _delete_commands(self, bot: _Bot, params: dict[str, Any]) -> bool:
        key = (self._scope_key(params), self._language(params))
        bot.scoped_commands.pop(key, None)
        if key[0] == _DEFAULT_SCOPE:
            self.commands.pop(key[1] or None, None)
        self._bump()
        return True

    def chat_commands(self, chat_id: int) -> list[dict[str, str]]:
        """The command menu the chat's user sees: Telegram's scope and language fallback."""
        chat = self._chat(chat_id)
        bot = self._default_bot()
        scopes = [
            {"type": "chat", "chat_id": chat_id},
            {"type": "all_private_chats"},
            {"type": "default"},
        ]
        for scope in scopes:
            key = json.dumps(scope, sort_keys=True)
            for language in (chat.language_code or "", ""):
                found = bot.scoped_commands.get((key, language))
                if found:
                    return list(found)
        return []

    # ---- updates

    async def _get_updates(self, bot: _Bot, params: dict[str, Any]) -> list[dict[str, Any]]:
        if bot.webhook_url:
            raise ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        if params.get("allowed_updates") not in (None, ""):
            allowed = _as_json(params["allowed_updates"], "can't parse allowed updates")
            if isinstance(allowed, list):
                chosen = frozenset(str(kind) for kind in allowed)
                bot.allowed_updates = chosen or DEFAULT_ALLOWED_UPDATES
        invalid = _bad("wrong parameter")
        offset = _as_int(params.get("offset") or 0, invalid)
        limit = min(max(_as_int(params.get("limit") or 100, invalid), 1), 100)
        timeout = max(_as_int(params.get("timeout") or 0, invalid), 0)
        if offset < 0:
            bot.updates = bot.updates[offset:]
        elif offset:
            bot.updates = [p for p in bot.updates if p.update["update_id"] >= offset]
        bot.poll_generation += 1
        generation = bot.poll_generation
        self._bump()  # wakes an older getUpdates of this bot, which then answers 409
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            if bot.webhook_url or self._closing:
                return []
            if bot.poll_generation != generation:
                raise ApiError(
                    409,
                    "Conflict: terminated by other getUpdates request; "
                    "make sure that only one bot instance is running",
                )
            if bot.updates:
                return [p.update for p in bot.updates[:limit]]
            remaining = deadline - loop.time()
            if remaining <= 0:
                return []
            await self._wait_change(self._version, remaining)

    async def _set_webhook(self, bot: _Bot, params: dict[str, Any]) -> bool:
        url = str(params.get("url") or "")
        if not url:
            return await self._delete_webhook(bot, params)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            # real Telegram wants HTTPS on 443/80/88/8443; the sandbox allows any loopback URL
            raise _bad("bad webhook: An HTTPS URL must be provided for webhook")
        secret = params.get("secret_token")
        if secret not in (None, "") and not _SECRET_TOKEN.fullmatch(str(secret)):
            raise _bad("secret token contains unallowed characters")
        if params.get("allowed_updates") not in (None, ""):
            allowed = _as_json(params["allowed_updates"], "can't parse allowed updates")
            if isinstance(allowed, list):
                bot.allowed_updates = frozenset(map(str, allowed)) or DEFAULT_ALLOWED_UPDATES
        if _as_bool(params.get("drop_pending_updates", False)):
            bot.updates.clear()
        bot.webhook_url = url
        bot.webhook_secret = str(secret) if secret else None
        bot.webhook_error = bot.webhook_error_date = None
        bot.poll_generation += 1  # a waiting getUpdates ends
        for chat_id in {p.chat_id for p in bot.updates}:
            self._ensure_delivery(bot, chat_id)
        self._bump()
        return True

    async def _delete_webhook(self, bot: _Bot, params: dict[str, Any]) -> bool:
        bot.webhook_url = None
        bot.webhook_secret = None
        if _as_bool(params.get("drop_pending_updates", False)):
            bot.updates.clear()
        self._bump()
        return True

    async def _webhook_info(self, bot: _Bot, params: dict[str, Any]) -> dict[str, Any]:
        info: dict[str, Any] = {
            "url": bot.webhook_url or "",
            "has_custom_certificate": False,
            "pending_update_count": len(bot.updates),
        }
        if bot.webhook_url:
            info["max_connections"] = 40
            info["ip_address"] = "127.0.0.1"
            if bot.allowed_updates != DEFAULT_ALLOWED_UPDATES:
                info["allowed_updates"] = sorted(bot.allowed_updates)
        if bot.webhook_error_date is not None:
            info["last_error_date"] = bot.webhook_error_date
            info["last_error_message"] = bot.webhook_error
        return info

    async def _get_me(self, bot: _Bot, params: dict[str, Any]) -> dict[str, Any]:
        return {
            **bot.user(),
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }

    async def _true(self, bot: _Bot, params: dict[str, Any]) -> bool:
        return True

    # ------------------------------------------------------------------ chat page

    def _ensure_a_chat(self) -> None:
        if not self._chats:
            self.add_chat(self._next_page_chat_id(), first_name="Patron", language_code="da")

    def _next_page_chat_id(self) -> int:
        return max([PAGE_CHAT_IDS_FROM - 1, *self._chats]) + 1

    def _current_chat(self, request: web.Request) -> _Chat:
        self._ensure_a_chat()
        for raw in (request.query.get("chat"), request.cookies.get(CHAT_COOKIE)):
            if raw and raw.lstrip("-").isdigit() and int(raw) in self._chats:
                return self._chats[int(raw)]
        return max(self._chats.values(), key=lambda chat: chat.used)

    def _page_chat(self, request: web.Request) -> _Chat:
        raw = request.match_info["chat_id"]
        if not raw.lstrip("-").isdigit() or int(raw) not in self._chats:
            raise web.HTTPNotFound(text="no such chat")
        return self._chats[int(raw)]

    async def _page(self, request: web.Request) -> web.StreamResponse:
        self._ensure_a_chat()
        return web.FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-store"})

    def _page_message(self, chat: _Chat, message: _Message) -> dict[str, Any]:
        return {
            "id": message.message_id,
            "out": message.bot_token is None,
            "html": to_html(message.text, message.entities)
            if message.bot_token is not None
            else html.escape(message.text, quote=False),
            "buttons": [
                [{"text": b.text, "callback_data": b.callback_data, "url": b.url} for b in row]
                for row in _buttons(message.keyboard)
            ],
            "date": message.date,
            "edited": message.edits > 0,
            "reply_to": message.reply_to,
        }

    async def _page_poll(self, request: web.Request) -> web.Response:
        try:
            since = int(request.query.get("since", "-1"))
            wait = min(float(request.query.get("wait", "0")), 30.0)
        except ValueError:
            raise web.HTTPBadRequest(text="since and wait are numbers") from None
        self._ensure_a_chat()
        if since == self._version:
            await self._wait_change(since, wait)
        chat = self._current_chat(request)
        bot = self._default_bot() if self._bots else None
        body = {
            "version": self._version,
            "bot": bot.user() if bot else None,
            "chats": [
                {
                    "id": c.id,
                    "first_name": c.first_name,
                    "language_code": c.language_code,
                    "blocked": c.blocked,
                }
                for c in self._chats.values()
            ],
            "current": chat.id,
            "messages": [
                self._page_message(chat, m)
                for m in sorted(chat.messages.values(), key=lambda m: m.message_id)
            ],
            "commands": self.chat_commands(chat.id) if bot else [],
            "typing": chat.action_until > time.monotonic(),
            "actions": list(self.actions),
        }
        return web.json_response(body)

    async def _page_new_chat(self, request: web.Request) -> web.Response:
        data = await request.json()
        name = str(data.get("first_name") or "").strip()[:64] or "Patron"
        language = data.get("language_code") if data.get("language_code") in ("da", "en") else "da"
        chat_id = self._next_page_chat_id()
        self.add_chat(chat_id, first_name=name, language_code=language)
        response = web.json_response({"id": chat_id})
        response.set_cookie(CHAT_COOKIE, str(chat_id), path="/", samesite="Lax")
        return response

    async def _page_select(self, request: web.Request) -> web.Response:
        chat = self._page_chat(request)
        chat.used = time.time()
        response = web.json_response({"id": chat.id})
        response.set_cookie(CHAT_COOKIE, str(chat.id), path="/", samesite="Lax")
        return response

    async def _page_send(self, request: web.Request) -> web.Response:
        chat = self._page_chat(request)
        data = await request.json()
        text = str(data.get("text") or "")
        if not text.strip():
            raise web.HTTPBadRequest(text="empty message")
        if not self._bots:
            raise web.HTTPConflict(text="no bot registered")
        return web.json_response({"message_id": self._user_text(chat, text, self._default_bot())})

    async def _page_tap(self, request: web.Request) -> web.Response:
        chat = self._page_chat(request)
        data = await request.json()
        try:
            query_id = await self.tap(chat.id, int(data["message_id"]), str(data["data"]))
        except (KeyError, ValueError, TypeError) as exc:
            raise web.HTTPBadRequest(text=str(exc)) from None
        # the page shows the bot's answer as a toast, so wait briefly for it
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5.0
        while query_id not in self.callback_answers and loop.time() < deadline:
            await self._wait_change(self._version, deadline - loop.time())
        answer = self.callback_answers.get(query_id)
        return web.json_response({"query_id": query_id, "answer": answer})

    async def _page_block(self, request: web.Request) -> web.Response:
        chat = self._page_chat(request)
        data = await request.json()
        self._set_blocked(chat, bool(data.get("blocked")))
        return web.json_response({"blocked": chat.blocked})

    async def _page_action(self, request: web.Request) -> web.Response:
        data = await request.json()
        name = str(data.get("name") or "")
        action = self.actions.get(name)
        if action is None:
            raise web.HTTPNotFound(text="no such action")
        try:
            notice = await action()
        except Exception as exc:
            log.exception("action %r failed", name)
            return web.json_response({"notice": f"{name}: {exc}"}, status=500)
        return web.json_response({"notice": notice})

    async def _deep_link(self, request: web.Request) -> web.StreamResponse:
        """t.me/<bot>?start=<payload>: the user follows a deep link and presses Start."""
        username = request.match_info["username"].lower()
        bot = next((b for b in self._bots.values() if b.username.lower() == username), None)
        if bot is None:
            raise web.HTTPNotFound(text="Sorry, this bot doesn't seem to exist.")
        chat = self._current_chat(request)
        payload = request.query.get("start", "")
        # Telegram apps drop a payload outside [A-Za-z0-9_-]{1,64} and send a bare /start
        text = f"/start {payload}" if _START_PAYLOAD.fullmatch(payload) else "/start"
        self._user_text(chat, text, bot)
        response = web.HTTPFound(f"/?chat={chat.id}")
        response.set_cookie(CHAT_COOKIE, str(chat.id), path="/", samesite="Lax")
        raise response


Implementation = Callable[[TelegramStandIn, _Bot, dict[str, Any]], Awaitable[Any]]

_METHODS: dict[str, tuple[str, Implementation]] = {
    name.lower(): (name, implementation)
    for name, implementation in [
        ("getMe", TelegramStandIn._get_me),
        ("getUpdates", TelegramStandIn._get_updates),
        ("setWebhook", TelegramStandIn._set_webhook),
        ("deleteWebhook", TelegramStandIn._delete_webhook),
        ("getWebhookInfo", TelegramStandIn._webhook_info),
        ("sendMessage", TelegramStandIn._send_message),
        ("editMessageText", TelegramStandIn._edit_text),
        ("editMessageReplyMarkup", TelegramStandIn._edit_markup),
        ("deleteMessage", TelegramStandIn._delete_message),
        ("answerCallbackQuery", TelegramStandIn._answer_callback),
        ("sendChatAction", TelegramStandIn._send_chat_action),
        ("setMyCommands", TelegramStandIn._set_commands),
        ("getMyCommands", TelegramStandIn._get_commands),
        ("deleteMyCommands", TelegramStandIn._delete_commands),
        ("close", TelegramStandIn._true),
        ("logOut", TelegramStandIn._true),
    ]
}


async def _read_params(request: web.Request) -> dict[str, Any]:
    """Query string plus the body: JSON, form-encoded or multipart (file parts are ignored)."""
    params: dict[str, Any] = dict(request.query)
    if request.method not in ("POST", "PUT") or not request.can_read_body:
        return params
    content_type = request.content_type
    if content_type == "application/json":
        try:
            body = await request.json()
        except ValueError:
            raise _bad("can't parse JSON encoded request parameters") from None
        if not isinstance(body, dict):
            raise _bad("can't parse JSON encoded request parameters")
        params.update(body)
    elif content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        form = await request.post()
        for key, value in form.items():
            if isinstance(value, str):
                params[key] = value
    return params


def _garbled(result: Any) -> Any:
    """A result as an emulator might answer it: a message with only its id (see `faults`)."""
    if isinstance(result, dict) and "message_id" in result:
        return {"message_id": result["message_id"]}
    return {}


def _error(exc: ApiError) -> web.Response:
    body: dict[str, Any] = {
        "ok": False,
        "error_code": exc.status,
        "description": exc.description,
    }
    if exc.parameters:
        body["parameters"] = exc.parameters
    return web.json_response(body, status=exc.status)
