"""Connections cannot starve the server: `library-bot run`, as a process with the file limit
of the incident (1024), keeps answering chats and `/health` while 2,000 idle connections are
open; idle and slow-header connections are dropped within seconds; the log stays small."""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.config.settings import new_key
from bot.web.limits import (
    ACCEPT_BATCH,
    IDLE_SECONDS,
    AcceptErrorFilter,
    connection_cap,
)
from storage.migrate import upgrade
from tests.runtime.conftest import bot_process, process_environment

CHAT = 7701
BOT_FILE_LIMIT = 1024  # the incident's soft limit
IDLE_CONNECTIONS = 2000
# Generous against IDLE_SECONDS, so a busy machine does not fail the test.
DROPPED_WITHIN = 60.0


def _bot_limits() -> None:
    """In the bot's process: the soft file limit of the incident."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (BOT_FILE_LIMIT, hard))


@pytest.fixture
def many_files() -> None:
    """This process opens the 2,000 client ends: raise its soft limit (within the hard one)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = IDLE_CONNECTIONS + 1024
    if hard != resource.RLIM_INFINITY and hard < wanted:
        pytest.skip(f"the hard file limit ({hard}) is below {wanted}")
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


@asynccontextmanager
async def _bot(env: dict[str, str], cwd: Path) -> AsyncIterator[tuple[str, list[str]]]:
    """`library-bot run` at the incident's file limit; its web URL and its log lines."""
    async with bot_process(env, cwd, preexec_fn=_bot_limits) as running:
        yield running.web_url, running.lines


async def _environment(sandbox: Any, telegram: Any, tmp_path: Path) -> dict[str, str]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    key = new_key()
    await upgrade(url)
    telegram.add_chat(CHAT, language_code="en")
    return process_environment(sandbox, telegram, url, key)


async def _closed_by_server(reader: asyncio.StreamReader, opened: float) -> float:
    """Seconds from `opened` until the server closes a connection that sends no request."""
    with suppress(ConnectionError):
        await reader.read()
    return time.monotonic() - opened


async def test_the_bot_answers_while_2000_idle_connections_are_open(
    many_files: None, library_sandbox: Any, telegram: Any, tmp_path: Path
) -> None:
    env = await _environment(library_sandbox, telegram, tmp_path)
    async with _bot(env, tmp_path) as (web_url, lines):
        host, port = web_url.removeprefix("http://").rsplit(":", 1)
        opened = time.monotonic()
        connected: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        dropping: list[asyncio.Task[float]] = []
        # In rounds of the listen backlog, as a flood arrives: a connection the kernel has
        # to drop from a full accept queue would never be seen by the bot at all.
        for _ in range(IDLE_CONNECTIONS // ACCEPT_BATCH):
            started = time.monotonic()
            batch = await asyncio.gather(
                *(asyncio.open_connection(host, int(port)) for _ in range(ACCEPT_BATCH))
            )
            connected += batch
            dropping += [asyncio.create_task(_closed_by_server(r, started)) for r, _ in batch]
        # A slow client: a header line every half second, never the end of the headers.
        slow_opened = time.monotonic()
        slow_reader, slow_writer = await asyncio.open_connection(host, int(port))
        slow_writer.write(b"GET /health HTTP/1.1\r\nHost: bot\r\n")

        async def trickle() -> None:
            for n in range(int(DROPPED_WITHIN * 2)):
                slow_writer.write(f"X-Slow-{n}: x\r\n".encode())
                with suppress(ConnectionError):
                    await slow_writer.drain()
                if slow_writer.is_closing() or slow_reader.at_eof():
                    return
                await asyncio.sleep(0.5)

        trickling = asyncio.create_task(trickle())

        # With all of them open, a patron's command is answered and /health says ok.
        await telegram.send_text(CHAT, "/help")
        answer = await telegram.wait_for(CHAT, lambda message: bool(message.text), timeout=20)
        assert "/login" in answer.text
        async with httpx.AsyncClient(timeout=10) as http:
            health = await http.get(f"{web_url}/health")
            callback = await http.get(f"{web_url}/oauth/callback")
        assert health.status_code == 200
        assert health.json()["status"] == "ok"
        assert callback.status_code == 400  # answered (no code, no state), not timed out

        # Every idle connection is dropped by the server, soon.
        done, pending = await asyncio.wait(dropping, timeout=DROPPED_WITHIN)
        for task in pending:
            task.cancel()
        assert not pending, f"{len(pending)} idle connections still open"
        lifetimes = [task.result() for task in done]
        async with asyncio.timeout(DROPPED_WITHIN):
            slow = await _closed_by_server(slow_reader, slow_opened)
        trickling.cancel()
        for _, writer in connected:
            writer.close()
        slow_writer.close()
        flood = time.monotonic() - opened

    log = "".join(lines)
    assert "Traceback" not in log
    errors = [line for line in lines if "ERROR" in line]
    assert len(errors) <= max(1, flood / 10), errors
    print(  # the figures for the operator's note (pytest -s)
        f"\nidle connections lived {min(lifetimes):.1f}-{max(lifetimes):.1f} s "
        f"(IDLE_SECONDS={IDLE_SECONDS}); slow headers {slow:.1f} s; "
        f"cap {connection_cap(BOT_FILE_LIMIT)} at a file limit of {BOT_FILE_LIMIT}; "
        f"{len(errors)} ERROR lines in {flood:.1f} s"
    )


def test_the_cap_stays_below_the_file_limit() -> None:
    for limit in (256, 1024, 4096, 65536, 1 << 20):
        cap = connection_cap(limit)
        assert 0 < cap < limit
    assert connection_cap(1024) + ACCEPT_BATCH <= 1024 - 256  # room for the rest


async def test_repeated_accept_errors_are_rate_limited_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """asyncio reports every failed `accept()` through the loop's exception handler; a
    burst of them comes out as one line (with its traceback), then one line per 10 s."""
    logger = logging.getLogger("asyncio")
    held = AcceptErrorFilter(every=10.0)
    # Alone: a bot run in this process earlier has installed one of its own.
    installed, logger.filters = logger.filters, [held]
    try:
        loop = asyncio.get_running_loop()
        with caplog.at_level(logging.ERROR, logger="asyncio"):
            for _ in range(10_000):
                loop.call_exception_handler(
                    {
                        "message": "socket.accept() out of system resource",
                        "exception": OSError(24, "Too many open files"),
                    }
                )
            loop.call_exception_handler({"message": "something else went wrong"})
    finally:
        logger.filters = installed
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 2
    assert messages[0].startswith("socket.accept() out of system resource")
    assert caplog.records[0].exc_info is not None  # the first one keeps its traceback
    assert messages[1].startswith("something else went wrong")  # others are untouched
    assert held.held == 9_999
