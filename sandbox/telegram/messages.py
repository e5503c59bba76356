"""The Bot API methods that write in chats: send, edit, delete, answer a button, show typing.

Checks run in Telegram's order (the text and its markup before the chat, the chat before the
rate limit), so a refused call answers with the description Telegram would give first.
"""

from __future__ import annotations

import collections
import math
import time
from collections.abc import Callable
from typing import Any

from sandbox.telegram.params import (
    ApiError,
    Params,
    as_bool,
    as_int,
    as_json,
    bad,
    blocked,
    chat_id_of,
    inline_keyboard,
    message_text,
    shows_link_preview,
)
from sandbox.telegram.state import Bot, Chat, Message, State
from sandbox.telegram.wire import message_json

CALLBACK_QUERY_TTL = 15 * 60.0
CHAT_ACTION_SECONDS = 5.0
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
NOT_MODIFIED = (
    "message is not modified: specified new message content and reply markup "
    "are exactly the same as a current content and reply markup of the message"
)
QUERY_TOO_OLD = "query is too old and response timeout expired or query ID is invalid"


# Telegram's limits on sending (core.telegram.org/bots/faq), each per bot: about 30 messages a
# second over all chats, about one a second in one chat (short bursts allowed), 20 a minute in a
# group. The overall one is a sliding one-second window; a chat's a bucket of `CHAT_BURST`
# refilled at `CHAT_RATE` (as the bot's own limiter paces, `bot.telegram.ratelimit`); a
# group's a sliding minute. `JITTER`: how early a message may come before its chat's next turn,
# since sends paced by the sender reach the server a few milliseconds apart.
TELEGRAM_RATE = 30.0
CHAT_BURST = 20
CHAT_RATE = 1.0
GROUP_LIMIT = 20
GROUP_WINDOW = 60.0
JITTER = 0.25


def _too_many(retry_after: float) -> ApiError:
    seconds = max(1, math.ceil(retry_after))
    return ApiError(429, f"Too Many Requests: retry after {seconds}", {"retry_after": seconds})


class SendRate:
    """Telegram's send limits per bot (above); beyond one, 429 with `retry_after`.

    `limit` is the overall limit in messages per second (None: no limit at all, not even a
    chat's or a group's); `refused` counts the 429s answered, `refused_by` per limit
    ("global", "chat", "group").
    """

    def __init__(self, limit: float | None = TELEGRAM_RATE) -> None:
        self.limit = limit
        self.clock: Callable[[], float] = time.monotonic  # a test may stop it
        self.refused_by: collections.Counter[str] = collections.Counter()
        self._sends: dict[str, collections.deque[float]] = {}  # per bot: the last second's
        self._chats: dict[tuple[str, int], float] = {}  # per bot and chat: GCRA's next turn
        self._groups: dict[tuple[str, int], collections.deque[float]] = {}

    @property
    def refused(self) -> int:
        return sum(self.refused_by.values())

    def check(self, token: str = "", chat: Chat | None = None) -> None:
        """Count a message of bot `token` to `chat`, or refuse it (nothing counted)."""
        if self.limit is None:
            return
        now = self.clock()
        sends = self._overall(token, now)
        turn = group = None
        if chat is not None and chat.type == "private":
            turn = self._chat_turn(token, chat.id, now)
        elif chat is not None:
            group = self._group(token, chat.id, now)
        sends.append(now)
        if turn is not None and chat is not None:
            self._chats[token, chat.id] = turn
        if group is not None:
            group.append(now)

    def _overall(self, token: str, now: float) -> collections.deque[float]:
        assert self.limit is not None
        capacity = max(1, round(self.limit))
        window = capacity / self.limit
        sends = self._sends.setdefault(token, collections.deque())
        while sends and sends[0] <= now - window:
            sends.popleft()
        if len(sends) >= capacity:
            self.refused_by["global"] += 1
            raise _too_many(sends[0] + window - now)
        return sends

    def _chat_turn(self, token: str, chat_id: int, now: float) -> float:
        """The chat's next theoretical arrival time once this message is let through."""
        interval = 1 / CHAT_RATE
        tat = max(self._chats.get((token, chat_id), now), now)
        allowed_at = tat - (CHAT_BURST - 1) * interval - JITTER
        if now < allowed_at:
            self.refused_by["chat"] += 1
            raise _too_many(allowed_at - now)
        return tat + interval

    def _group(self, token: str, chat_id: int, now: float) -> collections.deque[float]:
        sends = self._groups.setdefault((token, chat_id), collections.deque())
        while sends and sends[0] <= now - GROUP_WINDOW:
            sends.popleft()
        if len(sends) >= GROUP_LIMIT:
            self.refused_by["group"] += 1
            raise _too_many(sends[0] + GROUP_WINDOW - now)
        return sends


