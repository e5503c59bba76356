"""Webhook delivery: each chat's updates posted to the bot's URL one at a time, in order.

As Telegram does, a chat's next update waits for the previous one's answer, a failed post is
tried again a few times and then dropped, and the last failure shows in `getWebhookInfo`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time

import aiohttp

from sandbox.telegram.state import Bot, State

log = logging.getLogger(__name__)

WEBHOOK_ATTEMPTS = 3
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


class WebhookDelivery:
    def __init__(self, state: State) -> None:
        self.state = state
        self._session: aiohttp.ClientSession | None = None
        self._tasks: dict[tuple[str, int], asyncio.Task[None]] = {}

    def start(self) -> None:
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10))

    async def stop(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        if self._session is not None:
            await self._session.close()
            self._session = None

    def ensure(self, bot: Bot, chat_id: int) -> None:
        """Deliver the chat's pending updates, unless a delivery for it is under way."""
        key = (bot.token, chat_id)
        task = self._tasks.get(key)
        if task is None or task.done():
            self._tasks[key] = asyncio.create_task(self._deliver(bot, chat_id))

    async def _deliver(self, bot: Bot, chat_id: int) -> None:
        key = (bot.token, chat_id)
        try:
            while bot.webhook_url and not self.state.closing and self._session is not None:
                pending = next((p for p in bot.updates if p.chat_id == chat_id), None)
                if pending is None:
                    return
                url = bot.webhook_url
                headers = {"Content-Type": "application/json"}
                if bot.webhook_secret:
                    headers[SECRET_HEADER] = bot.webhook_secret
                body = json.dumps(pending.update)
                for attempt in range(WEBHOOK_ATTEMPTS):
                    error = await self._post(self._session, url, body, headers)
                    if error is None:
                        break
                    bot.webhook_error, bot.webhook_error_date = error, int(time.time())
                    log.info("webhook delivery failed (attempt %d): %s", attempt + 1, error)
                    if attempt + 1 < WEBHOOK_ATTEMPTS:
                        await asyncio.sleep(0.2 * 2**attempt)
                if pending in bot.updates:
                    bot.updates.remove(pending)
                self.state.bump()
        finally:
            if self._tasks.get(key) is asyncio.current_task():
                del self._tasks[key]

    @staticmethod
    async def _post(
        session: aiohttp.ClientSession, url: str, body: str, headers: dict[str, str]
    ) -> str | None:
        """Post one update; None when the webhook took it, else the error Telegram would show."""
        try:
            async with session.post(url, data=body, headers=headers) as response:
                await response.read()
                if 200 <= response.status < 300:
                    return None
                error = (
                    f"Wrong response from the webhook: {response.status} {response.reason or ''}"
                )
                return error.strip()
        except (aiohttp.ClientError, TimeoutError) as exc:
            return f"Connection failed: {exc.__class__.__name__}"
