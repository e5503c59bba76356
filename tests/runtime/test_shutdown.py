"""`library-bot run` as a process: SIGTERM and SIGINT finish the work in flight and exit 0."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.patrons import KAREN
from tests.runtime.conftest import (
    bot_process,
    connected_database,
    process_environment,
    wait_for_call,
)

CHAT = 7501
EXIT_WITHIN = 10.0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_signal_finishes_in_flight_work_and_exits_0(
    sig: signal.Signals, library_sandbox: Any, telegram: Any, tmp_path: Path
) -> None:
    database = tmp_path / "bot.db"
    url = f"sqlite+aiosqlite:///{database}"
    key = await connected_database(url, library_sandbox, telegram, {CHAT: KAREN})
    env = process_environment(library_sandbox, telegram, url, key)
    async with bot_process(env, tmp_path) as bot:
        library_sandbox.faults.latency["platform"] = 1.0
        await telegram.send_text(CHAT, "/loans")
        await wait_for_call(library_sandbox, "platform GET /v3/user", 1)
        bot.process.send_signal(sig)
        signalled = time.monotonic()
        await asyncio.sleep(0.3)
        await telegram.send_text(CHAT, "/help")  # after the signal: not taken any more
        async with asyncio.timeout(EXIT_WITHIN + 2):
            code = await bot.process.wait()
        elapsed = time.monotonic() - signalled
    log = "".join(bot.lines)  # whole: the block's end reads the log to its last line
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
