"""Transactions PostgreSQL aborts for a deadlock run again, once each in effect
(`storage.database.Database`)."""

from __future__ import annotations

import asyncio
import time

import pytest
from sqlalchemy import text
from sqlalchemy.engine import Connection

from storage.database import Database

pytestmark = pytest.mark.postgres

SLEEP = "SELECT pg_sleep(0.3) /* holding b */"


async def test_two_transactions_in_a_deadlock_both_take_effect_once(postgres_url: str) -> None:
    # Each takes one row and then wants the other's: PostgreSQL aborts one of them, which then
    # runs again. Each adds one to both rows, so both end at two: none lost, none twice.
    database = Database(postgres_url)
    try:

        def create(conn: Connection) -> None:
            conn.execute(text("CREATE TABLE counter (key text PRIMARY KEY, n int NOT NULL)"))
            conn.execute(text("INSERT INTO counter VALUES ('a', 0), ('b', 0)"))

        await database.run(create)
        attempts = {"first": 0, "second": 0}

        def first(conn: Connection) -> None:
            attempts["first"] += 1
            conn.execute(text("UPDATE counter SET n = n + 1 WHERE key = 'a'"))
            # The first time, until the other holds b (it sleeps holding it): then both wait.
            deadline = time.monotonic() + 10
            while attempts["first"] == 1 and time.monotonic() < deadline:
                # A transaction sees one snapshot of the activity unless it drops it.
                conn.execute(text("SELECT pg_stat_clear_snapshot()"))
                sleeping = conn.execute(
                    text(
                        "SELECT count(*) FROM pg_stat_activity"
                        " WHERE query LIKE '%holding b%' AND pid <> pg_backend_pid()"
                    )
                ).scalar_one()
                if sleeping:
                    break
                conn.execute(text("SELECT pg_sleep(0.01)"))
            conn.execute(text("UPDATE counter SET n = n + 1 WHERE key = 'b'"))

        def second(conn: Connection) -> None:
            attempts["second"] += 1
            conn.execute(text("UPDATE counter SET n = n + 1 WHERE key = 'b'"))
            conn.execute(text(SLEEP))
            conn.execute(text("UPDATE counter SET n = n + 1 WHERE key = 'a'"))

        await asyncio.wait_for(asyncio.gather(database.run(first), database.run(second)), 30)
        counts = await database.run(
            lambda conn: {key: n for key, n in conn.execute(text("SELECT key, n FROM counter"))}
        )
    finally:
        await database.dispose()

    assert counts == {"a": 2, "b": 2}
    assert sorted(attempts.values()) == [1, 2]  # one of them ran again
