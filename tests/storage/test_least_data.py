"""Revision 0003 removes the userinfo attributes earlier versions stored, from the rows and
from the files: no byte of a civil registration number is left behind."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import pytest
import sqlalchemy as sa

from storage import engine as engine_module
from storage.crypto import TokenCipher, key_id
from storage.engine import create_engine
from storage.migrate import upgrade
from storage.store import Store
from tests.fixtures.database import PG_USER, PostgresCluster, new_key

NOW = datetime(2026, 1, 20, 8, 0, tzinfo=UTC)
ACCOUNTS = 300  # enough rows for many pages, so freed pages would hold them


def cpr_of(index: int) -> str:
    return f"0101{70 + index % 30:02d}{index:04d}"


def spellings(cpr: str) -> list[bytes]:
    """The ways a CPR number may sit in a file: plain, with a dash, as JSON escapes it."""
    dashed = f"{cpr[:6]}-{cpr[6:]}"
    return [cpr.encode(), dashed.encode(), cpr.encode("utf-16-le")]


def attributes_of(index: int) -> dict[str, Any]:
    """What an earlier version stored: userinfo minus `cpr`, which still held CPR numbers."""
    cpr = cpr_of(index)
    return {
        "uniqueId": f"u-{index}",
        "municipality": "101",
        "userId": cpr,
        "agencies": [
            {"agencyId": "710100", "userId": cpr, "userIdType": "CPR"},
            {"agencyId": "714700", "userId": "12345678", "userIdType": "LOCAL"},
        ],
        "dbcidpUserInfo": {"person": {"ids": [[f"{cpr[:6]}-{cpr[6:]}"]]}},
        "CPR-nummer ✓": cpr,
    }


async def _seed_0001(url: str, key: bytes) -> None:
    cipher = TokenCipher([key])
    engine = create_engine(url)
    try:
        async with engine.begin() as conn:
            meta = sa.MetaData()
            await conn.run_sync(meta.reflect)
            tables = meta.tables
            await conn.execute(
                tables["account"].insert(),
                [
                    {
                        "chat_id": index,
                        "token": cipher.encrypt(f"token-{index}", index),
                        "key_id": key_id(key),
                        "token_expires_at": NOW + timedelta(days=30),
                        # Early rows had no columns of their own: only the JSON.
                        "unique_id": None if index % 2 else f"u-{index}",
                        "municipality": None,
                        "attributes": attributes_of(index),
                        "connected_at": NOW,
                        "expiry_warned": False,
                    }
                    for index in range(1, ACCOUNTS + 1)
                ],
            )
            await conn.execute(
                tables["pending_link"].insert(),
                [
                    {
                        "code_hash": f"{index:064d}",
                        "chat_id": 10_000 + index,
                        "token": cipher.encrypt(f"pending-{index}", 10_000 + index),
                        "token_expires_at": None,
                        "attributes": json.loads(json.dumps(attributes_of(10_000 + index))),
                        "expires_at": NOW + timedelta(minutes=10),
                    }
                    for index in range(1, 21)
                ],
            )
    finally:
        await engine.dispose()


def _files_of(database: Path) -> bytes:
    """The database file, its WAL and shared memory, whichever exist."""
    return b"".join(path.read_bytes() for path in database.parent.glob(database.name + "*"))


def _cprs() -> list[str]:
    return [cpr_of(index) for index in [*range(1, ACCOUNTS + 1), *range(10_001, 10_021)]]


async def _check_rows(url: str, key: bytes) -> None:
    store = await Store.open(url, [key])
    try:
        card = await store.cards.get(1)
        assert card is not None and card.token == "token-1"
        assert (card.unique_id, card.municipality) == ("u-1", "101")
        second = await store.cards.get(2)
        assert second is not None and (second.unique_id, second.municipality) == ("u-2", "101")
        linked = await store.database.run(
            lambda conn: conn.execute(
                sa.text("SELECT unique_id, municipality FROM pending_link WHERE chat_id = 10001")
            ).one()
        )
        assert tuple(linked) == ("u-10001", "101")
        for table in ("card", "pending_link"):
            columns = await store.database.run(
                lambda conn, table=table: [c["name"] for c in sa.inspect(conn).get_columns(table)]
            )
            assert "attributes" not in columns
    finally:
        await store.close()


@pytest.mark.parametrize("secure_delete", ["as built", "off"])
async def test_upgrade_leaves_no_cpr_in_the_sqlite_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secure_delete: str
) -> None:
    if secure_delete == "off":
        # Debian builds SQLite with secure_delete on; others do not: freed pages keep their
        # bytes there, and only the compaction after the upgrade removes them.
        def pragmas(connection: Any, record: Any) -> None:
            original(connection, record)
            connection.cursor().execute("PRAGMA secure_delete=OFF")

        original = engine_module.sqlite_pragmas
        monkeypatch.setattr(engine_module, "sqlite_pragmas", pragmas)
    path = tmp_path / "old.db"
    url = f"sqlite+aiosqlite:///{path}"
    key = new_key()
    await upgrade(url, "0001")
    await _seed_0001(url, key)
    before = path.read_bytes()
    assert cpr_of(1).encode() in before  # the test can fail: the numbers are there now
    await upgrade(url)
    await _check_rows(url, key)
    content = _files_of(path)
    assert len(content) > 0
    for cpr in _cprs():
        for spelled in spellings(cpr):
            assert spelled not in content, cpr


@pytest.mark.postgres
async def test_upgrade_leaves_no_cpr_in_the_postgres_tables(
    postgres_cluster: PostgresCluster, tmp_path: Path
) -> None:
    name = f"least_{tmp_path.name[-8:].replace('-', '_')}"
    admin = await asyncpg.connect(
        host=postgres_cluster.host, port=postgres_cluster.port, user=PG_USER
    )
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    url = postgres_cluster.url(name)
    key = new_key()
    await upgrade(url, "0001")
    await _seed_0001(url, key)
    await upgrade(url)
    await _check_rows(url, key)
    connection = await asyncpg.connect(
        host=postgres_cluster.host, port=postgres_cluster.port, user=PG_USER, database=name
    )
    try:
        dump = str(await connection.fetch("SELECT * FROM card")) + str(
            await connection.fetch("SELECT * FROM pending_link")
        )
        await connection.execute("CHECKPOINT")  # the table files as they are now, on disk
        data = Path(await connection.fetchval("SHOW data_directory"))
        files = [
            data / await connection.fetchval(f"SELECT pg_relation_filepath('{table}')")
            for table in ("card", "pending_link")
        ]
    finally:
        await connection.close()
    content = b"".join(path.read_bytes() for path in files)
    assert content  # the rows are there, only the numbers are gone
    for cpr in _cprs():
        assert cpr not in dump
        for spelled in spellings(cpr):
            assert spelled not in content, cpr
