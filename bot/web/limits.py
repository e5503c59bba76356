"""Connections cannot starve the server: idle, slow-header and slow-body connections are dropped
within seconds, the number of open connections is capped below the file limit, one patron's
requests to the Mini App's API are limited, and repeated accept and request-parsing errors are
rate-limited in the log.

- aiohttp's `keepalive_timeout` runs from the moment a connection is accepted until a whole
  request's headers have arrived, and again after each response, so one setting drops both an
  idle connection and one that trickles its headers in (`IDLE_SECONDS`).
- A body must arrive within `BODY_SECONDS`: `ConnectionLimit.middleware` reads it under that
  deadline before the handler runs (a 408 otherwise), and answers a client that left without
  a traceback. It is the innermost middleware, so the application's own checks that need no
  body (the webhook's secret, the Mini App's signature and limit) refuse a request first.
- aiohttp has no cap of its own: `ConnectionLimit` keeps about `connection_cap()` open (the
  oldest idle one goes when a new one comes), so descriptors stay free for the database,
  Telegram and the library services, and `accept()` does not meet the file limit. A
  connection counts as busy only while its handler runs with the whole body read: one still
  sending its headers or its body can be evicted, whoever signed it.
- `PatronLimit`: requests in flight and a request rate per patron, checked before the body is
  read, answered 429 with `Retry-After` beyond them.
- Should `accept()` fail all the same (`EMFILE`, `ENFILE`), asyncio logs an ERROR with a
  traceback for each attempt; `AcceptErrorFilter` lets one through per `LOG_EVERY` seconds.
  aiohttp logs a traceback for each request it cannot parse (garbage, NUL bytes, oversized
  headers); `RequestErrorFilter` makes that one line per `LOG_EVERY` seconds.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import resource
import socket
import time
from collections.abc import Callable
from typing import Any, Final, TypeVar

from aiohttp import web
from aiohttp.http import HttpProcessingError
from aiohttp.typedefs import Handler

__all__ = [
    "BODY_SECONDS",
    "IDLE_SECONDS",
    "LINGER_SECONDS",
    "AcceptErrorFilter",
    "ConnectionLimit",
    "PatronLimit",
    "RequestErrorFilter",
    "connection_cap",
    "install_log_throttles",
]

log = logging.getLogger(__name__)
_E = TypeVar("_E", bound=web.HTTPException)

# Seconds a connection may stay without a whole request (idle, or headers trickling in).
# Browsers and reverse proxies reconnect at once; see docs/deployment.md for the proxy's side.
IDLE_SECONDS: Final = 5.0
# Seconds a request's whole body may take to arrive once its headers have: a webhook update or
# a Mini App request is a few kilobytes, and a slow mobile link sends that in well under this.
BODY_SECONDS: Final = 10.0
# After an answer given before the body was read (401, 403, 429, 408), aiohttp reads and
# drops the rest of it for this long, so a client still sending sees the answer, not a reset.
LINGER_SECONDS: Final = 2.0
BODY_METHODS: Final = frozenset({"POST", "PUT", "PATCH"})
# Descriptors kept free: `ACCEPT_BATCH` for connections accepted before the ones they replace
# have closed, the rest for the database pool, Telegram, the library services, log files.
RESERVED_FILES: Final = 384
# asyncio accepts up to `backlog` connections per wake-up of the listening socket.
ACCEPT_BATCH: Final = 100
MAX_CONNECTIONS: Final = 4096
MIN_CONNECTIONS: Final = 16
LOG_EVERY: Final = 10.0
_ACCEPT_FAILED: Final = "socket.accept() out of system resource"
_NOT_PARSED: Final = "Error handling request"  # aiohttp's message, with a traceback
# One patron on the Mini App's API: requests in flight at once, and a rate (a burst of
# `PATRON_BURST`, then one per `PATRON_INTERVAL` seconds). A page load is one request and each
# renew tap one more, so a patron renewing a long list one by one stays well within it.
PATRON_IN_FLIGHT: Final = 4
PATRON_BURST: Final = 30
PATRON_INTERVAL: Final = 1.0
# Patrons remembered before the ones whose limit has run out again are forgotten.
PATRON_ENTRIES: Final = 10_000


def connection_cap(soft_limit: int | None = None) -> int:
    """How many connections the web server keeps open at once: below the file limit."""
    if soft_limit is None:
        soft_limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft_limit == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(MIN_CONNECTIONS, min(MAX_CONNECTIONS, soft_limit - RESERVED_FILES))


class _Refused(asyncio.Protocol):
    """A connection beyond the hard ceiling: closed as soon as it is accepted (the client
    sees a reset and retries; a reverse proxy answers 502 for it)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if isinstance(transport, asyncio.Transport):
            transport.abort()
        else:
            transport.close()