class Messages:
    def __init__(self, state: State, rate: SendRate) -> None:
        self.state = state
        self.rate = rate
        self.callback_query_ttl = CALLBACK_QUERY_TTL

    def _chat(self, params: Params) -> Chat:
        chat = self.state.chats.get(chat_id_of(params))
        if chat is None:
            raise bad("chat not found")
        return chat

    async def send_message(self, bot: Bot, params: Params) -> dict[str, Any]:
        if params.get("chat_id") in (None, ""):
            raise bad("chat_id is empty")
        text = message_text(params)
        keyboard = inline_keyboard(params.get("reply_markup"))
        chat = self._chat(params)
        if chat.blocked:
            raise blocked()
        reply_to = self._reply_to(chat, params)
        self.rate.check(bot.token, chat)
        message = Message(
            message_id=chat.new_message_id(),
            chat_id=chat.id,
            bot_token=bot.token,
            date=int(time.time()),
            text=text.text,
            entities=text.entities,
            html=text.source,
            parse_mode=text.parse_mode,
            keyboard=keyboard,
            reply_to=reply_to,
            link_preview=shows_link_preview(params),
        )
        chat.messages[message.message_id] = message
        chat.action_until = 0.0
        self.state.bump()
        return message_json(self.state, chat, message)

    def _reply_to(self, chat: Chat, params: Params) -> int | None:
        message_id: int | None = None
        allow_missing = as_bool(params.get("allow_sending_without_reply", False))
        not_found = bad("message to be replied not found")
        if params.get("reply_parameters"):
            reply = as_json(params["reply_parameters"], "can't parse reply parameters JSON")
            if isinstance(reply, dict) and "message_id" in reply:
                message_id = as_int(reply["message_id"], not_found)
                allow_missing = as_bool(reply.get("allow_sending_without_reply", allow_missing))
        elif params.get("reply_to_message_id") not in (None, ""):
            message_id = as_int(params["reply_to_message_id"], not_found)
        if message_id is None:
            return None
        if message_id not in chat.messages:
            if allow_missing:
                return None
            raise not_found
        return message_id

    def _editable(self, params: Params) -> tuple[Chat, Message]:
        if params.get("inline_message_id"):
            raise bad("message to edit not found")
        chat = self._chat(params)
        if params.get("message_id") in (None, ""):
            raise bad("message identifier is not specified")
        message_id = as_int(params["message_id"], bad("message to edit not found"))
        message = chat.messages.get(message_id)
        if message is None:
            raise bad("message to edit not found")
        if message.bot_token is None:
            raise bad("message can't be edited")
        if chat.blocked:
            raise blocked()
        return chat, message

    async def edit_text(self, bot: Bot, params: Params) -> dict[str, Any]:
        text = message_text(params)
        keyboard = inline_keyboard(params.get("reply_markup"))
        chat, message = self._editable(params)
        if (message.text, message.entities, message.keyboard) == (
            text.text,
            text.entities,
            keyboard,
        ):
            raise bad(NOT_MODIFIED)
        self.rate.check()
        message.text, message.entities, message.html = text.text, text.entities, text.source
        message.parse_mode, message.keyboard = text.parse_mode, keyboard
        message.link_preview = shows_link_preview(params)
        message.edited()
        self.state.bump()
        return message_json(self.state, chat, message)

    async def edit_markup(self, bot: Bot, params: Params) -> dict[str, Any]:
        keyboard = inline_keyboard(params.get("reply_markup"))
        chat, message = self._editable(params)
        if message.keyboard == keyboard:
            raise bad(NOT_MODIFIED)
        self.rate.check()
        message.keyboard = keyboard
        message.edited()
        self.state.bump()
        return message_json(self.state, chat, message)

    async def delete_message(self, bot: Bot, params: Params) -> bool:
        chat = self._chat(params)
        message_id = as_int(params.get("message_id"), bad("message to delete not found"))
        if message_id not in chat.messages:
            raise bad("message to delete not found")
        del chat.messages[message_id]
        self.state.bump()
        return True

    async def answer_callback(self, bot: Bot, params: Params) -> bool:
        query_id = str(params.get("callback_query_id") or "")
        query = self.state.queries.get(query_id)
        if (
            query is None
            or query.bot_token != bot.token
            or query.answered
            or time.monotonic() - query.created > self.callback_query_ttl
        ):
            raise bad(QUERY_TOO_OLD)
        query.answered = True
        answer: dict[str, Any] = {
            "text": params.get("text"),
            "show_alert": as_bool(params.get("show_alert", False)),
        }
        if params.get("url"):
            answer["url"] = params["url"]
        if params.get("cache_time") not in (None, ""):
            answer["cache_time"] = as_int(params["cache_time"], bad("wrong cache_time"))
        self.state.callback_answers[query_id] = answer
        self.state.bump()
        return True

    async def send_chat_action(self, bot: Bot, params: Params) -> bool:
        if params.get("action") not in CHAT_ACTIONS:
            raise bad("wrong parameter action in request")
        chat = self._chat(params)
        if chat.blocked:
            raise blocked()
        chat.action_until = time.monotonic() + CHAT_ACTION_SECONDS
        self.state.bump()
        return True
