"""The Bot API client: PTB's `ExtBot` over `AiohttpRequest`, as `run` and `remind` use it.

Two things differ from a stock bot, both through PTB's public interfaces, for Bot API servers
that are not quite Telegram (local servers, emulators, proxies rewriting answers):

- The bot's own sends read nothing of the answer (`bot.telegram.replies`), so one the server
  accepted (`"ok": true`) counts as delivered even when the message it returned could not be
  parsed: the patron got the text, so no "something went wrong" follows and a reminder is
  marked sent rather than sent again. PTB's methods answer as PTB promises.
- `health` follows the calls that bring updates in (`getUpdates`, `setWebhook`), so `/health`
  can report Telegram failing while they keep failing. A Bot API that stops answering polls is
  told once and its return once, with no traceback: after a failed poll the next one waits
  `RETRY_FIRST` seconds, doubling to `RETRY_CAP` (PTB's own wait grows to 30 s, so a return
  went unnoticed that long), and is a short poll, which says at once that Telegram is back
  (a long one would only say so when it ends, up to `POLL_TIMEOUT` later).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from telegram.error import NetworkError, TelegramError, TimedOut
from telegram.ext import ExtBot

from bot.telegram.ratelimit import paced_rate_limiter
from bot.telegram.request import AiohttpRequest

if TYPE_CHECKING:
    from telegram import Update
    from telegram.request import BaseRequest

    from bot.config.settings import Settings

__all__ = ["ApiHealth", "TolerantBot", "build_bot", "polling_error", "telegram_request"]

log = logging.getLogger(__name__)

# Connections to the Bot API for sends: sends are paced at 30 a second, and a send holds its
# connection for a round trip of some 50 ms to Telegram.
CONNECTION_POOL = 8
SEND_READ_TIMEOUT = 10.0
# Longer than the long poll's own timeout, so an empty poll is not cut short.
POLL_READ_TIMEOUT = 40.0

# Consecutive failed `getUpdates` calls after which Telegram counts as failing: one failure
# is a blip retried within a second; two in a row are not.
FAILING_AFTER = 2
# Seconds before the poll after a failed one, doubling with each failure up to the cap: a few
# polls a minute against a Bot API that is down, and its return noticed within the cap.
RETRY_FIRST = 0.5
RETRY_CAP = 3.0


class ApiHealth:
    """Whether updates can come in: `getUpdates` succeeding, or the webhook set."""

    def __init__(self) -> None:
        self.poll_failures = 0
        self.webhook_pending = False  # True from a webhook's start until `setWebhook` succeeds
        self._first_failure = 0.0  # monotonic time of the first of the failures in a row

    @property
    def failing(self) -> bool:
        return self.webhook_pending or self.poll_failures >= FAILING_AFTER

    def polled(self, error: BaseException | None = None) -> None:
        """A poll succeeded (`error` None) or failed: the outage and the return told once."""
        if error is None:
            if self.poll_failures >= FAILING_AFTER:
                away = time.monotonic() - self._first_failure
                log.info("Telegram answers getUpdates again, after %.0f s", away)
            self.poll_failures = 0
            return
        if not self.poll_failures:
            self._first_failure = time.monotonic()
        self.poll_failures += 1
        if self.poll_failures == FAILING_AFTER:
            log.warning(
                "Telegram is not answering getUpdates (%s); retrying every %.0f s at most",
                _describe(error),
                RETRY_CAP,
            )

    def retry_delay(self) -> float:
        """Seconds to wait before the next poll after `poll_failures` failures in a row."""
        return min(RETRY_CAP, RETRY_FIRST * 2.0 ** max(self.poll_failures - 1, 0))


def _describe(error: BaseException) -> str:
    """One line for a failed call: PTB's message, and the network's own reason under it."""
    message = error.message if isinstance(error, TelegramError) else str(error)
    cause = error.__cause__ or error.__context__
    detail = f": {str(cause).splitlines()[0]}" if cause is not None and str(cause) else ""
    return f"{type(error).__name__}: {message}{detail}"


def polling_error(error: TelegramError) -> None:
    """PTB's `error_callback` for polling: what is left after `TolerantBot.get_updates` (a
    conflict with another poller, a refusal) in one line each, not a traceback each."""
    log.warning("getUpdates failed: %s", _describe(error))


class TolerantBot(ExtBot[Any]):
    """`ExtBot` that keeps `health` (module docstring); the tolerance is its request's."""

    __slots__ = ("_health", "_updates_request")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._health = ApiHealth()
        # The request for `getUpdates` as given (`request` is PTB's public one for the rest).
        self._updates_request: BaseRequest | None = kwargs.get("get_updates_request")
        super().__init__(*args, **kwargs)

    @property
    def health(self) -> ApiHealth:
        return self._health

    async def initialize(self) -> None:
        """As PTB's, but a failed `getMe` also closes the requests it opened: PTB's `shutdown`
        does nothing for a bot that never finished initializing, and the unclosed sessions
        would add lines to the one-line start-up error."""
        try:
            await super().initialize()
        except BaseException:
            opened = (self.request, self._updates_request)
            await asyncio.gather(
                *(request.shutdown() for request in opened if request is not None),
                return_exceptions=True,
            )
            raise

    async def get_updates(self, *args: Any, **kwargs: Any) -> tuple[Update, ...]:
        """PTB's, with the retries of a failing poll paced here (module docstring)."""
        health = self._health
        if health.poll_failures:
            kwargs["timeout"] = 0  # short: that Telegram answers again is known at once
        try:
            updates = await super().get_updates(*args, **kwargs)
        except NetworkError as exc:
            health.polled(exc)
            await asyncio.sleep(health.retry_delay())
            # PTB's polling loop retries a timeout at once, without a traceback or a wait of
            # its own: the wait was ours.
            raise TimedOut(f"getUpdates failed: {exc.message}") from exc
        except Exception as exc:
            health.polled(exc)
            raise
        health.polled()
        return updates


