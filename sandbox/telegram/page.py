"""The chat page for people: `/` with its static files, a small JSON API under `/api/`, and
`t.me/<bot>` deep links.

The page long-polls `/api/poll` and acts through the same `UserDriver` as the tests, so what a
person sees in the browser is what a test sees. The chat shown is the `chat` query parameter,
else the `tg_chat` cookie, else the chat used last. Named `actions` (the demo's "Run reminder
sweep", ...) are buttons at the top of the page; each returns a notice to show.
"""

from __future__ import annotations

import asyncio
import html
import logging
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from sandbox.telegram.driver import UserDriver, buttons
from sandbox.telegram.markup import to_html
from sandbox.telegram.state import Chat, Message, State
from sandbox.telegram.webapp import init_data, launch_url

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).parent / "static"
CHAT_COOKIE = "tg_chat"
PAGE_CHAT_IDS_FROM = 5_000_001
MAX_POLL_WAIT = 30.0
TAP_ANSWER_WAIT = 5.0
# The chat page's language picker (static/index.html): the languages the bot speaks.
LANGUAGES = ("da", "en", "uk")
_START_PAYLOAD = re.compile(r"[A-Za-z0-9_-]{1,64}")

Action = Callable[[], Awaitable[str]]


def _with_chat_cookie(response: web.Response, chat_id: int) -> web.Response:
    response.set_cookie(CHAT_COOKIE, str(chat_id), path="/", samesite="Lax")
    return response


def _message_json(state: State, message: Message, chat: Chat) -> dict[str, Any]:
    from_bot = message.bot_token is not None
    via = state.bots.get(message.via_bot or "")

    def web_app(url: str | None) -> str | None:
        if url is None or message.bot_token is None:
            return None
        signed = init_data(message.bot_token, chat.id, chat.first_name, chat.language_code)
        return launch_url(url, signed)

    return {
        "id": message.message_id,
        "out": not from_bot,
        "via": via.username if via is not None else None,
        "html": to_html(message.text, message.entities)
        if from_bot or via is not None
        else html.escape(message.text, quote=False),
        "buttons": [
            [
                {
                    "text": b.text,
                    "callback_data": b.callback_data,
                    "url": b.url,
                    "web_app": web_app(b.web_app),
                }
                for b in row
            ]
            for row in buttons(message.keyboard)
        ],
        "date": message.date,
        "edited": message.edits > 0,
        "reply_to": message.reply_to,
    }


