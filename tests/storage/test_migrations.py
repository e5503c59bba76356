"""The migrations create exactly the tables of storage/tables.py, and undo them."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection

from storage.engine import create_engine
from storage.migrate import database_revision, downgrade, head_revision, upgrade
from storage.store import Store
from storage.tables import metadata
from tests.fixtures.database import new_key
from tests.fixtures.storage import rows

TABLES = {
    "calendar_feed",
    "calendar_kept",
    "chat",
    "login_state",
    "pending_link",
    "card",
    "callback_ref",
    "reminder_log",
    "renewal_refusal",
    "notice_seen",
    "shelf_watch",
    "sender",
    "chat_turn",
    "send_pace",
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


async def test_0010_drops_search_buttons_whose_words_were_plain(database_url: str) -> None:
    await downgrade(database_url, "0008")
    engine = create_engine(database_url)
    try:
        async with engine.begin() as conn:
            for action, payload in (("find", '{"q": "karen 0101701234"}'), ("order", "{}")):
                await conn.execute(
                    sa.text(
                        "INSERT INTO callback_ref (id, chat_id, user_id, action, payload, "
                        "created_at) VALUES (:id, 1, 1, :action, :payload, CURRENT_TIMESTAMP)"
                    ),
                    {"id": action, "action": action, "payload": payload},
                )
    finally:
        await engine.dispose()
    await upgrade(database_url)
    store = await Store.open(database_url, [new_key()])
    try:
        assert await rows(store, "SELECT action FROM callback_ref") == [("order",)]
    finally:
        await store.close()


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
            ids = (await conn.execute(text("SELECT card_id FROM card"))).scalars().all()
    finally:
        await engine.dispose()
    assert len(ids) == 3 and all(ids) and len(set(ids)) == 3


async def test_0019_renames_and_keeps_every_row_both_ways(store_url: str) -> None:
    """0019 calls the cards' table `card` and a card's number `number`; down to 0018 and up
    again, every value stays, and PostgreSQL's key is named after the table it keys."""
    at = datetime(2026, 11, 1, tzinfo=UTC)
    engine = create_engine(store_url)

    async def found(*statements: str) -> list[list[tuple[object, ...]]]:
        async with engine.connect() as conn:
            return [[tuple(row) for row in await conn.execute(text(sql))] for sql in statements]

    try:
        async with engine.begin() as conn:
            await conn.execute(
                text(
                    "INSERT INTO card (chat_id, number, token, key_id, connected_at, "
                    "expiry_warned, label) VALUES (1, 2, 'sealed', 'k', :at, false, 'Karen')"
                ),
                {"at": at},
            )
            await conn.execute(
                text("INSERT INTO notice_seen (chat_id, number, item) VALUES (1, 2, 'fee:f')")
            )
            await conn.execute(
                text(
                    "INSERT INTO chat (chat_id, reminders_enabled, active, card_ended, "
                    "created_at, updated_at) VALUES (2, true, true, 'logged_out', :at, :at)"
                ),
                {"at": at},
            )
        await downgrade(store_url, "0018")
        assert await found(
            "SELECT card, label FROM account",
            "SELECT card, item FROM notice_seen",
            "SELECT account_ended FROM chat",
        ) == [[(2, "Karen")], [(2, "fee:f")], [("logged_out",)]]
        await upgrade(store_url)
        assert await found(
            "SELECT number, label FROM card",
            "SELECT number, item FROM notice_seen",
            "SELECT card_ended FROM chat",
        ) == [[(2, "Karen")], [(2, "fee:f")], [("logged_out",)]]
        async with engine.connect() as conn:
            key = await conn.run_sync(lambda sync: inspect(sync).get_pk_constraint("card"))
            assert key["constrained_columns"] == ["chat_id", "number"]
            if engine.dialect.name == "postgresql":
                assert key["name"] == "card_pkey"
    finally:
        await engine.dispose()
