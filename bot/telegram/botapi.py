"""The Bot API client: PTB's `ExtBot` over `AiohttpRequest`, as `run` and `remind` use it.

Two things differ from a stock bot, both through PTB's public interfaces, for Bot API servers
that are not quite Telegram (local servers, emulators, proxies rewriting answers):

- A send the server accepted (`"ok": true`) counts as delivered even when the message it
  returned cannot be parsed (`bot.telegram.request`): the patron got the text, so no
  "something went wrong" follows and a reminder is marked sent rather than sent again.
- `health` follows the calls that bring updates in (`getUpdates`, `setWebhook`), so `/health`
  can report Telegram failing while they keep failing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from telegram.ext import ExtBot

from bot.telegram.ratelimit import paced_rate_limiter
from bot.telegram.request import AiohttpRequest

if TYPE_CHECKING:
    from telegram import Update

    from bot.config.settings import Settings

__all__ = ["ApiHealth", "TolerantBot", "build_bot", "telegram_request"]

# Connections to the Bot API for sends: sends are paced at 30 a second, and a send holds its
# connection for a round trip of some 50 ms to Telegram.
CONNECTION_POOL = 8
SEND_READ_TIMEOUT = 10.0
# Longer than the long poll's own timeout, so an empty poll is not cut short.
POLL_READ_TIMEOUT = 40.0

# Consecutive failed `getUpdates` calls after which Telegram counts as failing: one failure
# is a blip PTB retries within a second; two in a row are not.
FAILING_AFTER = 2


class ApiHealth:
    """Whether updates can come in: `getUpdates` succeeding, or the webhook set."""

    def __init__(self) -> None:
        self.poll_failures = 0
        self.webhook_pending = False  # True from a webhook's start until `setWebhook` succeeds

    @property
    def failing(self) -> bool:
        return self.webhook_pending or self.poll_failures >= FAILING_AFTER

    def polled(self, ok: bool) -> None:
        self.poll_failures = 0 if ok else self.poll_failures + 1


class TolerantBot(ExtBot[Any]):
    """`ExtBot` that keeps `health` (module docstring); the tolerance is its request's."""

    __slots__ = ("_health",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._health = ApiHealth()
        super().__init__(*args, **kwargs)

    @property
    def health(self) -> ApiHealth:
        return self._health

    async def get_updates(self, *args: Any, **kwargs: Any) -> tuple[Update, ...]:
        try:
            updates = await super().get_updates(*args, **kwargs)
        except Exception:
            self._health.polled(False)
            raise
        self._health.polled(True)
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
    return TolerantBot(
        settings.TELEGRAM_BOT_TOKEN.get_secret_value(),
        base_url=f"{settings.TELEGRAM_API_URL}/bot",
        base_file_url=f"{settings.TELEGRAM_API_URL}/file/bot",
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
