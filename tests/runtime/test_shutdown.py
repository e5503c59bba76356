"""`library-bot run` as a process: SIGTERM and SIGINT finish the work in flight and exit 0."""

from __future__ import annotations

import asyncio
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bot.config.settings import decode_key
from storage.migrate import upgrade
from storage.store import Store
from tests.fixtures.bot import new_key
from tests.fixtures.patrons import KAREN
from tests.runtime.conftest import connect_directly, process_environment, wait_for_call

CHAT = 7501
READY = re.compile(r"running .*web server at (http://\S+)")
EXIT_WITHIN = 10.0


async def _start(env: dict[str, str], cwd: Path) -> tuple[asyncio.subprocess.Process, list[str]]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        "run",
        env=env,
        cwd=cwd,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    lines: list[str] = []
    assert process.stderr is not None
    async with asyncio.timeout(20):
        while True:
            raw = await process.stderr.readline()
            if not raw:
                raise AssertionError("the bot exited early:\n" + "".join(lines))
            lines.append(raw.decode(errors="replace"))
            if READY.search(lines[-1]):
                return process, lines


async def _drain(process: asyncio.subprocess.Process, lines: list[str]) -> None:
    assert process.stderr is not None
    while raw := await process.stderr.readline():
        lines.append(raw.decode(errors="replace"))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_signal_finishes_in_flight_work_and_exits_0(
    sig: signal.Signals, library_sandbox: Any, telegram: Any, tmp_path: Path
) -> None:
    database = tmp_path / "bot.db"
    url = f"sqlite+aiosqlite:///{database}"
    key = new_key()
    await upgrade(url)
    store = await Store.open(url, [decode_key(key)])
    try:
        await connect_directly(store, library_sandbox, telegram, CHAT, KAREN)
    finally:
        await store.close()
    env = process_environment(library_sandbox, telegram, url, key)
    process, lines = await _start(env, tmp_path)
    drain = asyncio.create_task(_drain(process, lines))
    try:
        library_sandbox.faults.latency["platform"] = 1.0
        await telegram.send_text(CHAT, "/loans")
        await wait_for_call(library_sandbox, "platform GET /v3/user", 1)
        process.send_signal(sig)
        signalled = time.monotonic()
        await asyncio.sleep(0.3)
        await telegram.send_text(CHAT, "/help")  # after the signal: not taken any more
        async with asyncio.timeout(EXIT_WITHIN + 2):
            code = await process.wait()
        elapsed = time.monotonic() - signalled
        await drain
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    log = "".join(lines)
    assert code == 0, log
    assert elapsed < EXIT_WITHIN, log
    [answer] = telegram.sent(CHAT)  # the /loans in flight, and nothing for /help
    assert "Kongens fald" in answer.text
    assert "stopped" in log
    # The database was closed cleanly: SQLite folds the write-ahead log back in on close.
    assert _wal_size(database) == 0


def _wal_size(database: Path) -> int:
    wal = Path(f"{database}-wal")
    return wal.stat().st_size if wal.exists() else 0
