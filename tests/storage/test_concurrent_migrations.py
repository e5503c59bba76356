"""Several processes starting at once on one PostgreSQL database migrate one after the other."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from storage.migrate import database_revision, head_revision, upgrade
from storage.store import Store
from tests.fixtures.database import PostgresCluster, new_key

pytestmark = pytest.mark.postgres
ROOT = Path(__file__).resolve().parents[2]
STARTS = 4
TIMEOUT = 45  # each migration alone takes well under a second


async def _schema_ok(url: str) -> None:
    assert await database_revision(url) == head_revision()
    store = await Store.open(url, [new_key()])
    try:
        assert await store.count_accounts() == 0
        assert await store.ping()
    finally:
        await store.close()


async def test_concurrent_upgrades_in_one_process(postgres_cluster: PostgresCluster) -> None:
    for _ in range(3):  # a race that is not there every time is found in a few rounds
        url = await postgres_cluster.new_database("race")
        results = await asyncio.wait_for(
            asyncio.gather(*(upgrade(url) for _ in range(STARTS)), return_exceptions=True),
            TIMEOUT,
        )
        assert [r for r in results if isinstance(r, BaseException)] == []
        await _schema_ok(url)


async def test_processes_starting_at_once(postgres_cluster: PostgresCluster) -> None:
    url = await postgres_cluster.new_database("race")
    script = (
        "import asyncio, sys; from storage.migrate import upgrade; "
        "asyncio.run(upgrade(sys.argv[1]))"
    )
    processes = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            script,
            url,
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for _ in range(STARTS)
    ]
    try:
        outcomes = [await asyncio.wait_for(p.communicate(), TIMEOUT) for p in processes]
    finally:
        for process in processes:
            if process.returncode is None:
                process.kill()
    for process, (_, stderr) in zip(processes, outcomes, strict=True):
        assert process.returncode == 0, stderr.decode()[-2000:]
    await _schema_ok(url)
