"""The Bot API over aiohttp (`AiohttpRequest`): what a failing server or network turns into,
a send never repeated by the transport, PTB's methods answered as PTB promises, and the bot's
own sends reading nothing back."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import AsyncIterator

import pytest
from telegram import Message
from telegram.error import NetworkError, TimedOut

from bot.telegram.botapi import TolerantBot
from bot.telegram.replies import send
from bot.telegram.request import AiohttpRequest
from sandbox.telegram import TelegramStandIn
from tests.fixtures.loopback import LoopbackServer

TOKEN = "123456:REQUEST-test-token"
CHAT = 4711
_ANSWER = {
    "ok": True,
    "result": {
        "message_id": 7,
        "date": 1_700_000_000,
        "chat": {"id": CHAT, "type": "private", "first_name": "Ada"},
        "from": {"id": 123456, "is_bot": True, "first_name": "Bot"},
        "text": "hej",
        "entities": [{"type": "bold", "offset": 0, "length": 3}],
    },
}


class OneShotServer(LoopbackServer):
    """Answers the first `answered` requests with a sent message, then reads each further
    request whole and closes the connection without answering (the request may have been
    received: a drop after sending)."""

    def __init__(self, answered: int = 0, *, hang: bool = False) -> None:
        super().__init__()
        self.answered = answered
        self.hang = hang
        self.received = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.decode("latin-1").split("\r\n"):
                    name, _, value = line.partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                await reader.readexactly(length)
                self.received += 1
                if self.received > self.answered:
                    if self.hang:
                        await asyncio.sleep(3600)
                    return
                body = json.dumps(_ANSWER).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            writer.close()


@pytest.fixture
async def refusing_url() -> AsyncIterator[str]:
    """An address that refuses connections: a port held bound, never listening."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{held.getsockname()[1]}"


async def _bot(url: str, **timeouts: float) -> TolerantBot:
    request = AiohttpRequest(connection_pool_size=2, **timeouts)
    bot = TolerantBot(TOKEN, base_url=f"{url}/bot", request=request)
    await request.initialize()
    return bot


async def test_a_refused_connection_is_a_network_error_not_a_time_out(refusing_url: str) -> None:
    request = AiohttpRequest(connection_pool_size=1, read_timeout=5.0, connect_timeout=5.0)
    async with request:
        with pytest.raises(NetworkError) as caught:
            await request.post(f"{refusing_url}/bot{TOKEN}/sendMessage")
    assert not isinstance(caught.value, TimedOut)
    assert "timed out" not in str(caught.value).lower()
    assert "cannot connect" in str(caught.value)
    assert TOKEN not in str(caught.value)


async def test_a_send_dropped_after_sending_is_not_sent_again() -> None:
    server = OneShotServer(answered=1)
    await server.start()
    try:
        bot = await _bot(server.url)
        # The first send leaves a kept-alive connection; the second is dropped on it, the
        # case where aiohttp re-sends idempotent methods by itself.
        await bot.send_message(CHAT, "hej")
        with pytest.raises(NetworkError) as caught:
            await bot.send_message(CHAT, "hej igen")
        await bot.request.shutdown()
    finally:
        await server.stop()
    assert server.received == 2  # the dropped send reached the server once, and only once
    assert not isinstance(caught.value, TimedOut)
    assert TOKEN not in str(caught.value)


async def test_no_answer_within_the_read_timeout_is_timed_out() -> None:
    server = OneShotServer(hang=True)
    await server.start()
    try:
        bot = await _bot(server.url, read_timeout=0.2)
        with pytest.raises(TimedOut):
            await bot.send_message(CHAT, "hej")
        await bot.request.shutdown()
    finally:
        await server.stop()
    assert server.received == 1


async def test_a_send_returns_what_ptb_promises_and_the_bots_own_read_nothing_back() -> None:
    server = OneShotServer(answered=2)
    await server.start()
    try:
        bot = await _bot(server.url)
        sent = await bot.send_message(CHAT, "hej")
        told = await send(bot, CHAT, "hej")
        await bot.request.shutdown()
    finally:
        await server.stop()
    assert server.received == 2
    assert isinstance(sent, Message)  # PTB's method, PTB's answer: the whole message
    assert (sent.message_id, sent.chat.id, sent.text, sent.from_user.id) == (7, CHAT, "hej", 123456)
    assert told is None  # the bot's sends build no `Message` nobody reads


async def test_an_unreadable_accepted_send_counts_as_delivered(
    telegram: TelegramStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    telegram.add_bot(TOKEN, username="request_test_bot")
    telegram.add_chat(CHAT)
    telegram.failures.garble("sendMessage")
    request = AiohttpRequest(connection_pool_size=1)
    with caplog.at_level(logging.WARNING):
        async with TolerantBot(TOKEN, base_url=f"{telegram.url}/bot", request=request) as bot:
            await send(bot, CHAT, "hej")  # no error: nothing of the answer is read
    assert [m.text for m in telegram.sent(CHAT)] == ["hej"]
    assert caplog.records == []
