"""The Bot API over one aiohttp `ClientSession`: PTB's `BaseRequest`, its documented way to
bring an HTTP client (`initialize`, `shutdown`, `do_request`).

It replaces PTB's `HTTPXRequest` (httpx over httpx-aiohttp): about a third less CPU per send,
and a refused connection is told as one (httpx-aiohttp reported it as "Timed out").

- **Proxies** from `Settings` (`HTTPS_PROXY`, `NO_PROXY`, read once at start-up): the Bot API's
  address is fixed, so its proxy is worked out once; aiohttp never reads the environment.
- **Timeouts**: PTB's connect, read and pool timeouts; aiohttp has no write timeout, so PTB's
  is not applied (the read timeout runs from the request being sent).
- **At most once**: every Bot API call is a POST, which aiohttp never sends again by itself
  (it re-sends only idempotent methods after a dropped connection), and PTB does not retry;
  a dropped connection is a `NetworkError` and the caller decides.
- **Answers as PTB reads them**: every method returns what PTB promises (a `Message` for a
  send). Where the bot needs nothing back, it sends through `Bot.do_api_request`, which returns
  Telegram's answer as it came (`bot.telegram.replies`), and PTB builds no `Message`.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from typing import Any, cast

import aiohttp
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

from bot.config.proxies import Proxies, tls_context

__all__ = ["AiohttpRequest"]

log = logging.getLogger(__name__)

_JSON = {"Content-Type": "application/json"}


class AiohttpRequest(BaseRequest):
    """Bot API calls over one `aiohttp.ClientSession` of at most `connection_pool_size`
    connections (module docstring)."""

    __slots__ = ("_connect", "_limit", "_pool", "_proxy", "_read", "_session", "_timeout")

    def __init__(
        self,
        *,
        connection_pool_size: int = 8,
        read_timeout: float | None = 5.0,
        connect_timeout: float | None = 5.0,
        pool_timeout: float | None = 1.0,
        proxy: str | None = None,
    ) -> None:
        self._limit = connection_pool_size
        self._read = read_timeout
        self._connect = connect_timeout
        self._pool = pool_timeout
        self._proxy = proxy
        self._timeout = self._client_timeout(read_timeout, connect_timeout, pool_timeout)
        self._session: aiohttp.ClientSession | None = None

    @classmethod
    def for_url(
        cls,
        api_url: str,
        proxies: Proxies,
        *,
        connection_pool_size: int,
        read_timeout: float,
        connect_timeout: float = 5.0,
        pool_timeout: float = 5.0,
    ) -> AiohttpRequest:
        """A request for the Bot API at `api_url`, through its proxy if `proxies` has one."""
        return cls(
            connection_pool_size=connection_pool_size,
            read_timeout=read_timeout,
            connect_timeout=connect_timeout,
            pool_timeout=pool_timeout,
            proxy=proxies.for_url(api_url),
        )

    @property
    def read_timeout(self) -> float | None:
        return self._read

    @staticmethod
    @functools.lru_cache(maxsize=16)  # a handful of combinations (getUpdates', sends'), frozen
    def _client_timeout(
        read: float | None, connect: float | None, pool: float | None
    ) -> aiohttp.ClientTimeout:
        # aiohttp's `connect` covers waiting for a pooled connection and making a new one.
        waiting = None if connect is None or pool is None else connect + pool
        return aiohttp.ClientTimeout(
            total=None, connect=waiting, sock_connect=connect, sock_read=read
        )

    async def initialize(self) -> None:
        self._open()

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._limit, ssl=tls_context()),
                headers={"User-Agent": self.USER_AGENT},
                cookie_jar=aiohttp.DummyCookieJar(),
                trust_env=False,  # proxies come from `Settings`, read once at start-up
                timeout=self._timeout,
            )
        return self._session

    async def shutdown(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        # PTB's `ODVInput[float]`: a number, None, or `DEFAULT_NONE` for this request's own.
        read_timeout: object = BaseRequest.DEFAULT_NONE,
        write_timeout: object = BaseRequest.DEFAULT_NONE,
        connect_timeout: object = BaseRequest.DEFAULT_NONE,
        pool_timeout: object = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        session = self._open()
        timeout = self._timeout
        if not (read_timeout is connect_timeout is pool_timeout is BaseRequest.DEFAULT_NONE):
            timeout = self._client_timeout(
                _given(read_timeout, self._read),
                _given(connect_timeout, self._connect),
                _given(pool_timeout, self._pool),
            )
        data: Any = None
        headers = None
        if request_data is not None:
            if request_data.contains_files:
                data = aiohttp.FormData(request_data.json_parameters)
                for name, (filename, content, mimetype) in request_data.multipart_data.items():
                    data.add_field(name, content, filename=filename, content_type=mimetype)
            else:
                # JSON, which the Bot API takes for everything but files: `json.dumps` in C,
                # where form-encoding quoted a 1 KB message in Python (0.1 ms a send). One
                # dump of the whole, as PTB's docs suggest, where `json_payload` dumps every
                # parameter on its own first and then the whole again (seven dumps a send).
                data = json.dumps(request_data.parameters).encode()
                headers = _JSON
        # One line per call at DEBUG, naming the method only: the URL carries the bot token.
        started = time.perf_counter() if log.isEnabledFor(logging.DEBUG) else None
        try:
            async with session.request(
                method,
                url,
                data=data,
                headers=headers,
                proxy=self._proxy,
                timeout=timeout,
                allow_redirects=False,
            ) as response:
                payload = await response.read()
        except TimeoutError as exc:
            raise TimedOut(_timed_out(exc)) from None
        except aiohttp.ClientConnectorError as exc:
            # Nothing was sent. The message names the host, never the URL (it has the token).
            raise NetworkError(
                f"cannot connect to {exc.host}:{exc.port} ({_reason(exc.os_error)})"
            ) from None
        except aiohttp.ClientError as exc:
            # The request may have been received: told, never sent again.
            raise NetworkError(f"connection to the Bot API failed: {type(exc).__name__}") from None
        if started is not None:
            milliseconds = (time.perf_counter() - started) * 1000
            endpoint = url.rpartition("/")[2]
            log.debug("Bot API %s: HTTP %d in %.0f ms", endpoint, response.status, milliseconds)
        return response.status, payload


def _given(value: object, default: float | None) -> float | None:
    return default if value is BaseRequest.DEFAULT_NONE else cast("float | None", value)


def _timed_out(exc: TimeoutError) -> str:
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return "Timed out connecting to the Bot API (or waiting for a free connection)"
    return "Timed out waiting for the Bot API's answer"


def _reason(error: OSError) -> str:
    return error.strerror or type(error).__name__
