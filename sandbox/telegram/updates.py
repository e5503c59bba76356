"""How a bot takes its updates: long-polled `getUpdates`, or a webhook (set, deleted, described).

As Telegram: the two exclude each other (409), a second `getUpdates` ends the first (409), and
an update stays pending until a later offset confirms it or the webhook accepted it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from sandbox.telegram.params import (
    ApiError,
    Params,
    allowed_updates_of,
    as_bool,
    as_int,
    bad,
)
from sandbox.telegram.state import DEFAULT_ALLOWED_UPDATES, Bot, State

_SECRET_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,256}")
_WEBHOOK_ACTIVE = (
    "Conflict: can't use getUpdates method while webhook is active; "
    "use deleteWebhook to delete the webhook first"
)
_OTHER_POLL = (
    "Conflict: terminated by other getUpdates request; "
    "make sure that only one bot instance is running"
)


class Updates:
    def __init__(self, state: State, deliver: Callable[[Bot, int], None]) -> None:
        """`deliver(bot, chat_id)` starts posting a chat's pending updates to the webhook."""
        self.state = state
        self.deliver = deliver

    @staticmethod
    def _allow(bot: Bot, params: Params) -> None:
        chosen = allowed_updates_of(params)
        if chosen is not None:
            bot.allowed_updates = chosen or DEFAULT_ALLOWED_UPDATES

    @staticmethod
    def _drop_pending(bot: Bot, params: Params) -> None:
        if as_bool(params.get("drop_pending_updates", False)):
            bot.updates.clear()

    async def get_updates(self, bot: Bot, params: Params) -> list[dict[str, Any]]:
        if bot.webhook_url:
            raise ApiError(409, _WEBHOOK_ACTIVE)
        self._allow(bot, params)
        invalid = bad("wrong parameter")
        offset = as_int(params.get("offset") or 0, invalid)
        limit = min(max(as_int(params.get("limit") or 100, invalid), 1), 100)
        timeout = max(as_int(params.get("timeout") or 0, invalid), 0)
        if offset < 0:
            bot.updates = bot.updates[offset:]
        elif offset:
            bot.updates = [p for p in bot.updates if p.update["update_id"] >= offset]
        bot.poll_generation += 1
        generation = bot.poll_generation
        state = self.state
        state.bump()  # wakes an older getUpdates of this bot, which then answers 409
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            if bot.webhook_url or state.closing:
                return []
            if bot.poll_generation != generation:
                raise ApiError(409, _OTHER_POLL)
            if bot.updates:
                return [p.update for p in bot.updates[:limit]]
            remaining = deadline - loop.time()
            if remaining <= 0:
                return []
            await state.wait_change(state.version, remaining)

    async def set_webhook(self, bot: Bot, params: Params) -> bool:
        url = str(params.get("url") or "")
        if not url:
            return await self.delete_webhook(bot, params)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            # real Telegram wants HTTPS on 443/80/88/8443; the sandbox allows any loopback URL
            raise bad("bad webhook: An HTTPS URL must be provided for webhook")
        secret = params.get("secret_token")
        if secret not in (None, "") and not _SECRET_TOKEN.fullmatch(str(secret)):
            raise bad("secret token contains unallowed characters")
        self._allow(bot, params)
        self._drop_pending(bot, params)
        bot.webhook_url = url
        bot.webhook_secret = str(secret) if secret else None
        bot.webhook_error = bot.webhook_error_date = None
        bot.poll_generation += 1  # a waiting getUpdates ends
        for chat_id in {p.chat_id for p in bot.updates}:
            self.deliver(bot, chat_id)
        self.state.bump()
        return True

    async def delete_webhook(self, bot: Bot, params: Params) -> bool:
        bot.webhook_url = None
        bot.webhook_secret = None
        self._drop_pending(bot, params)
        self.state.bump()
        return True

    async def webhook_info(self, bot: Bot, params: Params) -> dict[str, Any]:
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
