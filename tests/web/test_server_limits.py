"""The web server against one client's abuse, in process: one patron's requests to the Mini
App's API are limited before their bodies are read, a body has a read deadline, and requests
that cannot be parsed are answered without a traceback per request in the log."""

from __future__ import annotations

import asyncio
import logging
from contextlib import suppress

import pytest

from bot.web.limits import BODY_SECONDS, LOG_EVERY, PATRON_IN_FLIGHT, PatronLimit
from tests.fixtures.bot import BotFactory, BotHarness
from tests.fixtures.telegram import init_data

# Generous against BODY_SECONDS, so a busy machine does not fail the test.
CLOSED_WITHIN = BODY_SECONDS + 60.0


async def _answer(bot: BotHarness, request: bytes) -> bytes:
    """What the server sends for `request` (sent whole or in part) until it closes."""
    host, port = bot.info.web_url.removeprefix("http://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(request)
    try:
        async with asyncio.timeout(CLOSED_WITHIN):
            with suppress(ConnectionError):
                return await reader.read()
        return b""
    finally:
        writer.close()


def _slow_renewal(user_id: int) -> bytes:
    """A signed renewal's headers and the first byte of a body that never comes."""
    return (
        "POST /app/api/renew HTTP/1.1\r\nHost: bot\r\n"
        f"Authorization: tma {init_data(user_id)}\r\n"
        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
    ).encode()


async def test_one_patrons_slow_bodies_are_limited_and_time_out(bot: BotHarness) -> None:
    extra = 3
    answers = await asyncio.gather(
        *(_answer(bot, _slow_renewal(95)) for _ in range(PATRON_IN_FLIGHT + extra))
    )
    statuses = sorted(answer.split(b" ", 2)[1].decode() for answer in answers)
    # The patron's requests beyond the limit were refused with their bodies unread (had they
    # been read, they would have timed out as the others did).
    assert statuses == ["408"] * PATRON_IN_FLIGHT + ["429"] * extra, statuses
    refused = next(answer for answer in answers if answer.startswith(b"HTTP/1.1 429"))
    assert b"\r\nRetry-After: 1\r\n" in refused
    # Unsigned: refused before the body too.
    unsigned = await _answer(
        bot, b"POST /app/api/renew HTTP/1.1\r\nHost: bot\r\nContent-Length: 9\r\n\r\n{"
    )
    assert unsigned.startswith(b"HTTP/1.1 401")
    # Once they are answered, the patron is served again.
    page = await bot.http.get(
        f"{bot.info.web_url}/app/api/overview", headers={"Authorization": f"tma {init_data(95)}"}
    )
    assert page.status_code == 200


async def test_bodies_no_route_reads_are_refused_or_dropped_unread(
    bot_factory: BotFactory,
) -> None:
    """Answered at once, not after the body deadline (which would be a 408)."""
    bot = await bot_factory(WEBHOOK_SECRET="server-limits-webhook-secret")
    partial = "Content-Length: 1000\r\n\r\n{"
    cases = {
        f"POST /telegram/webhook HTTP/1.1\r\nHost: bot\r\n{partial}": "403",  # no secret
        f"GET /livez HTTP/1.1\r\nHost: bot\r\n{partial}": "200",
        f"POST /livez HTTP/1.1\r\nHost: bot\r\n{partial}": "405",
        f"POST /nowhere HTTP/1.1\r\nHost: bot\r\n{partial}": "404",
        (
            "POST /app/api/renew HTTP/1.1\r\nHost: bot\r\n"
            f"Authorization: tma {init_data(97)}\r\nContent-Length: 100000\r\n\r\n{{"
        ): "413",
    }
    for request, status in cases.items():
        answer = await _answer(bot, request.encode())
        assert answer.split(b" ", 2)[1].decode() == status, (request[:30], answer[:40])


def test_a_patron_gets_a_burst_then_a_steady_rate() -> None:
    now = [0.0]
    limit = PatronLimit(in_flight=2, burst=3, interval=2.0, clock=lambda: now[0])
    assert limit.admit("a") is None and limit.admit("a") is None
    assert limit.admit("a") == 2.0  # two in flight
    assert limit.admit("b") is None  # another patron is not held up
    limit.release("a")
    limit.release("a")
    assert limit.admit("a") is None
    limit.release("a")
    assert limit.admit("a") == pytest.approx(2.0)  # the burst of 3 is spent
    now[0] = 2.0
    assert limit.admit("a") is None
    limit.release("a")
    assert limit.admit("a") == pytest.approx(2.0)
    refused = PatronLimit.too_many(0.2)
    assert refused.status == 429 and refused.headers["Retry-After"] == "1"


async def test_requests_that_cannot_be_parsed_are_not_a_traceback_each(
    bot: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    bad = (
        b"GET /livez HTTP/1.1\r\nHost: bot\r\nX-Long: " + b"x" * 70_000 + b"\r\n\r\n",
        b"GET /livez HTTP/1.1\r\nHost: b\x00ot\r\n\r\n",
        b"\x00\x01\x02 garbage \xff\r\n\r\n",
        b"GET /livez HTTP/1.1\r\nHost: bot\r\nNo colon here\r\n\r\n",
        b"GET /li vez HTTP/9.x\r\n\r\n",
    )
    loop = asyncio.get_running_loop()
    started = loop.time()
    with caplog.at_level(logging.INFO, logger="aiohttp"):
        answers = [await _answer(bot, bad[n % len(bad)]) for n in range(200)]
    elapsed = loop.time() - started
    assert all(answer.startswith((b"HTTP/1.0 4", b"HTTP/1.1 4")) for answer in answers), {
        a[:30] for a in answers
    }
    logged = [
        r for r in caplog.records if r.name.startswith("aiohttp") and r.levelno >= logging.INFO
    ]
    assert len(logged) <= 1 + elapsed / LOG_EVERY, [r.getMessage() for r in logged]
    assert all(r.exc_info is None and "not parsed" in r.getMessage() for r in logged)
    assert (await bot.http.get(f"{bot.info.web_url}/livez")).status_code == 200
