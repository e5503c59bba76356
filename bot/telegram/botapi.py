"""The Bot API client: PTB's `ExtBot` over PTB's own `HTTPXRequest`, as `run` and `remind` use it.

Two things differ from a stock `ExtBot`, both for Bot API servers that are not quite Telegram
(local servers, emulators, proxies rewriting answers):

- A send the server accepted (HTTP 200, `"ok": true`) counts as delivered even when the message
  it returned cannot be parsed: the patron got the text, so no "something went wrong" follows
  and a reminder is marked sent rather than sent again by a later sweep.
- `health` follows the calls that bring updates in (`getUpdates`, `setWebhook`), so `/health`
  can report Telegram failing while they keep failing.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import httpx
from httpx_aiohttp import AiohttpTransport
from telegram.error import TelegramError
from telegram.ext import ExtBot
from telegram.request import HTTPXRequest

from bot.config.proxies import tls_context
from bot.telegram.ratelimit import paced_rate_limiter

if TYPE_CHECKING:
    from telegram import Update
    from telegram._utils.types import JSONDict

    from bot.config.settings import Settings

__all__ = ["ApiHealth", "TolerantBot", "build_bot", "telegram_request"]

log = logging.getLogger(__name__)

# Connections to the Bot API for sends. httpx's pool (httpcore) does work quadratic in its
# connections for every request: at 64 it cost about 4 ms of CPU per `/loans` under load
# (bench.commands), at 8 about 1.5 ms; sends are paced at 30 a second anyway.
CONNECTION_POOL = 8
SEND_READ_TIMEOUT = 10.0
# Longer than the long poll's own timeout, so an empty poll is not cut short.
POLL_READ_TIMEOUT = 40.0

# Consecutive failed `getUpdates` calls after which Telegram counts as failing: one failure
# is a blip PTB retries within a second; two in a row are not.
FAILING_AFTER = 2

# Set when the Bot API answered the current task's call with `ok: true`.
_accepted: ContextVar[bool] = ContextVar("bot_api_accepted", default=False)


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
    """`ExtBot` that keeps `health` and counts accepted sends as delivered (module docstring).

    A send whose returned message cannot be parsed returns `True`, as Telegram's own answer to
    an edit of an inline message does; the bot's code never reads a sent message back.
    """

    __slots__ = ("_health",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._health = ApiHealth()
        super().__init__(*args, **kwargs)

    @property
    def health(self) -> ApiHealth:
        return self._health

    async def _do_post(self, endpoint: str, data: JSONDict, **kwargs: Any) -> Any:
        result = await super()._do_post(endpoint, data, **kwargs)
        _accepted.set(True)  # `BaseRequest.post` raises unless the answer was `ok: true`
        return result

    async def _send_message(self, endpoint: str, data: JSONDict, *args: Any, **kwargs: Any) -> Any:
        reset = _accepted.set(False)
        try:
            return await super()._send_message(endpoint, data, *args, **kwargs)
        except TelegramError:
            raise
        except Exception as exc:  # Message.de_json on an answer Telegram would not send
            if not _accepted.get():
                raise
            log.warning(
                "the Bot API accepted %s but its answer could not be read (%s); "
                "counted as delivered",
                endpoint,
                type(exc).__name__,
            )
            return True
        finally:
            _accepted.reset(reset)

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
) -> HTTPXRequest:
    """PTB's `HTTPXRequest` for the Bot API at `TELEGRAM_API_URL`, through the proxy if any.

    Its httpx client goes over aiohttp (`httpx_aiohttp.AiohttpTransport`, handed in through
    PTB's documented `httpx_kwargs`): httpcore's pool re-checks every pooled connection on each
    request, which cost more CPU per `/loans` than all the bot's own code (README, figures).
    The proxy comes from `Settings` (read once at start-up) and goes to that transport, so httpx
    is told not to read the environment again; certificates are checked as before.
    """
    assert settings.TELEGRAM_API_URL is not None
    proxy = settings.proxies.for_url(settings.TELEGRAM_API_URL)
    transport = AiohttpTransport(
        verify=tls_context(),
        trust_env=False,
        limits=httpx.Limits(
            max_connections=connection_pool_size, max_keepalive_connections=connection_pool_size
        ),
        proxy=httpx.Proxy(proxy) if proxy else None,
    )
    # No write timeout: the aiohttp transport applies httpx's connect, read and pool timeouts
    # only (aiohttp has none for writing), so PTB's would be ignored.
    return HTTPXRequest(
        connection_pool_size=connection_pool_size,
        read_timeout=read_timeout,
        connect_timeout=connect_timeout,
        pool_timeout=pool_timeout,
        httpx_kwargs={"trust_env": False, "transport": transport},
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
        get_updates_request=(
            telegram_request(settings, connection_pool_size=2, read_timeout=POLL_READ_TIMEOUT)
            if polling
            else None
        ),
        rate_limiter=paced_rate_limiter(settings.TELEGRAM_SEND_RATE),
    )
