"""The migrations create exactly the tables of storage/tables.py, and undo them."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect
from sqlalchemy.engine import Connection

from storage.engine import create_engine
from storage.migrate import database_revision, downgrade, head_revision, upgrade
from storage.tables import metadata

TABLES = {
    "calendar_feed",
    "calendar_kept",
    "chat",
    "login_state",
    "pending_link",
    "account",
    "callback_ref",
    "reminder_log",
    "renewal_refusal",
    "notice_seen",
}


def _differences(connection: Connection) -> list[object]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return list(compare_metadata(context, metadata))


async def _tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            return set(await conn.run_sync(lambda sync: inspect(sync).get_table_names()))
    finally:
        await engine.dispose()


async def test_base_to_head_and_back(store_url: str) -> None:
    # The fixture migrated it; go down to empty and up again.
    assert await database_revision(store_url) == head_revision()
    await downgrade(store_url)
    assert await database_revision(store_url) is None
    assert await _tables(store_url) <= {"alembic_version"}
    await upgrade(store_url)
    assert await database_revision(store_url) == head_revision()
    assert await _tables(store_url) == TABLES | {"alembic_version"}
    engine = create_engine(store_url)
    try:
        async with engine.connect() as conn:
            assert await conn.run_sync(_differences) == []
    finally:
        await engine.dispose()
    await upgrade(store_url)  # idempotent
