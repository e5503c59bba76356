"""A `library-bot run` process started after `REMINDER_TIME` sends the day's reminders once.

JobQueue's daily job runs next tomorrow when it is added after its time, so without the
catch-up a deploy or a crash after the reminder time would skip the day's reminders.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.fixtures.patrons import JONAS, KAREN
from tests.runtime.conftest import (
    WEBHOOK_SECRET,
    bot_process,
    connected_database,
    process_environment,
    wait_for_call,
)

KAREN_CHAT = 7601
JONAS_CHAT = 7602
DIGEST = "Påmindelse fra din biblioteksbot"


async def _environment(sandbox: Any, telegram: Any, tmp_path: Path) -> dict[str, str]:
    """Karen and Jonas connected in a fresh SQLite file; the variables of a bot process."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    patrons = {KAREN_CHAT: KAREN, JONAS_CHAT: JONAS}
    key = await connected_database(url, sandbox, telegram, patrons)
    return process_environment(
        sandbox,
        telegram,
        url,
        key,
        # Webhook mode: two processes may share the bot without fighting over getUpdates.
        WEBHOOK_SECRET=WEBHOOK_SECRET,
        # Midnight: whenever the test runs, the process starts after the reminder time.
        REMINDER_TIME="00:00",
    )


@asynccontextmanager
async def _bot(env: dict[str, str], cwd: Path) -> AsyncIterator[list[str]]:
    """As `_running`; its log lines."""
    async with bot_process(env, cwd) as running:
        yield running.lines


async def _until_logged(lines: list[str], *texts: str) -> None:
    """Until one of `texts` is in the log."""
    async with asyncio.timeout(20):
        while not any(text in line for line in lines for text in texts):  # noqa: ASYNC110
            await asyncio.sleep(0.05)


async def test_two_processes_started_late_send_the_days_reminders_once(
    library_sandbox: Any, telegram: Any, tmp_path: Path
) -> None:
    env = await _environment(library_sandbox, telegram, tmp_path)
    async with _bot(env, tmp_path) as first, _bot(env, tmp_path) as second:
        await telegram.wait_for(KAREN_CHAT, DIGEST, timeout=20)
        await telegram.wait_for(JONAS_CHAT, DIGEST, timeout=20)
        for lines in (first, second):  # both caught up, or found the other had finished
            await _until_logged(lines, "reminder sweep", "today's sweep is done")
    [karen] = telegram.sent(KAREN_CHAT)
    assert "Snak_om_*stjerner*" in karen.text  # due today
    assert "Kongens fald" in karen.text  # due in 3 days
    [jonas] = telegram.sent(JONAS_CHAT)
    assert DIGEST in jonas.text

    # A restart later the same day: the sweep is done, nothing is sent again.
    async with _bot(env, tmp_path) as again:
        await _until_logged(again, "today's sweep is done")
    assert len(telegram.sent(KAREN_CHAT)) == 1
    assert len(telegram.sent(JONAS_CHAT)) == 1


async def test_a_process_killed_mid_sweep_leaves_its_cards_to_the_next_once_leased_out(
    library_sandbox: Any, telegram: Any, tmp_path: Path
) -> None:
    env = await _environment(library_sandbox, telegram, tmp_path)
    library_sandbox.faults.latency["platform"] = 30.0  # the first process is stuck fetching
    async with bot_process(env, tmp_path) as first:
        await wait_for_call(library_sandbox, "platform GET /v3/user", 1, timeout=20)
        first.process.kill()  # SIGKILL mid-sweep: its cards stay leased to it
        await first.process.wait()
    library_sandbox.faults.latency.clear()
    assert telegram.sent(KAREN_CHAT) == [] and telegram.sent(JONAS_CHAT) == []

    # Started at once: the cards are still leased (the dead process may be alive for all the
    # store knows), so nothing is sent; a sweep after the lease is planned.
    async with _bot(env, tmp_path) as second:
        await _until_logged(second, "reminder sweep")
    assert telegram.sent(KAREN_CHAT) == [] and telegram.sent(JONAS_CHAT) == []
    assert any("catching up on 2 cards" in line for line in second)

    # Ten minutes on, the leases have run out (set so here): the next sweep sends, once.
    database = env["DATABASE_URL"].removeprefix("sqlite+aiosqlite:///")
    with sqlite3.connect(database) as connection:
        connection.execute("UPDATE card SET lease_until = '2000-01-01 00:00:00.000000'")
    async with _bot(env, tmp_path) as third:
        await telegram.wait_for(KAREN_CHAT, DIGEST, timeout=20)
        await telegram.wait_for(JONAS_CHAT, DIGEST, timeout=20)
        await _until_logged(third, "reminder sweep")
    assert len(telegram.sent(KAREN_CHAT)) == 1
    assert len(telegram.sent(JONAS_CHAT)) == 1
