"""The library client's transport: aiohttp sessions, one metered call per endpoint, the
retry of reads, and at most once for everything that changes state.

Failures on the wire surface as `ServiceUnavailable`; log lines name an endpoint
(`decoding.label`), never a URL, a query string or a token.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from urllib.parse import urlencode

import aiohttp
from yarl import URL

from bot.config.proxies import Proxies, tls_context
from bot.library.decoding import Response
from bot.library.decoding import label as _label
from bot.library.errors import NOT_SENT, LibraryError, ServiceUnavailable

# Logged under the client's name: operators filter on it.
log = logging.getLogger("bot.library.client")

CallHook = Callable[[str, str, float], None]
"""`on_call(endpoint, outcome, seconds)`: outcome is "ok" or the raised error's `kind`."""

CONNECT_TIMEOUT = 3.0
# A retry is only worth starting with this much of the call's deadline left.
MIN_RETRY_BUDGET = 0.5
# Failures on the wire after which a read may be sent again: the connection broke, timed out,
# or carried something that is not HTTP.
_RETRYABLE_ERRORS = (
    aiohttp.ClientConnectionError,
    aiohttp.ClientPayloadError,
    aiohttp.ClientResponseError,
)
# Failures before the request left: no connection to the service (or through its proxy) was
# made, so a change sent with it was certainly not made.
_NOT_SENT_ERRORS = (
    aiohttp.ClientConnectorError,
    aiohttp.ConnectionTimeoutError,
    aiohttp.ClientHttpProxyError,
)
_HEADERS = MappingProxyType({"Accept": "application/json", "User-Agent": "library-bot"})
CONNECTION_LIMIT = 100
KEEPALIVE = 30.0


class ConnectionDropped(aiohttp.ClientConnectionError):
    """The server closed or reset the connection after the request was (maybe) sent."""


async def _never_resend(
    request: aiohttp.ClientRequest, handler: aiohttp.ClientHandlerType
) -> aiohttp.ClientResponse:
    """Keep aiohttp from sending a request a second time by itself.

    `ClientSession` re-sends a GET, PUT or DELETE once when the connection drops (aiohttp
    3.10+, `IDEMPOTENT_METHODS` in `aiohttp/client.py`), on a fresh connection as on a reused
    one. The data platform orders, renews and cancels with GETs, so that retry could place an
    order twice. It retries only `ServerDisconnectedError` and `ClientOSError`; raised as
    another `ClientConnectionError`, the drop goes straight to the caller, and
    `Transport.send` alone decides what may be repeated (reads, once).
    """
    try:
        return await handler(request)
    except aiohttp.ClientConnectorError:
        raise  # nothing was sent; aiohttp does not retry these either
    except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
        raise ConnectionDropped(type(exc).__name__) from None


@dataclass
class _Sessions:
    """The client's aiohttp sessions, bound to the event loop they were made in."""

    loop: asyncio.AbstractEventLoop
    pooled: aiohttp.ClientSession  # keep-alive connections, for reads
    fresh: aiohttp.ClientSession | None = None  # a new connection per request, for changes

    async def close(self) -> None:
        await self.pooled.close()
        if self.fresh is not None:
            await self.fresh.close()


