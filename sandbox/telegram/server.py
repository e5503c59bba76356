"""`TelegramStandIn`: a wire-level stand-in for the Telegram Bot API, with a chat page for people.

One aiohttp server answers `/bot<token>/<method>` like api.telegram.org (`api`; in-process,
without HTTP, through `request()`, see `inprocess`), delivers
updates to webhooks (`webhook`) and serves the chat page (`page`); tests play the users through
the methods inherited from `driver.UserDriver`. This module only wires the parts together and
keeps the handful of knobs tests turn (`rate_limit`, `callback_query_ttl`, `failures`, ...).
"""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web

from sandbox.serving import Served, base_url, serve
from sandbox.telegram.api import BotApi
from sandbox.telegram.commands import Commands
from sandbox.telegram.driver import UserDriver
from sandbox.telegram.inline import InlineAnswers
from sandbox.telegram.inprocess import READ_TIMEOUT, StandInRequest
from sandbox.telegram.messages import TELEGRAM_RATE, Messages, SendRate
from sandbox.telegram.page import Action, ChatPage
from sandbox.telegram.state import State
from sandbox.telegram.updates import Updates
from sandbox.telegram.webhook import WebhookDelivery


class TelegramStandIn(UserDriver, Served):
    """The Bot API stand-in: one bot server, the users' side, and the chat page."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        rate_limit: float | None = TELEGRAM_RATE,
        actions: Mapping[str, Action] | None = None,
    ) -> None:
        super().__init__(State())
        self.host = host
        self.port = port
        self.url = ""
        self.webhooks = WebhookDelivery(self.state)
        self.state.on_queued = self.webhooks.ensure
        self.send_rate = SendRate(rate_limit)
        self.messages = Messages(self.state, self.send_rate)
        self.api = BotApi(
            self.state,
            messages=self.messages,
            updates=Updates(self.state, self.webhooks.ensure),
            commands=Commands(self.state),
            inline=InlineAnswers(self.state),
        )
        self.page = ChatPage(self, dict(actions or {}))
        # Shared, not copied: tests read and change these.
        self.calls = self.api.calls
        self.failures = self.api.failures
        self.callback_answers = self.state.callback_answers
        self.commands = self.state.commands
        self._runner: web.AppRunner | None = None

    @property
    def rate_limit(self) -> float | None:
        """Telegram's overall limit in messages per second, per bot; each chat's and group's
        limits are enforced with it (`messages.SendRate`; None: no limit at all)."""
        return self.send_rate.limit

    @rate_limit.setter
    def rate_limit(self, limit: float | None) -> None:
        self.send_rate.limit = limit

    @property
    def callback_query_ttl(self) -> float:
        """Seconds within which a callback query can be answered."""
        return self.messages.callback_query_ttl

    @callback_query_ttl.setter
    def callback_query_ttl(self, seconds: float) -> None:
        self.messages.callback_query_ttl = seconds

    @property
    def actions(self) -> dict[str, Action]:
        """The chat page's named actions."""
        return self.page.actions

    @actions.setter
    def actions(self, actions: dict[str, Action]) -> None:
        self.page.actions = actions  # kept, not copied: actions added later show on the page

    def request(self, *, read_timeout: float | None = READ_TIMEOUT) -> StandInRequest:
        """A PTB request that reaches this stand-in's Bot API in-process, without HTTP (for a
        `telegram.Bot(..., request=...)`; any `base_url` ending in `/bot` will do)."""
        return StandInRequest(self.api, read_timeout=read_timeout)

    async def start(self) -> None:
        app = web.Application()
        self.api.routes(app)
        self.page.routes(app)
        self.state.closing = False
        self.webhooks.start()
        self._runner, self.port = await serve(app, self.host, self.port)
        self.url = base_url(self.host, self.port)

    async def stop(self) -> None:
        self.state.closing = True
        self.state.bump()
        await self.webhooks.stop()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
