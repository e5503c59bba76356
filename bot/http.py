"""The process's HTTP transports: one aiohttp stack under httpx and under python-telegram-bot.

Why aiohttp underneath: httpx's default transport (httpcore's pool scans every pooled
connection on each request) costs about 1 ms of CPU per request, which the reminder sweep and
the command load pay thousands of times. aiohttp's connector does the same work in a fraction
of that. The library client keeps httpx's API (auth, params, the log line per request, test
transports) and only the wire moves: `AiohttpTransport`. The Bot API goes through
`TelegramRequest`, PTB's `BaseRequest` over the same kind of session.

`httpx-aiohttp` does the first part too, but is pre-1.0, streams every body through an extra
iterator layer and leaves connection limits to the caller; the few lines here are the whole of
what we need, and are tested against real servers.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import TYPE_CHECKING

import aiohttp
import httpx
import yarl
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

if TYPE_CHECKING:
    from telegram._utils.types import ODVInput

__all__ = ["AiohttpTransport", "TelegramRequest"]

log = logging.getLogger(__name__)

# The bot token in a Bot API path (`/bot<id>:<secret>/method`, `/file/bot...`): keep the id.
_BOT_TOKEN_PATH = re.compile(r"(/bot\d+:)[^/]+")

# Headers aiohttp would add when httpx did not set them; httpx decides what is sent.
_NOT_AUTO = frozenset({"Accept", "Accept-Encoding", "User-Agent", "Content-Type"})
_HTTP11 = b"HTTP/1.1"


class _Session:
    """One aiohttp session per event loop, made on first use in the running loop.

    A session is bound to the loop it was made in; tests (and `asyncio.run` twice) may use one
    client from several loops, so a session from another loop is replaced, not reused.
    """

    def __init__(self, *, limit: int, keepalive: float, pass_through: bool) -> None:
        self._limit = limit
        self._keepalive = keepalive
        # Under httpx, httpx sets the headers and decodes the body; aiohttp must not.
        self._pass_through = pass_through
        self._loop: asyncio.AbstractEventLoop | None = None
        self._session: aiohttp.ClientSession | None = None

    def get(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._session
        if session is None or self._loop is not loop or session.closed:
            session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(
                    limit=self._limit, keepalive_timeout=self._keepalive
                ),
                cookie_jar=aiohttp.DummyCookieJar(),  # cookies, if any, are the caller's
                skip_auto_headers=_NOT_AUTO if self._pass_through else None,
                auto_decompress=not self._pass_through,
                timeout=aiohttp.ClientTimeout(total=None),
            )
            self._loop, self._session = loop, session
        return session

    @property
    def open(self) -> bool:
        return self._session is not None and not self._session.closed

    async def close(self) -> None:
        session, self._session, self._loop = self._session, None, None
        if session is not None and not session.closed:
            await session.close()


class AiohttpTransport(httpx.AsyncBaseTransport):
    """Serve httpx requests over one `aiohttp.ClientSession`.

    Method, URL, headers and body pass through as httpx prepared them; the body is read whole
    (no streaming: the library APIs answer small JSON) and decoded by httpx, so content
    encodings behave as with httpx's own transport. Redirects are never followed here.
    Time-outs come from the request's `timeout` extension: `connect` and `pool` bound getting
    a connection, `read` each socket read; aiohttp has no write time-out, so `write` is
    covered only by the caller's overall deadline. Failures raise the httpx exception
    httpx's own transport would.
    """

    def __init__(self, *, connection_limit: int = 100, keepalive: float = 30.0) -> None:
        self._session = _Session(limit=connection_limit, keepalive=keepalive, pass_through=True)
        # ClientTimeout objects per distinct time-out, since they repeat on every request.
        self._timeouts: dict[tuple[float | None, ...], aiohttp.ClientTimeout] = {}

    def _timeout(self, request: httpx.Request) -> aiohttp.ClientTimeout:
        given = request.extensions.get("timeout") or {}
        return _client_timeout(
            self._timeouts, given.get("connect"), given.get("read"), given.get("pool")
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        session = self._session.get()
        body = await request.aread()
        try:
            async with session.request(
                request.method,
                yarl.URL(str(request.url), encoded=True),
                headers=[
                    (k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw
                ],
                data=body or None,
                allow_redirects=False,
                timeout=self._timeout(request),
            ) as response:
                content = await response.read()
                status, reason, raw = response.status, response.reason, response.raw_headers
        except aiohttp.ConnectionTimeoutError as exc:  # before ServerTimeoutError: a subclass
            raise httpx.ConnectTimeout(_why(exc), request=request) from None
        except aiohttp.ServerTimeoutError as exc:
            raise httpx.ReadTimeout(_why(exc), request=request) from None
        except aiohttp.ClientConnectorError as exc:
            raise httpx.ConnectError(_why(exc), request=request) from None
        except (
            aiohttp.ServerDisconnectedError,
            aiohttp.ClientPayloadError,
            aiohttp.ClientResponseError,
        ) as exc:
            raise httpx.RemoteProtocolError(_why(exc), request=request) from None
        except aiohttp.ClientError as exc:  # resets and other socket errors mid-exchange
            raise httpx.ReadError(_why(exc), request=request) from None
        except TimeoutError as exc:
            raise httpx.ReadTimeout(_why(exc), request=request) from None
        return httpx.Response(
            status,
            headers=list(raw),
            stream=httpx.ByteStream(content),
            extensions={"http_version": _HTTP11, "reason_phrase": (reason or "").encode()},
        )

    async def aclose(self) -> None:
        await self._session.close()


def _client_timeout(
    cache: dict[tuple[float | None, ...], aiohttp.ClientTimeout],
    connect: float | None,
    read: float | None,
    pool: float | None,
) -> aiohttp.ClientTimeout:
    """aiohttp's time-outs for httpx's/PTB's: `connect + pool` bounds getting a connection
    (aiohttp counts waiting for a pooled one in it), `read` each socket read.

    Kept in `cache`, since the same few combinations repeat on every request.
    """
    key = (connect, read, pool)
    timeout = cache.get(key)
    if timeout is None:
        timeout = aiohttp.ClientTimeout(
            total=None,
            connect=None if connect is None or pool is None else connect + pool,
            sock_connect=connect,
            sock_read=read,
        )
        if len(cache) < 32:  # a handful in practice; never unbounded
            cache[key] = timeout
    return timeout


def _why(exc: BaseException) -> str:
    """The exception's class, never its text: aiohttp puts the URL (tokens included) there,
    which is also why the aiohttp exception is not chained."""
    return type(exc).__name__


class TelegramRequest(BaseRequest):
    """PTB's Bot API transport over one aiohttp session, instead of PTB's `HTTPXRequest`.

    Errors map as `HTTPXRequest` maps them: time-outs to `TimedOut`, anything else on the wire
    to `NetworkError`, whose message names the exception, never the URL (it holds the bot
    token). `read_timeout` is what PTB adds the long-poll timeout to for `getUpdates`.
    """

    def __init__(
        self,
        *,
        connection_limit: int = 64,
        connect_timeout: float | None = 5.0,
        read_timeout: float | None = 5.0,
        pool_timeout: float | None = 1.0,
        media_read_timeout: float | None = 20.0,
        keepalive: float = 30.0,
    ) -> None:
        self._session = _Session(limit=connection_limit, keepalive=keepalive, pass_through=False)
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._pool_timeout = pool_timeout
        self._media_read_timeout = media_read_timeout
        self._headers = {"User-Agent": self.USER_AGENT}
        self._timeouts: dict[tuple[float | None, ...], aiohttp.ClientTimeout] = {}

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        self._session.get()

    async def shutdown(self) -> None:
        await self._session.close()

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        if not self._session.open:
            raise RuntimeError("TelegramRequest is not initialized")
        session = self._session.get()
        files = request_data.multipart_data if request_data else None
        fields = request_data.json_parameters if request_data else {}
        data: aiohttp.FormData | dict[str, str] = fields
        if files:
            form = aiohttp.FormData(fields)
            for name, (filename, content, mimetype) in files.items():
                form.add_field(name, content, filename=filename, content_type=mimetype)
            data = form
        timeout = _client_timeout(
            self._timeouts,
            _given(connect_timeout, self._connect_timeout),
            _given(read_timeout, self._media_read_timeout if files else self._read_timeout),
            _given(pool_timeout, self._pool_timeout),
        )
        try:
            async with session.request(
                method, url, data=data, headers=self._headers, timeout=timeout
            ) as response:
                content = await response.read()
        except TimeoutError as exc:  # aiohttp's socket time-outs are TimeoutErrors too
            raise TimedOut(f"Telegram: {_why(exc)}") from None
        except aiohttp.ClientError as exc:
            raise NetworkError(f"Telegram: {_why(exc)}") from None
        if log.isEnabledFor(logging.DEBUG):  # as httpx logs each request, the token masked
            masked = _BOT_TOKEN_PATH.sub(r"\1[redacted]", url)
            log.debug('HTTP Request: %s %s "%d"', method, masked, response.status)
        return response.status, content


def _given(value: object, default: float | None) -> float | None:
    """A time-out the caller passed (None: no limit), else ours (PTB passes a DefaultValue)."""
    if value is None:
        return None
    return float(value) if isinstance(value, int | float) else default
