"""The Bot API stand-in without HTTP: a PTB request that calls the stand-in's methods in-process.

`StandInRequest` is a `telegram.request.BaseRequest`, so a PTB bot built with it goes through
PTB's whole request path (parameters serialised as for a form post, the JSON answer parsed,
errors mapped to `BadRequest`, `Forbidden`, `RetryAfter`, ...), while the stand-in checks every
call as strictly as over HTTP (`params`, `markup`) and applies its fault rules (`faults`). Only
the sockets are missing: tests that are about the wire use the HTTP server instead.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from telegram._utils.defaultvalue import DefaultValue
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

from sandbox.telegram.params import Params

if TYPE_CHECKING:
    from telegram._utils.types import ODVInput

    from sandbox.telegram.api import BotApi

# As PTB's HTTPXRequest: how long a call may take before it counts as timed out.
READ_TIMEOUT = 5.0


class StandInRequest(BaseRequest):
    """PTB's request interface over `BotApi.call`; the URL's path names the token and method."""

    __slots__ = ("_api", "_read_timeout", "_running")

    def __init__(self, api: BotApi, *, read_timeout: float | None = READ_TIMEOUT) -> None:
        self._api = api
        self._read_timeout = read_timeout
        self._running: set[asyncio.Future[tuple[int, dict[str, Any]]]] = set()

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

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
        parts = urlsplit(url)
        prefix, _, method_name = parts.path.rpartition("/")
        test = prefix.endswith("/test")  # Telegram's test environment
        _, marker, token = prefix.removesuffix("/test").rpartition("/bot")
        if not marker:
            raise NetworkError(f"not a Bot API address: {url}")
        params: Params = dict(parse_qsl(parts.query))
        if request_data is not None:
            # As a form post carries them: strings as they are, everything else as JSON.
            params.update(request_data.json_parameters)

        async def read() -> Params:
            return params

        timeout = self._read_timeout if isinstance(read_timeout, DefaultValue) else read_timeout
        # A call the client gave up on still runs to its end, as on a server: the bot cannot
        # tell a slow send that took effect from one that did not.
        call = asyncio.ensure_future(self._api.call(token, method_name, read, test))
        self._running.add(call)
        call.add_done_callback(self._running.discard)
        try:
            status, body = await asyncio.wait_for(asyncio.shield(call), timeout)
        except TimeoutError:
            raise TimedOut(f"the stand-in took longer than {timeout}s") from None
        return status, json.dumps(body).encode()
