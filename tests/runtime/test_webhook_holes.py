"""Webhook bodies and headers that once gave a 500 and a traceback: now a clear 4xx."""

from __future__ import annotations

import asyncio
import logging
from urllib.parse import urlsplit

import pytest

from tests.fixtures.bot import BotFactory
from tests.runtime.conftest import WEBHOOK_SECRET

HEADER = "X-Telegram-Bot-Api-Secret-Token"


def _no_errors(caplog: pytest.LogCaptureFixture) -> None:
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert not errors, [record.getMessage() for record in errors]
    assert "Traceback" not in caplog.text


async def _raw_post(url: str, head: bytes, body: bytes) -> int:
    """POST with header bytes no HTTP client library would send; the response status."""
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        writer.write(
            b"POST " + parts.path.encode() + b" HTTP/1.1\r\n"
            b"Host: " + parts.netloc.encode() + b"\r\n"
            b"Content-Type: application/json\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n"
            b"Connection: close\r\n" + head + b"\r\n" + body
        )
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), 10)
    finally:
        writer.close()
    return int(status_line.split()[1])


async def test_deeply_nested_json_with_the_right_secret_is_a_400(
    bot_factory: BotFactory, caplog: pytest.LogCaptureFixture
) -> None:
    bot = await bot_factory(WEBHOOK_SECRET=WEBHOOK_SECRET)
    caplog.set_level(logging.DEBUG)
    url = f"{bot.info.web_url}/telegram/webhook"
    depth = 100_000
    for content in (
        b"[" * depth + b"]" * depth,
        b'{"update_id": 1, "message": ' + b'{"a": ' * depth + b"1" + b"}" * depth + b"}",
    ):
        response = await bot.http.post(
            url,
            content=content,
            headers={HEADER: WEBHOOK_SECRET, "Content-Type": "application/json"},
        )
        assert response.status_code == 400
        assert response.text == "malformed update"
    _no_errors(caplog)
    assert (await bot.http.get(f"{bot.info.web_url}/health")).status_code == 200


async def test_a_secret_header_that_is_not_utf8_is_a_403_without_a_traceback(
    bot_factory: BotFactory, caplog: pytest.LogCaptureFixture
) -> None:
    bot = await bot_factory(WEBHOOK_SECRET=WEBHOOK_SECRET)
    caplog.set_level(logging.DEBUG)
    url = f"{bot.info.web_url}/telegram/webhook"
    body = b'{"update_id": 1}'
    for value in (
        b"\xff\xfe\xfd",
        WEBHOOK_SECRET.encode() + b"\xc3",
        b"\xed\xa0\x80",
        b"\x80" * 64,
    ):
        for _ in range(3):  # every request, not only the first
            status = await _raw_post(url, HEADER.encode() + b": " + value + b"\r\n", body)
            assert status == 403
    _no_errors(caplog)
    # The right secret still works afterwards.
    good = await _raw_post(url, HEADER.encode() + b": " + WEBHOOK_SECRET.encode() + b"\r\n", body)
    assert good == 200
