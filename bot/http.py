"""The process's HTTP wire: `Http1Transport` under the library client and, via
`TelegramRequest`, under PTB.

Both build httpx requests (httpx's models, time-outs and test transports) and hand them to
`Http1Transport`: HTTP/1.1 keep-alive connections parsed by httptools (llhttp, the parser in
Node.js and uvicorn). The reminder sweep makes one platform call per patron,
and each call through httpx's default transport (httpcore's pool) cost about 1 ms of CPU,
through aiohttp's client about 0.15 ms, here about 0.05 ms (`bench/sweep.py` measures it).
The library services and the Bot API answer small JSON over HTTP/1.1, so no HTTP/2, proxies
or streaming.
"""

from __future__ import annotations

import asyncio
import logging
import re
import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httptools
import httpx
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

if TYPE_CHECKING:
    from telegram._utils.types import ODVInput

__all__ = ["Http1Transport", "TelegramRequest"]

log = logging.getLogger(__name__)

# The bot token in a Bot API path (`/bot<id>:<secret>/method`, `/file/bot...`): keep the id.
_BOT_TOKEN_PATH = re.compile(r"(/bot\d+:)[^/]+")

_HTTP11 = b"HTTP/1.1"


class _Closed(Exception):
    """The server closed the connection; `answered` says whether any response had begun."""

    def __init__(self, answered: bool) -> None:
        super().__init__("connection closed")
        self.answered = answered


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: write a request, collect the response httptools parses."""

    def __init__(self) -> None:
        self._parser = httptools.HttpResponseParser(self)
        self._transport: asyncio.Transport | None = None
        self._waiter: asyncio.Future[_Answer] | None = None
        self._reason = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._body: list[bytes] = []
        self._begun = False
        self._headers_done = False
        self.closed = False
        self.idle_since = 0.0

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        if self._waiter is None:
            self.close()  # bytes nobody asked for: the connection cannot be trusted again
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._finish(exc=httpx.RemoteProtocolError(type(exc).__name__))
            self.close()

    def eof_received(self) -> bool:
        return False  # close our side too; connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._waiter is None:
            return
        if self._headers_done and self._until_close():
            self._finish(answer=self._answer(keep_alive=False))  # the body ends with the stream
        else:
            self._finish(exc=_Closed(self._begun))

    # httptools callbacks
    def on_message_begin(self) -> None:
        self._begun = True

    def on_status(self, status: bytes) -> None:
        self._reason += status

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        self._headers_done = True

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        self._finish(answer=self._answer(keep_alive=self._parser.should_keep_alive()))

    # ours
    async def exchange(self, payload: bytes, read_timeout: float | None) -> _Answer:
        """Send one request and wait for its whole response (`read_timeout` bounds the wait)."""
        assert self._transport is not None
        waiter: asyncio.Future[_Answer] = asyncio.get_running_loop().create_future()
        self._waiter = waiter
        self._reason, self._headers, self._body = b"", [], []
        self._begun = self._headers_done = False
        self._transport.write(payload)
        if read_timeout is None:
            return await waiter
        # A bare timer rather than `asyncio.timeout`: one call per request, thousands a sweep.
        timer = waiter.get_loop().call_later(read_timeout, self._timed_out, waiter)
        try:
            return await waiter
        finally:
            timer.cancel()

    def _timed_out(self, waiter: asyncio.Future[_Answer]) -> None:
        if self._waiter is waiter:
            self._finish(exc=TimeoutError())

    def close(self) -> None:
        self.closed = True
        if self._transport is not None:
            self._transport.close()

    def _until_close(self) -> bool:
        """A response without a length or chunking (RFC 9112 6.3, item 8)."""
        names = {name.lower() for name, _ in self._headers}
        return b"content-length" not in names and b"transfer-encoding" not in names

    def _answer(self, *, keep_alive: bool) -> _Answer:
        return _Answer(
            self._parser.get_status_code(),
            self._reason,
            self._headers,
            b"".join(self._body),
            keep_alive,
        )

    def _finish(self, *, answer: _Answer | None = None, exc: Exception | None = None) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is None or waiter.done():
            return
        if exc is not None:
            waiter.set_exception(exc)
        else:
            waiter.set_result(answer)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class _Answer:
    status: int
    reason: bytes
    headers: list[tuple[bytes, bytes]]
    body: bytes
    keep_alive: bool


_Origin = tuple[str, str, int]
# A reused connection the server closed before answering is retried once, but only for
# methods that may be repeated (RFC 9110 9.2.2); the library client posts only to get tokens.
_IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "DELETE", "PUT"})
_DEFAULT_PORTS = {"http": 80, "https": 443}


class _Pool:
    """The connections and the limit of one event loop (both are bound to it)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, limit: int) -> None:
        self.loop = loop
        self.slots = asyncio.Semaphore(limit)
        self.idle: dict[_Origin, list[_Connection]] = {}

    def take(self, origin: _Origin, keepalive: float) -> _Connection | None:
        idle = self.idle.get(origin)
        now = self.loop.time()
        while idle:
            connection = idle.pop()
            if not connection.closed and now - connection.idle_since < keepalive:
                return connection
            connection.close()
        return None

    def give_back(self, origin: _Origin, connection: _Connection) -> None:
        connection.idle_since = self.loop.time()
        self.idle.setdefault(origin, []).append(connection)

    def close(self) -> None:
        for connections in self.idle.values():
            for connection in connections:
                connection.close()
        self.idle.clear()


