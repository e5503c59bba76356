"""The hardening tests: a database another process holds locked; the Bot API in-process.

Talking to the bot and running sweeps: tests/fixtures/chat.py and tests/fixtures/jobs.py.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from tests.fixtures.bot import IN_PROCESS, chosen_bot_api


def sqlite_path(database_url: str) -> str:
    return database_url.split(":///", 1)[1]


@asynccontextmanager
async def database_locked(database_url: str, seconds: float) -> AsyncIterator[None]:
    """Another process's connection holds an exclusive write lock for `seconds`."""
    taken = threading.Event()

    def hold() -> None:
        connection = sqlite3.connect(sqlite_path(database_url), timeout=5, isolation_level=None)
        try:
            connection.execute("BEGIN EXCLUSIVE")
            taken.set()
            threading.Event().wait(seconds)
            connection.execute("ROLLBACK")
        finally:
            connection.close()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    await asyncio.to_thread(taken.wait, 5)
    try:
        yield
    finally:
        await asyncio.to_thread(thread.join, seconds + 5)


@pytest.fixture
def bot_api(request: pytest.FixtureRequest) -> str:
    """Handler tests: the bot reaches the Bot API stand-in in-process (tests/fixtures/bot.py)."""
    return chosen_bot_api(request, IN_PROCESS)