def telegram_request(
    settings: Settings,
    *,
    connection_pool_size: int,
    read_timeout: float,
    connect_timeout: float = 5.0,
    pool_timeout: float = 5.0,
) -> AiohttpRequest:
    """The request for the Bot API at `TELEGRAM_API_URL`, through the proxy if any."""
    assert settings.TELEGRAM_API_URL is not None
    return AiohttpRequest.for_url(
        settings.TELEGRAM_API_URL,
        settings.proxies,
        connection_pool_size=connection_pool_size,
        read_timeout=read_timeout,
        connect_timeout=connect_timeout,
        pool_timeout=pool_timeout,
    )


def build_bot(settings: Settings, *, polling: bool = False) -> TolerantBot:
    """The one bot of `run`, `remind --once` and the demo: Bot API address and token from
    `settings`, sends paced by `TELEGRAM_SEND_RATE`, and with `polling` a long-poll request of
    its own (it holds its connection for the poll timeout)."""
    assert settings.TELEGRAM_BOT_TOKEN is not None
    test = "/test" if settings.TELEGRAM_TEST_ENVIRONMENT else ""
    return TolerantBot(
        settings.TELEGRAM_BOT_TOKEN.get_secret_value(),
        base_url=f"{settings.TELEGRAM_API_URL}/bot{{token}}{test}",
        base_file_url=f"{settings.TELEGRAM_API_URL}/file/bot{{token}}{test}",
        request=telegram_request(
            settings, connection_pool_size=CONNECTION_POOL, read_timeout=SEND_READ_TIMEOUT
        ),
        # Without polling, `getUpdates` is never called: a request that never connects, rather
        # than PTB's default (an httpx client).
        get_updates_request=telegram_request(
            settings,
            connection_pool_size=2 if polling else 1,
            read_timeout=POLL_READ_TIMEOUT,
        ),
        rate_limiter=paced_rate_limiter(settings.TELEGRAM_SEND_RATE),
    )
