"""Connections cannot starve the server: idle and slow-header connections are dropped within
seconds, the number of open connections is capped below the file limit, and asyncio's repeated
accept errors are rate-limited in the log.

- aiohttp's `keepalive_timeout` runs from the moment a connection is accepted until a whole
  request has arrived, and again after each response, so one setting drops both an idle
  connection and one that trickles its headers in (`IDLE_SECONDS`).
- aiohttp has no cap of its own: `ConnectionLimit` keeps about `connection_cap()` open (the
  oldest idle one goes when a new one comes), so descriptors stay free for the database,
  Telegram and the library services, and `accept()` does not meet the file limit.
- Should `accept()` fail all the same (`EMFILE`, `ENFILE`), asyncio logs an ERROR with a
  traceback for each attempt; `AcceptErrorFilter` lets one through per `LOG_EVERY` seconds.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from typing import Any, Final

from aiohttp import web
from aiohttp.typedefs import Handler

__all__ = [
    "IDLE_SECONDS",
    "AcceptErrorFilter",
    "ConnectionLimit",
    "connection_cap",
    "install_accept_error_filter",
]

log = logging.getLogger(__name__)

# Seconds a connection may stay without a whole request (idle, or headers trickling in).
# Browsers and reverse proxies reconnect at once; see docs/deployment.md for the proxy's side.
IDLE_SECONDS: Final = 5.0
# Descriptors kept free: `ACCEPT_BATCH` for connections accepted before the ones they replace
# have closed, the rest for the database pool, Telegram, the library services, log files.
RESERVED_FILES: Final = 384
# asyncio accepts up to `backlog` connections per wake-up of the listening socket.
ACCEPT_BATCH: Final = 100
MAX_CONNECTIONS: Final = 4096
MIN_CONNECTIONS: Final = 16
LOG_EVERY: Final = 10.0
_ACCEPT_FAILED: Final = "socket.accept() out of system resource"


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

    At the cap, a new connection makes the oldest idle one go (no request in flight: never
    sent one, trickling its headers, or waiting between requests), so a flood of idle
    connections cannot lock out a health probe or a patron's browser. Only when every
    connection is busy is a new one refused, at `cap + ACCEPT_BATCH`.

    `middleware` tells busy connections from idle ones; add it to the application before
    its runner is set up, then start the listener with `site`.
    """

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.ceiling = cap + ACCEPT_BATCH
        self.evicted = 0
        self.refused = 0
        self._busy: dict[Any, int] = {}  # connection (RequestHandler) -> requests in flight

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
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

    async def site(self, runner: web.BaseRunner, sock: Any) -> web.SockSite:
        """Start serving `runner` on the listening `sock` under this limit."""
        site = _CappedSockSite(runner, sock, limit=self)
        await site.start()
        return site


class _CappedSockSite(web.SockSite):
    def __init__(self, runner: web.BaseRunner, sock: Any, *, limit: ConnectionLimit) -> None:
        super().__init__(runner, sock)
        self.limit = limit

    async def start(self) -> None:
        await web.BaseSite.start(self)  # registers the site with the runner
        server = self._runner.server
        assert server is not None
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: self.limit.protocol(server), sock=self._sock, backlog=ACCEPT_BATCH
        )


class AcceptErrorFilter(logging.Filter):
    """Lets one of asyncio's "accept() out of system resource" errors through per `every`
    seconds, without its traceback after the first, counting the ones it held back."""

    def __init__(self, every: float = LOG_EVERY) -> None:
        super().__init__()
        self.every = every
        self.held = 0
        self._last: float | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith(_ACCEPT_FAILED):
            return True
        now = time.monotonic()
        if self._last is not None and now - self._last < self.every:
            self.held += 1
            return False
        if self._last is not None:
            record.msg = f"{_ACCEPT_FAILED} ({self.held} more in the last {self.every:.0f} s)"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        self._last = now
        self.held = 0
        return True


def install_accept_error_filter() -> None:
    """On asyncio's logger, where the loop's exception handler writes them; once."""
    logger = logging.getLogger("asyncio")
    if not any(isinstance(f, AcceptErrorFilter) for f in logger.filters):
        logger.addFilter(AcceptErrorFilter())