class ConnectionLimit:
    """About `cap` connections open at once, for one listener.

    At the cap, a new connection makes the oldest idle one go (no handler at work: never sent
    a request, trickling its headers or its body, or waiting between requests), so a flood of
    such connections cannot lock out a health probe, a webhook delivery or a patron's browser.
    Only when every connection is busy is a new one refused, at `cap + ACCEPT_BATCH`.

    `middleware` tells busy connections from idle ones; add it to the application before
    its runner is set up, then start the listener with `listen`.
    """

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.ceiling = cap + ACCEPT_BATCH
        self.evicted = 0
        self.refused = 0
        self._busy: dict[Any, int] = {}  # connection (RequestHandler) -> requests in flight

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Read the body a route takes within `BODY_SECONDS`, then run the handler as busy.

        Other bodies (a GET's, a refused request's) are never read: aiohttp drops what comes
        of them within `LINGER_SECONDS` of the answer and closes the connection."""
        if _takes_body(request):
            await _read_body(request)
        connection = request.protocol
        self._busy[connection] = self._busy.get(connection, 0) + 1
        try:
            return await handler(request)
        finally:
            if (left := self._busy.pop(connection) - 1) > 0:
                self._busy[connection] = left

    def protocol(self, server: web.Server) -> asyncio.Protocol:
        """A protocol for a connection just accepted (the listener's protocol factory)."""
        connections = server.connections  # oldest first
        if len(connections) >= self.cap:
            idle = next((c for c in connections if c not in self._busy and c.transport), None)
            if idle is not None:
                idle.force_close()  # closes its transport now: the descriptor is free
                self.evicted += 1
            elif len(connections) >= self.ceiling:
                self.refused += 1
                return _Refused()
        return server()

    async def listen(self, runner: web.BaseRunner, sock: socket.socket) -> asyncio.Server:
        """Serve `runner`'s application on the listening `sock` under this limit: asyncio's own
        server with this limit's protocol factory (aiohttp's sites take no factory of ours).
        Close it before `runner.cleanup()`, as a site would be stopped."""
        server = runner.server
        if server is None:
            raise RuntimeError("the runner is not set up")
        return await asyncio.get_running_loop().create_server(
            lambda: self.protocol(server), sock=sock, backlog=ACCEPT_BATCH
        )


def _takes_body(request: web.Request) -> bool:
    """A body sent to a route that reads one (no 404 or 405 is coming)."""
    return (
        request.body_exists
        and request.method in BODY_METHODS
        and request.match_info.http_exception is None
    )


async def _read_body(request: web.Request) -> None:
    """The body, read into the request (`request.read()` keeps it for `json()` and the rest)
    within `BODY_SECONDS`."""
    try:
        async with asyncio.timeout(BODY_SECONDS):
            await request.read()
    except TimeoutError:
        raise _closing(web.HTTPRequestTimeout(text="request body too slow")) from None
    except OSError:
        # The client left or the connection was evicted: nobody reads the answer, and this is
        # no error of ours (aiohttp would log a traceback for it).
        raise _closing(web.HTTPBadRequest(text="connection lost")) from None


def _closing(response: _E) -> _E:
    """`response` with the connection closed after it (what is left of a body is not read)."""
    response.force_close()
    return response


class PatronLimit:
    """Per patron (a key): at most `in_flight` requests at once, and a rate of one per
    `interval` seconds after a burst of `burst` (GCRA, as `bot.telegram.ratelimit` paces
    chats). `admit` says how long to wait, or None; an admitted request is `release`d."""

    def __init__(
        self,
        in_flight: int = PATRON_IN_FLIGHT,
        burst: int = PATRON_BURST,
        interval: float = PATRON_INTERVAL,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.in_flight = in_flight
        self.burst = burst
        self.interval = interval
        self.refused = 0
        self._clock = clock
        self._running: dict[Any, int] = {}
        self._tat: dict[Any, float] = {}  # per patron: GCRA's theoretical arrival time

    def admit(self, key: Any) -> float | None:
        now = self._clock()
        if self._running.get(key, 0) >= self.in_flight:
            self.refused += 1
            return self.interval
        tat = max(self._tat.get(key, now), now)
        wait = tat - now - (self.burst - 1) * self.interval
        if wait > 0:
            self.refused += 1
            return wait
        if len(self._tat) >= PATRON_ENTRIES:
            self._tat = {k: t for k, t in self._tat.items() if t > now}
        self._tat[key] = tat + self.interval
        self._running[key] = self._running.get(key, 0) + 1
        return None

    def release(self, key: Any) -> None:
        if (left := self._running.pop(key, 0) - 1) > 0:
            self._running[key] = left

    @staticmethod
    def too_many(wait: float, said: str = "") -> web.HTTPTooManyRequests:
        """The 429 for a wait of `wait` seconds, closing the connection (its body unread);
        `said`: what the page shows, in the patron's words."""
        body = {"error": "too many requests", **({"text": said} if said else {})}
        return _closing(
            web.HTTPTooManyRequests(
                text=json.dumps(body),
                content_type="application/json",
                headers={"Retry-After": str(max(1, math.ceil(wait))), "Cache-Control": "no-store"},
            )
        )


class _Throttle(logging.Filter):
    """Lets one of the records it `matches` through per `every` seconds, counting the ones it
    held back in the next one it lets through."""

    keep_first_traceback = True

    def __init__(self, every: float = LOG_EVERY) -> None:
        super().__init__()
        self.every = every
        self.held = 0
        self._last: float | None = None

    def matches(self, record: logging.LogRecord) -> bool:
        raise NotImplementedError

    def summary(self, record: logging.LogRecord) -> str:
        return str(record.msg)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.matches(record):
            return True
        now = time.monotonic()
        if self._last is not None and now - self._last < self.every:
            self.held += 1
            return False
        if self._last is not None or not self.keep_first_traceback:
            text = self.summary(record)
            if self._last is not None:
                text += f" ({self.held} more in the last {self.every:.0f} s)"
            record.msg = text
            record.args = None
            record.exc_info = None
            record.exc_text = None
        self._last = now
        self.held = 0
        return True


class AcceptErrorFilter(_Throttle):
    """asyncio's "accept() out of system resource" errors: the first with its traceback,
    then one line per `every` seconds."""

    def matches(self, record: logging.LogRecord) -> bool:
        return str(record.msg).startswith(_ACCEPT_FAILED)

    def summary(self, record: logging.LogRecord) -> str:
        return _ACCEPT_FAILED


class RequestErrorFilter(_Throttle):
    """aiohttp's "Error handling request" for a request it could not parse (a garbage request
    line, NUL bytes, oversized headers): one line per `every` seconds naming the kind, never a
    traceback. A handler's own failure keeps its traceback: that is a bug to see."""

    keep_first_traceback = False

    def matches(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return str(record.msg).startswith(_NOT_PARSED) and isinstance(exc, HttpProcessingError)

    def summary(self, record: logging.LogRecord) -> str:
        assert record.exc_info is not None
        exc = record.exc_info[1]
        status = getattr(exc, "code", 400)
        return f"a request was not parsed ({type(exc).__name__}); answered {status}"


def install_log_throttles() -> None:
    """`AcceptErrorFilter` on asyncio's logger, where the loop's exception handler writes, and
    `RequestErrorFilter` on aiohttp's server logger; once each."""
    for name, kind in (("asyncio", AcceptErrorFilter), ("aiohttp.server", RequestErrorFilter)):
        logger = logging.getLogger(name)
        if not any(isinstance(f, kind) for f in logger.filters):
            logger.addFilter(kind())