class ChatPage:
    def __init__(self, driver: UserDriver, actions: dict[str, Action]) -> None:
        self.driver = driver
        self.state = driver.state
        self.actions = actions

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/", self._page)
        app.router.add_get("/t.me/{username}", self._deep_link)
        app.router.add_get("/api/poll", self._poll)
        app.router.add_post("/api/chats", self._new_chat)
        app.router.add_post("/api/chats/{chat_id}/select", self._select)
        app.router.add_post("/api/chats/{chat_id}/send", self._send)
        app.router.add_post("/api/chats/{chat_id}/tap", self._tap)
        app.router.add_post("/api/chats/{chat_id}/block", self._block)
        app.router.add_post("/api/chats/{chat_id}/inline", self._inline)
        app.router.add_post("/api/chats/{chat_id}/inline/choose", self._choose)
        app.router.add_post("/api/actions", self._action)
        app.router.add_static("/static/", STATIC_DIR)

    # ------------------------------------------------------------------ which chat

    def _ensure_a_chat(self) -> None:
        if not self.state.chats:
            self.driver.add_chat(self._next_chat_id(), first_name="Patron", language_code="da")

    def _next_chat_id(self) -> int:
        return max([PAGE_CHAT_IDS_FROM - 1, *self.state.chats]) + 1

    def _current_chat(self, request: web.Request) -> Chat:
        self._ensure_a_chat()
        chats = self.state.chats
        for raw in (request.query.get("chat"), request.cookies.get(CHAT_COOKIE)):
            if raw and raw.lstrip("-").isdigit() and int(raw) in chats:
                return chats[int(raw)]
        return max(chats.values(), key=lambda chat: chat.used)

    def _chat_in_path(self, request: web.Request) -> Chat:
        raw = request.match_info["chat_id"]
        if not raw.lstrip("-").isdigit() or int(raw) not in self.state.chats:
            raise web.HTTPNotFound(text="no such chat")
        return self.state.chats[int(raw)]

    # ------------------------------------------------------------------ handlers

    async def _page(self, request: web.Request) -> web.StreamResponse:
        self._ensure_a_chat()
        return web.FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-store"})

    async def _poll(self, request: web.Request) -> web.Response:
        try:
            since = int(request.query.get("since", "-1"))
            wait = min(float(request.query.get("wait", "0")), MAX_POLL_WAIT)
        except ValueError:
            raise web.HTTPBadRequest(text="since and wait are numbers") from None
        state = self.state
        self._ensure_a_chat()
        if since == state.version:
            await state.wait_change(since, wait)
        chat = self._current_chat(request)
        bot = state.default_bot() if state.bots else None
        body = {
            "version": state.version,
            "bot": bot.user() if bot else None,
            "chats": [
                {
                    "id": c.id,
                    "first_name": c.first_name,
                    "language_code": c.language_code,
                    "blocked": c.blocked,
                }
                for c in state.chats.values()
            ],
            "current": chat.id,
            "messages": [_message_json(state, m, chat) for m in chat.in_order()],
            "commands": self.driver.chat_commands(chat.id) if bot else [],
            "typing": chat.action_until > time.monotonic(),
            "actions": list(self.actions),
        }
        return web.json_response(body)

    async def _new_chat(self, request: web.Request) -> web.Response:
        data = await request.json()
        name = str(data.get("first_name") or "").strip()[:64] or "Patron"
        language = data.get("language_code") if data.get("language_code") in LANGUAGES else "da"
        chat_id = self._next_chat_id()
        self.driver.add_chat(chat_id, first_name=name, language_code=language)
        return _with_chat_cookie(web.json_response({"id": chat_id}), chat_id)

    async def _select(self, request: web.Request) -> web.Response:
        chat = self._chat_in_path(request)
        chat.used = time.time()
        return _with_chat_cookie(web.json_response({"id": chat.id}), chat.id)

    async def _send(self, request: web.Request) -> web.Response:
        chat = self._chat_in_path(request)
        data = await request.json()
        text = str(data.get("text") or "")
        if not text.strip():
            raise web.HTTPBadRequest(text="empty message")
        if not self.state.bots:
            raise web.HTTPConflict(text="no bot registered")
        message_id = self.driver.type_text(chat, text, self.state.default_bot())
        return web.json_response({"message_id": message_id})

    async def _tap(self, request: web.Request) -> web.Response:
        chat = self._chat_in_path(request)
        data = await request.json()
        try:
            query_id = await self.driver.tap(chat.id, int(data["message_id"]), str(data["data"]))
        except (KeyError, ValueError, TypeError) as exc:
            raise web.HTTPBadRequest(text=str(exc)) from None
        # the page shows the bot's answer as a toast, so wait briefly for it
        state = self.state
        loop = asyncio.get_running_loop()
        deadline = loop.time() + TAP_ANSWER_WAIT
        while query_id not in state.callback_answers and loop.time() < deadline:
            await state.wait_change(state.version, deadline - loop.time())
        answer = state.callback_answers.get(query_id)
        return web.json_response({"query_id": query_id, "answer": answer})

    async def _inline(self, request: web.Request) -> web.Response:
        """`@<bot> words` typed in the message field: the bot's results (empty if it is slow)."""
        chat = self._chat_in_path(request)
        data = await request.json()
        try:
            query_id = await self.driver.inline_query(
                chat.id, str(data.get("query") or ""), offset=str(data.get("offset") or "")
            )
            answer = await self.driver.inline_answer(query_id, timeout=TAP_ANSWER_WAIT)
        except (ValueError, RuntimeError) as exc:
            raise web.HTTPConflict(text=str(exc)) from None
        except TimeoutError:
            return web.json_response({"query_id": None, "results": [], "next_offset": ""})
        results = [
            {
                "id": r.id,
                "title": r.title,
                "description": r.description,
                "thumbnail_url": r.thumbnail_url,
            }
            for r in answer.results
        ]
        return web.json_response(
            {"query_id": query_id, "results": results, "next_offset": answer.next_offset}
        )

    async def _choose(self, request: web.Request) -> web.Response:
        self._chat_in_path(request)
        data = await request.json()
        try:
            message_id = await self.driver.choose(
                str(data.get("query_id") or ""), str(data.get("result_id") or "")
            )
        except (KeyError, ValueError) as exc:
            raise web.HTTPBadRequest(text=str(exc)) from None
        return web.json_response({"message_id": message_id})

    async def _block(self, request: web.Request) -> web.Response:
        chat = self._chat_in_path(request)
        data = await request.json()
        self.driver.set_blocked(chat, bool(data.get("blocked")))
        return web.json_response({"blocked": chat.blocked})

    async def _action(self, request: web.Request) -> web.Response:
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
        bots = self.state.bots.values()
        bot = next((b for b in bots if b.username.lower() == username), None)
        if bot is None:
            raise web.HTTPNotFound(text="Sorry, this bot doesn't seem to exist.")
        chat = self._current_chat(request)
        payload = request.query.get("start", "")
        # Telegram apps drop a payload outside [A-Za-z0-9_-]{1,64} and send a bare /start
        text = f"/start {payload}" if _START_PAYLOAD.fullmatch(payload) else "/start"
        self.driver.type_text(chat, text, bot)
        response = web.HTTPFound(f"/?chat={chat.id}")
        response.set_cookie(CHAT_COOKIE, str(chat.id), path="/", samesite="Lax")
        raise response