class Transport:
    """Sends the client's calls: reads on kept-alive connections, retried once while time is
    left; a call that changes state (every call made with `retry=False`) on a connection of its
    own, sent once (see `_never_resend`). `timeout` bounds each call as a whole, retry
    included; `proxies` (read once at start-up) applies per service host."""

    def __init__(
        self, *, timeout: float, proxies: Proxies, on_call: CallHook | None = None
    ) -> None:
        self.timeout = timeout
        self.proxies = proxies
        self._on_call = on_call
        # Each service's proxy, worked out once per host rather than per call.
        self._proxy_of: dict[str, str | None] = {}
        # The call's deadline (`send`) bounds the rest; aiohttp's own total would bound
        # each attempt and count time spent waiting for a free connection.
        self._client_timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=min(CONNECT_TIMEOUT, timeout)
        )
        self._sessions: _Sessions | None = None

    async def aclose(self) -> None:
        sessions, self._sessions = self._sessions, None
        if sessions is not None and not sessions.loop.is_closed():
            await sessions.close()

    @contextlib.contextmanager
    def metered(self, endpoint: str) -> Iterator[None]:
        started = time.perf_counter()
        outcome = "ok"
        try:
            yield
        except LibraryError as exc:
            outcome = exc.kind
            raise
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        except BaseException:
            outcome = "error"
            raise
        finally:
            seconds = time.perf_counter() - started
            # One line per call, as httpx's client logged each request, but by endpoint name.
            log.debug("%s: %s in %.0f ms", _label(endpoint), outcome, 1000 * seconds)
            if self._on_call is not None:
                try:
                    self._on_call(endpoint, outcome, seconds)
                except Exception:  # metrics must never break a patron's call
                    log.exception("on_call hook failed for %s", endpoint)

    def _session(self, *, fresh: bool) -> aiohttp.ClientSession:
        """This loop's session (a session from another, finished loop is dropped)."""
        loop = asyncio.get_running_loop()
        sessions = self._sessions
        if sessions is None or sessions.loop is not loop:
            sessions = self._sessions = _Sessions(loop, self._new_session(force_close=False))
        if not fresh:
            return sessions.pooled
        if sessions.fresh is None:
            sessions.fresh = self._new_session(force_close=True)
        return sessions.fresh

    def _new_session(self, *, force_close: bool) -> aiohttp.ClientSession:
        connector = (
            aiohttp.TCPConnector(limit=CONNECTION_LIMIT, ssl=tls_context(), force_close=True)
            if force_close
            else aiohttp.TCPConnector(
                limit=CONNECTION_LIMIT, ssl=tls_context(), keepalive_timeout=KEEPALIVE
            )
        )
        return aiohttp.ClientSession(
            connector=connector,
            timeout=self._client_timeout,
            middlewares=(_never_resend,),
            # One session serves every patron: a cookie set on one patron's call must not go
            # with the next patron's (the services authenticate by token, not by cookie).
            cookie_jar=aiohttp.DummyCookieJar(),
            trust_env=False,  # proxies come from `Settings`, read once at start-up
        )

    def _proxy_for(self, url: URL) -> str | None:
        if not self.proxies:
            return None
        origin = f"{url.scheme}://{url.raw_authority}"
        if origin not in self._proxy_of:
            self._proxy_of[origin] = self.proxies.for_url(origin)
        return self._proxy_of[origin]

    async def send(
        self,
        endpoint: str,
        method: str,
        url: str | URL,
        *,
        retry: bool = False,
        params: Mapping[str, str] | None = None,
        data: Mapping[str, str] | None = None,
        authorization: str | None = None,
    ) -> Response:
        """One call, its response read whole; aiohttp's and time-out errors mapped.

        Sent once, or, with `retry`, at most twice; with `retry=False` on a connection of its
        own (see the class docstring).
        """
        if params:
            # Encoded here, with the bytes on the wire exactly as `urlencode` makes them.
            url = URL(f"{url}?{urlencode(params)}", encoded=True)
        elif isinstance(url, str):
            url = URL(url, encoded=True)
        headers = dict(_HEADERS)
        if authorization is not None:
            headers["Authorization"] = authorization
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        attempts = 2 if retry else 1
        session = self._session(fresh=not retry)
        proxy = self._proxy_for(url)
        for attempt in range(1, attempts + 1):
            try:
                async with asyncio.timeout_at(deadline):
                    return await self._exchange(session, method, url, data, headers, proxy)
            except _RETRYABLE_ERRORS as exc:
                if attempt < attempts and deadline - loop.time() > MIN_RETRY_BUDGET:
                    log.info("retrying %s after %s", _label(endpoint), type(exc).__name__)
                    continue
                code = (
                    NOT_SENT
                    if isinstance(exc, _NOT_SENT_ERRORS)
                    else "timeout"
                    if isinstance(exc, TimeoutError)
                    else "connection"
                )
                raise ServiceUnavailable(
                    f"{_label(endpoint)}: {type(exc).__name__}", code=code
                ) from None
            except TimeoutError:
                raise ServiceUnavailable(
                    f"{_label(endpoint)}: no answer within {self.timeout:g} s", code="timeout"
                ) from None
            except (aiohttp.ClientError, ValueError) as exc:  # ValueError: a URL aiohttp refuses
                code = NOT_SENT if isinstance(exc, aiohttp.InvalidURL) else "connection"
                raise ServiceUnavailable(
                    f"{_label(endpoint)}: {type(exc).__name__}", code=code
                ) from None
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    async def _exchange(
        session: aiohttp.ClientSession,
        method: str,
        url: URL,
        data: Mapping[str, str] | None,
        headers: dict[str, str],
        proxy: str | None,
    ) -> Response:
        async with session.request(
            method, url, data=data, headers=headers, proxy=proxy, allow_redirects=False
        ) as response:
            return Response(response.status, await response.read())
