"""The migrations create exactly the tables of storage/tables.py, and undo them."""

from __future__ import annotations

from datetime import UTC, datetime

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection

from storage.engine import create_engine
from storage.migrate import database_revision, downgrade, head_revision, upgrade
from storage.tables import metadata

TABLES = {
    "calendar_feed",
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


async def test_cards_connected_before_0009_get_an_identity_each(store_url: str) -> None:
    """Revision 0009 gives every existing card its own identity, as a login would."""
    await downgrade(store_url, "0008")
    engine = create_engine(store_url)
    try:
        async with engine.begin() as conn:
            for chat_id, card in ((1, 1), (1, 2), (2, 1)):
                await conn.execute(
                    text(
                        "INSERT INTO account (chat_id, card, token, key_id, connected_at, "
                        "expiry_warned) VALUES (:chat, :card, 'sealed', 'k', :at, false)"
                    ),
                    {"chat": chat_id, "card": card, "at": datetime(2026, 11, 1, tzinfo=UTC)},
                )
        await upgrade(store_url)
        async with engine.connect() as conn:
            ids = (await conn.execute(text("SELECT card_id FROM account"))).scalars().all()
    finally:
        await engine.dispose()
    assert len(ids) == 3 and all(ids) and len(set(ids)) == 3