class Http1Transport(httpx.AsyncBaseTransport):
    """Serve httpx requests over pooled HTTP/1.1 keep-alive connections.

    Method, target, headers and body go out as httpx prepared them (the body read whole); the
    response is read whole and decoded by httpx, so content encodings behave as with httpx's
    own transport. Redirects are never followed here. Time-outs come from the request's
    `timeout` extension: `pool` bounds the wait for a free connection (at most
    `connection_limit` at once), `connect` the connect and TLS handshake, `read` the wait for
    the whole response; `write` is not enforced (requests are a few hundred bytes). Failures
    raise the httpx exception httpx's own transport would, naming the cause, never the URL.
    """

    def __init__(
        self,
        *,
        connection_limit: int = 100,
        keepalive: float = 30.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._limit = connection_limit
        self._keepalive = keepalive
        self._ssl = ssl_context
        self._pool: _Pool | None = None

    def _pool_here(self) -> _Pool:
        """This loop's pool; a pool from another (finished) loop is dropped, never reused."""
        loop = asyncio.get_running_loop()
        pool = self._pool
        if pool is None or pool.loop is not loop:
            if pool is not None and not pool.loop.is_closed():
                pool.close()
            pool = self._pool = _Pool(loop, self._limit)
        return pool

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        pool = self._pool_here()
        timeouts = request.extensions.get("timeout") or {}
        origin = _origin(request.url)
        payload = _serialize(request, await request.aread())
        if pool.slots.locked():  # only then is there a wait to bound
            try:
                async with asyncio.timeout(timeouts.get("pool")):
                    await pool.slots.acquire()
            except TimeoutError:
                raise httpx.PoolTimeout("no free connection", request=request) from None
        else:
            await pool.slots.acquire()
        try:
            answer = await self._exchange(pool, origin, request, payload, timeouts)
        finally:
            pool.slots.release()
        return httpx.Response(
            answer.status,
            headers=answer.headers,
            content=answer.body,  # decoded here, so reading it later is free
            extensions={"http_version": _HTTP11, "reason_phrase": answer.reason},
        )

    async def _exchange(
        self,
        pool: _Pool,
        origin: _Origin,
        request: httpx.Request,
        payload: bytes,
        timeouts: dict[str, float | None],
    ) -> _Answer:
        connection = pool.take(origin, self._keepalive)
        reused = connection is not None
        while True:
            if connection is None:
                connection = await self._connect(origin, request, timeouts.get("connect"))
            try:
                answer = await connection.exchange(payload, timeouts.get("read"))
            except _Closed as closed:
                connection.close()
                if reused and not closed.answered and request.method in _IDEMPOTENT:
                    connection, reused = None, False  # a stale keep-alive: once more, afresh
                    continue
                raise httpx.RemoteProtocolError(
                    "server closed the connection", request=request
                ) from None
            except TimeoutError:
                connection.close()
                raise httpx.ReadTimeout("no answer in time", request=request) from None
            except httpx.RemoteProtocolError as exc:
                exc.request = request
                raise
            except BaseException:
                connection.close()  # cancelled mid-exchange: the stream is out of step
                raise
            if answer.keep_alive and not connection.closed:
                pool.give_back(origin, connection)
            else:
                connection.close()
            return answer

    async def _connect(
        self, origin: _Origin, request: httpx.Request, connect_timeout: float | None
    ) -> _Connection:
        scheme, host, port = origin
        secure = scheme == "https"
        if secure and self._ssl is None:
            self._ssl = httpx.create_ssl_context()  # verifies as httpx's own transport does
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(connect_timeout):
                _, connection = await loop.create_connection(
                    _Connection,
                    host,
                    port,
                    ssl=self._ssl if secure else None,
                    server_hostname=host if secure else None,
                )
        except TimeoutError:
            raise httpx.ConnectTimeout("connect timed out", request=request) from None
        except OSError as exc:  # refused, unreachable, DNS, TLS (ssl.SSLError is an OSError)
            raise httpx.ConnectError(_why(exc), request=request) from None
        return connection

    async def aclose(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()


def _origin(url: httpx.URL) -> _Origin:
    scheme = url.scheme
    if scheme not in _DEFAULT_PORTS:
        raise httpx.UnsupportedProtocol(f"unsupported scheme {scheme!r}")
    return scheme, url.host, url.port or _DEFAULT_PORTS[scheme]


def _serialize(request: httpx.Request, body: bytes) -> bytes:
    """The request as bytes on the wire; the body is whole, so it goes with a length."""
    lines = [request.method.encode("ascii"), b" ", request.url.raw_path, b" HTTP/1.1\r\n"]
    has_length = False
    for name, value in request.headers.raw:
        lowered = name.lower()
        if lowered == b"transfer-encoding":
            continue
        has_length = has_length or lowered == b"content-length"
        lines += [name, b": ", value, b"\r\n"]
    if body and not has_length:
        lines += [b"Content-Length: ", str(len(body)).encode("ascii"), b"\r\n"]
    lines.append(b"\r\n")
    lines.append(body)
    return b"".join(lines)


def _why(exc: BaseException) -> str:
    """The exception's class, never its text, which may name the URL (the bot token is in its
    path); for the same reason the cause is not chained."""
    return type(exc).__name__


class TelegramRequest(BaseRequest):
    """PTB's Bot API transport over `Http1Transport`, instead of PTB's `HTTPXRequest`.

    Requests are built as `HTTPXRequest` builds them (form fields, or multipart with files)
    and go to the transport directly. Errors map as `HTTPXRequest` maps them: time-outs to
    `TimedOut`, anything else on the wire to `NetworkError`, whose message names the exception,
    never the URL (it holds the bot token). `read_timeout` is what PTB adds the long-poll
    timeout to for `getUpdates`.
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
        self._transport = Http1Transport(connection_limit=connection_limit, keepalive=keepalive)
        self._open = False
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._pool_timeout = pool_timeout
        self._media_read_timeout = media_read_timeout
        self._headers = {"User-Agent": self.USER_AGENT}

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        self._open = True

    async def shutdown(self) -> None:
        self._open = False
        await self._transport.aclose()

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
        if not self._open:
            raise RuntimeError("TelegramRequest is not initialized")
        files = request_data.multipart_data if request_data else None
        timeouts = {
            "connect": _given(connect_timeout, self._connect_timeout),
            "read": _given(read_timeout, self._media_read_timeout if files else self._read_timeout),
            "write": None,
            "pool": _given(pool_timeout, self._pool_timeout),
        }
        request = httpx.Request(
            method,
            url,
            headers=self._headers,
            data=request_data.json_parameters if request_data else None,
            files=files,
            extensions={"timeout": timeouts},
        )
        try:
            response = await self._transport.handle_async_request(request)
        except httpx.TimeoutException as exc:
            raise TimedOut(f"Telegram: {_why(exc)}") from None
        except httpx.HTTPError as exc:
            raise NetworkError(f"Telegram: {_why(exc)}") from None
        if log.isEnabledFor(logging.DEBUG):  # as httpx logs each request, the token masked
            masked = _BOT_TOKEN_PATH.sub(r"\1[redacted]", url)
            log.debug('HTTP Request: %s %s "%d"', method, masked, response.status_code)
        return response.status_code, response.content


def _given(value: object, default: float | None) -> float | None:
    """A time-out the caller passed (None: no limit), else ours (PTB passes a DefaultValue)."""
    if value is None:
        return None
    return float(value) if isinstance(value, int | float) else default
