"""At most once: a call that changes state reaches the server once, whatever the connection does.

The server here reads each request whole and then, for the paths it is told to, drops the
connection without a word: the worst case, where the request may or may not have been acted on.
aiohttp's `ClientSession` would send a GET, PUT or DELETE again after such a drop (on a fresh
connection as on a reused one), and order, renew and cancel are GETs on the data platform.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from bot.library.client import LibraryClient
from bot.library.errors import ServiceUnavailable
from tests.fixtures.loopback import LoopbackServer
from tests.fixtures.patrons import PID


class DroppingServer(LoopbackServer):
    """HTTP/1.1 on 127.0.0.1 that counts requests and drops the connection after some."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: Counter[str] = Counter()
        self.connections = 0
        self.drop: set[str] = set()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers = dict(line.lower().split(": ", 1) for line in lines[1:] if ": " in line)
                length = int(headers.get("content-length", "0"))
                if length:
                    await reader.readexactly(length)
                path = target.split("?", 1)[0]
                self.requests[f"{method} {path}"] += 1
                if path in self.drop:
                    writer.transport.abort()  # read, then gone: no answer, no orderly close
                    return
                body = b'{"statusCode": 200, "data": {"name": "Karen", "loans": []}}'
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
        finally:
            writer.close()


@pytest.fixture
async def server() -> AsyncIterator[DroppingServer]:
    dropping = DroppingServer()
    await dropping.start()
    yield dropping
    await dropping.stop()


@pytest.fixture
async def client(server: DroppingServer) -> AsyncIterator[LibraryClient]:
    library = LibraryClient(
        oauth_url=server.url,
        auth_url=server.url,
        platform_url=server.url,
        client_id="client",
        client_secret="secret",
        timeout=3.0,
    )
    yield library
    await library.aclose()


Call = Callable[[LibraryClient], Awaitable[Any]]

# Everything that changes state, with the request the server sees for it.
STATE_CHANGING: dict[str, tuple[str, Call]] = {
    "order": ("GET /v3/order", lambda c: c.order("tok", [PID], "DK-710100")),
    "renew": ("GET /v3/renew", lambda c: c.renew("tok", "4100001")),
    "cancel": ("GET /v3/order", lambda c: c.cancel_order("tok", "order-1")),
    "code exchange": (
        "POST /oauth/token",
        lambda c: c.exchange_code("code-1", redirect_uri="http://127.0.0.1:9/cb"),
    ),
    "revoke": ("DELETE /oauth/revoke", lambda c: c.revoke("tok")),
}

READS: dict[str, tuple[str, Call]] = {
    "user": ("GET /v3/user", lambda c: c.user("tok")),
    "work": ("GET /v3/work", lambda c: c.work("tok", [PID])),
    "search": ("GET /v3/search", lambda c: c.search("tok", "blixen")),
    "libraries": ("GET /v3/libraries", lambda c: c.libraries("tok", agency_ids=["710100"])),
    "userinfo": ("GET /userinfo", lambda c: c.userinfo("tok")),
}


async def _outcome(call: Call, client: LibraryClient) -> object:
    """What the call gave: `False` from revoke (it never raises), else the error raised."""
    try:
        return await call(client)
    except ServiceUnavailable as exc:
        return exc


@pytest.mark.parametrize("reused", [False, True], ids=["fresh", "after a kept-alive read"])
@pytest.mark.parametrize("name", list(STATE_CHANGING))
async def test_a_dropped_state_change_is_sent_once(
    server: DroppingServer, client: LibraryClient, name: str, reused: bool
) -> None:
    request, call = STATE_CHANGING[name]
    if reused:
        # A read leaves a kept-alive connection in the pool, ready to be reused.
        assert (await client.user("tok")).name == "Karen"
        await client.user("tok")
        assert server.connections == 1
    server.drop.add(request.split(" ", 1)[1])

    outcome = await _outcome(call, client)

    assert server.requests[request] == 1
    if name == "revoke":
        assert outcome is False
    else:
        assert isinstance(outcome, ServiceUnavailable) and outcome.code == "connection"
        assert outcome.status is None  # no answer: the handlers tell the patron it may be done
    # The pooled connection is still good for reads afterwards.
    server.drop.clear()
    assert (await client.user("tok")).name == "Karen"


@pytest.mark.parametrize("reused", [False, True], ids=["fresh", "after a kept-alive read"])
@pytest.mark.parametrize("name", list(READS))
async def test_a_dropped_read_is_sent_twice_at_most(
    server: DroppingServer, client: LibraryClient, name: str, reused: bool
) -> None:
    request, call = READS[name]
    if reused and name != "user":
        await client.user("tok")
    server.drop.add(request.split(" ", 1)[1])

    with pytest.raises(ServiceUnavailable) as caught:
        await call(client)

    assert caught.value.code == "connection"
    assert server.requests[request] == 2  # our one retry; aiohttp adds none of its own
