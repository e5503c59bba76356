"""PostgreSQL 15: the connect journey, a reminder sweep, the migrations and `library-bot migrate`.

Every test here runs on the throwaway cluster that `tests/fixtures/database.py` starts.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import sqlalchemy as sa
from alembic.script import ScriptDirectory
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection
from telegram import Bot

from bot.jobs.sweep import sweep
from bot.library.client import LibraryClient
from bot.services import Services
from bot.telegram.deliver import TelegramDeliverer
from storage.crypto import TokenCipher, key_id
from storage.engine import create_engine
from storage.migrate import alembic_config, database_revision, head_revision, upgrade
from storage.store import Store
from tests.fixtures.bot import BotHarness
from tests.fixtures.database import PostgresCluster, key_text
from tests.fixtures.patrons import JONAS, KAREN, OLE
from tests.fixtures.telegram import TEST_BOT_TOKEN
from tests.runtime.conftest import connect_directly, make_settings

pytestmark = pytest.mark.postgres

CHAT = 7401
KEY = secrets.token_bytes(32)
NOW = datetime.now(UTC).replace(microsecond=0)
ROOT = Path(__file__).resolve().parents[2]

# --- the journey and the sweep ----------------------------------------------------------------


async def test_connect_journey_on_postgres(bot_pg: BotHarness) -> None:
    assert bot_pg.settings.DATABASE_URL.startswith("postgresql+asyncpg://")
    await bot_pg.connect(CHAT, KAREN)
    loans = await bot_pg.send(CHAT, "/loans")
    assert "Kongens fald" in loans.text
    card = await bot_pg.store.cards.get(CHAT)
    assert card is not None and card.unique_id
    # At rest the token is sealed, never the plain value.
    url = make_url(bot_pg.settings.DATABASE_URL)
    connection = await asyncpg.connect(
        host=url.host, port=url.port, user=url.username, database=url.database
    )
    try:
        stored = await connection.fetchval("SELECT token FROM card WHERE chat_id = $1", CHAT)
    finally:
        await connection.close()
    assert card.token not in stored
    logout = await bot_pg.send(CHAT, "/logout")
    assert logout.text
    assert await bot_pg.store.cards.get(CHAT) is None


async def test_reminder_sweep_on_postgres(
    postgres_url: str, library_sandbox: Any, telegram: Any
) -> None:
    settings = make_settings(telegram, library_sandbox, postgres_url, SWEEP_CONCURRENCY=4)
    store = await Store.open(postgres_url, settings.token_keys)
    library = LibraryClient.from_settings(settings)
    try:
        for chat_id, patron in ((7411, KAREN), (7412, JONAS), (7413, OLE)):
            await connect_directly(store, library_sandbox, telegram, chat_id, patron)
        async with Bot(TEST_BOT_TOKEN, base_url=f"{telegram.url}/bot") as bot:
            kwargs: dict[str, Any] = {
                "store": store,
                "library": library,
                "deliverer": TelegramDeliverer(bot, Services(settings, store, library)),
                "settings": settings,
                "today": library_sandbox.today,
            }
            first = await sweep(**kwargs)
            again = await sweep(**kwargs)
    finally:
        await library.aclose()
        await store.close()
    assert (first.patrons, first.messages) == (3, 2)
    assert first.reminders > 2 and not first.failures
    assert (again.messages, again.reminders) == (0, 0)  # exactly once
    assert len(telegram.sent(7411)) == 1 and len(telegram.sent(7412)) == 1
    assert telegram.sent(7413) == []
    assert "Kongens fald" in telegram.sent(7411)[0].text


# --- migrations -------------------------------------------------------------------------------

Seed = Callable[[AsyncConnection], Awaitable[None]]


async def _names(conn: AsyncConnection) -> dict[str, str]:
    """What the schema a seed runs at calls the cards' table, a card's number and why a chat's
    last card ended: 0019 renamed them (`account`, `card`, `account_ended`). Seeds chain, so an
    older revision's rows are put at newer revisions too."""
    tables = await conn.run_sync(lambda sync: sa.inspect(sync).get_table_names())
    if "card" in tables:
        return {"cards": "card", "number": "number", "ended": "card_ended"}
    return {"cards": "account", "number": "card", "ended": "account_ended"}


async def _sql(conn: AsyncConnection, statement: str, **values: Any) -> None:
    """Run a seed's statement, `{cards}`, `{number}` and `{ended}` named as its schema does."""
    await conn.execute(sa.text(statement.format(**await _names(conn))), values)


async def _seed_0001(conn: AsyncConnection) -> None:
    """Representative rows of every table of revision 0001."""
    await _seed_rows(conn)


async def _seed_0003(conn: AsyncConnection) -> None:
    """The same patrons once the userinfo JSON is gone: identity in columns of its own."""
    await _seed_rows(conn)


async def _seed_rows(conn: AsyncConnection) -> None:
    """The representative rows, each with the columns its table has at this revision."""
    cipher = TokenCipher([KEY])
    names = await _names(conn)
    meta = sa.MetaData()
    await conn.run_sync(meta.reflect)

    async def put(name: str, rows: list[dict[str, Any]]) -> None:
        table = meta.tables[name]
        await conn.execute(
            table.insert(), [{k: v for k, v in row.items() if k in table.c} for row in rows]
        )

    await put(
        "chat",
        [
            {
                "chat_id": 1,
                "language": "en",
                "reminders_enabled": True,
                "reminder_days": "5,1",
                "pickup_branch": "DK-710104",
                names["ended"]: None,
                "active": True,
                "created_at": NOW,
                "updated_at": NOW,
            },
            {
                "chat_id": 2,
                "language": None,
                "reminders_enabled": False,
                "reminder_days": None,
                "pickup_branch": None,
                names["ended"]: "logged_out",  # from 0004 on: it logged its card out
                "active": False,
                "created_at": NOW,
                "updated_at": NOW,
            },
        ],
    )
    await put(
        "login_state",
        [{"state_hash": "a" * 64, "chat_id": 1, "expires_at": NOW + timedelta(minutes=10)}],
    )
    await put(
        "pending_link",
        [
            {
                "code_hash": "b" * 64,
                "chat_id": 1,
                "token": cipher.encrypt("pending-token", 1),
                "token_expires_at": None,
                "attributes": {"uniqueId": "u-1"},
                "unique_id": "u-1",
                "expires_at": NOW + timedelta(minutes=10),
            }
        ],
    )
    await put(
        names["cards"],
        [
            {
                "chat_id": 1,
                "token": cipher.encrypt("token-of-chat-1", 1),
                "key_id": key_id(KEY),
                "token_expires_at": NOW + timedelta(days=30),
                "unique_id": "u-1",
                "municipality": "101",
                "attributes": {"uniqueId": "u-1", "municipality": "101"},
                "connected_at": NOW,
                "expiry_warned": False,
                "swept_on": NOW.date() - timedelta(days=1),
                "lease_owner": None,
                "lease_until": None,
            }
        ],
    )
    await put(
        "callback_ref",
        [
            {
                "id": "cb1",
                "chat_id": 1,
                "action": "renew",
                "payload": {"loan_id": "L1", "title": "Kongens fald"},
                "created_at": NOW,
                "used_at": None,
                "user_id": 1,  # from 0002 on, a button names the user it was shown to
            }
        ],
    )
    await put(
        "reminder_log",
        [
            {
                "chat_id": 1,
                "key": "loan:L1:2026-01-13:3",
                "state": "sent",
                "created_at": NOW,
                "sent_at": NOW,
            }
        ],
    )


# Rows to seed at each revision; a new migration needs its predecessor here (the walk asks).
async def _seed_0004(conn: AsyncConnection) -> None:
    await _seed_0001(conn)
    meta = sa.MetaData()
    await conn.run_sync(meta.reflect)
    t = meta.tables
    await conn.execute(
        t["renewal_refusal"].insert(),
        [
            {
                "chat_id": 1,
                "loan_id": "NCIPMDAxOXwwMDAwMDMyNDg0fFJvc2VuLCBNaWNoYWVsfFNtdXR8fHw=",
                "due": "2026-01-13",
                "reason": "Renewal Not Allowed - Item Has Outstanding Requests",
                "refused_at": NOW,
            }
        ],
    )


async def _seed_0005(conn: AsyncConnection) -> None:
    """Revision 0004's rows, and a polling plan on one account."""
    await _seed_0004(conn)
    await _sql(conn, "UPDATE {cards} SET next_check = '2026-01-20' WHERE chat_id = 1")


async def _seed_0006(conn: AsyncConnection) -> None:
    """Revision 0005's rows, and a calendar feed (its entries sealed, as the store keeps them)."""
    await _seed_0005(conn)
    meta = sa.MetaData()
    await conn.run_sync(meta.reflect)
    await conn.execute(
        meta.tables["calendar_feed"].insert(),
        [
            {
                "chat_id": 1,
                "secret_hash": "0" * 64,
                "entries": "v1.kid.sealed",
                "seen_at": NOW,
                "created_at": NOW,
            }
        ],
    )


async def _seed_0007(conn: AsyncConnection) -> None:
    """Revision 0006's rows, notices chosen, and what they saw (a queue position, a fee)."""
    await _seed_0006(conn)
    await conn.execute(sa.text("UPDATE chat SET notices = 'queue,fees' WHERE chat_id = 1"))
    await conn.execute(
        sa.text("INSERT INTO notice_seen (chat_id, item, value) VALUES (1, 'queue:O1', '3')")
    )


async def _seed_0008(conn: AsyncConnection) -> None:
    """The representative rows with a family: chat 1 has a second card, labelled, with its own
    pick-up branch; what the notices saw is per card."""
    await _seed_rows(conn)
    await _sql(
        conn, "UPDATE {cards} SET pickup_branch = 'DK-710104', label = 'Karen' WHERE chat_id = 1"
    )
    await _sql(
        conn,
        "INSERT INTO {cards} (chat_id, {number}, token, key_id, unique_id, connected_at, "
        "expiry_warned, label, pickup_branch, fees_known) SELECT chat_id, 2, token, key_id, "
        "'u-child', connected_at, expiry_warned, 'Sofie', 'DK-714703', true FROM {cards} "
        "WHERE chat_id = 1",
    )
    await conn.execute(sa.text("UPDATE chat SET notices = 'queue,fees' WHERE chat_id = 1"))
    await _sql(
        conn,
        "INSERT INTO notice_seen (chat_id, {number}, item, value) VALUES (1, 1, 'queue:O1', '3')",
    )


async def _seed_0009(conn: AsyncConnection) -> None:
    """The family of 0008, each card with its identity."""
    await _seed_0008(conn)
    for card, identity in ((1, "aaaaBBBBcccc"), (2, "ddddEEEEffff")):
        await _sql(
            conn,
            "UPDATE {cards} SET card_id = :identity WHERE chat_id = 1 AND {number} = :card",
            identity=identity,
            card=card,
        )


async def _seed_0010(conn: AsyncConnection) -> None:
    """The family of 0009, and the entries kept for a third card whose login was lost."""
    await _seed_0009(conn)
    await _sql(
        conn,
        "INSERT INTO calendar_kept (chat_id, {number}, unique_hash, label, entries, lost_at) "
        "VALUES (1, 3, :digest, 'Emil', 'v1.kid.sealed', CURRENT_TIMESTAMP)",
        digest="0" * 64,
    )


async def _seed_0011(conn: AsyncConnection) -> None:
    """The family of 0010, whose reminders come at seven."""
    await _seed_0010(conn)
    await conn.execute(sa.text("UPDATE chat SET reminder_hour = 7 WHERE chat_id = 1"))


async def _seed_0012(conn: AsyncConnection) -> None:
    """The family of 0011, its first card last seen with a ready hold and a loan due."""
    await _seed_0011(conn)
    await _sql(
        conn,
        "UPDATE {cards} SET hold_ready = :ready, first_due = :due "
        "WHERE chat_id = 1 AND {number} = 1",
        ready=True,
        due=NOW.date(),
    )


async def _seed_0013(conn: AsyncConnection) -> None:
    """The family of 0012, and a process sending for the bot."""
    await _seed_0012(conn)
    await conn.execute(
        sa.text("INSERT INTO sender (worker, seen_at, demand) VALUES ('host:1', :at, 3)"),
        {"at": NOW},
    )


async def _seed_0014(conn: AsyncConnection) -> None:
    """The family of 0013, its first card waiting for a title at a branch."""
    await _seed_0013(conn)
    await _sql(
        conn,
        "INSERT INTO shelf_watch (chat_id, {number}, pid, branch, agency, title, created_at) "
        "VALUES (1, 1, '870970-basis:27247164', 'Nørrebro Bibliotek', 'DK-710100', "
        "'Den afrikanske farm', :at)",
        at=NOW,
    )


async def _seed_0015(conn: AsyncConnection) -> None:
    """The family of 0014 and a third card whose login lapsed: kept, without a token."""
    await _seed_0014(conn)
    await _sql(
        conn,
        "INSERT INTO {cards} (chat_id, {number}, unique_id, connected_at, expiry_warned, label, "
        "fees_known, lapsed_at) SELECT chat_id, 3, 'u-lapsed', connected_at, expiry_warned, "
        "'Emil', true, :at FROM {cards} WHERE chat_id = 1 AND {number} = 1",
        at=NOW,
    )


async def _seed_0016(conn: AsyncConnection) -> None:
    """The family of 0015, an update of its chat taken by a process."""
    await _seed_0015(conn)
    await conn.execute(
        sa.text(
            "INSERT INTO chat_turn (chat_id, update_id, worker, held_until) "
            "VALUES (1, 1000, 'host:1', :at)"
        ),
        {"at": NOW},
    )


async def _seed_0017(conn: AsyncConnection) -> None:
    """The family of 0016, a chat's turn to be sent to and a bot paused by Telegram."""
    await _seed_0016(conn)
    await conn.execute(
        sa.text("INSERT INTO send_pace (key, tat) VALUES ('1', 1800000000.5), ('*', 1800000001)")
    )


async def _seed_0018(conn: AsyncConnection) -> None:
    """The family of 0017, a process sweeping with a hold ready in hand."""
    await _seed_0017(conn)
    await conn.execute(
        sa.text("INSERT INTO sender (worker, seen_at, demand, rank) VALUES ('host:2', :at, 9, 0)"),
        {"at": NOW},
    )


async def _seed_0019(conn: AsyncConnection) -> None:
    """The family of 0018, which 0019 only renamed: its rows, under the names of a card."""
    await _seed_0018(conn)


SEEDS: dict[str, Seed] = {
    "0001": _seed_0001,
    "0002": _seed_0001,
    "0003": _seed_0003,
    "0004": _seed_0004,
    "0005": _seed_0005,
    "0006": _seed_0006,
    "0007": _seed_0007,
    "0008": _seed_0008,
    "0009": _seed_0009,
    "0010": _seed_0010,
    "0011": _seed_0011,
    "0012": _seed_0012,
    "0013": _seed_0013,
    "0014": _seed_0014,
    "0015": _seed_0015,
    "0016": _seed_0016,
    "0017": _seed_0017,
    "0018": _seed_0018,
    "0019": _seed_0019,
    "0020": _seed_0019,  # a new column, empty
    "0021": _seed_0019,  # a column made wider
}

Dump = dict[str, set[tuple[tuple[str, str], ...]]]  # table -> rows, as (column, repr) pairs

# What a revision only renamed: tables (old -> new), then columns by their table's new name.
# The walk compares an older row under the names it has after the revision.
RENAMED: dict[str, tuple[dict[str, str], dict[str, dict[str, str]]]] = {
    "0019": (
        {"account": "card"},
        {
            **{
                table: {"card": "number"}
                for table in (
                    "card",
                    "renewal_refusal",
                    "calendar_kept",
                    "notice_seen",
                    "shelf_watch",
                )
            },
            "chat": {"account_ended": "card_ended"},
        },
    ),
}


def _revisions() -> list[str]:
    script = ScriptDirectory.from_config(alembic_config())
    return [rev.revision for rev in reversed(list(script.walk_revisions("base", "heads")))]


async def _dump(url: str) -> Dump:
    """Every row of every table (but alembic's), as sorted (column, repr(value)) tuples."""
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            meta = sa.MetaData()
            await conn.run_sync(meta.reflect)
            found: Dump = {}
            for name, table in meta.tables.items():
                if name == "alembic_version":
                    continue
                rows = (await conn.execute(sa.select(table))).mappings().all()
                found[name] = {tuple(sorted((k, repr(v)) for k, v in row.items())) for row in rows}
            return found
    finally:
        await engine.dispose()


def _renamed(dump: Dump, revision: str) -> Dump:
    """The rows of `dump` under the names `revision` gave their tables and columns."""
    tables, columns = RENAMED.get(revision, ({}, {}))
    found: Dump = {}
    for old, rows in dump.items():
        table = tables.get(old, old)
        names = columns.get(table, {})
        found[table] = {
            tuple(sorted((names.get(name, name), value) for name, value in row)) for row in rows
        }
    return found


def _survived(
    before: set[tuple[tuple[str, str], ...]], after: set[tuple[tuple[str, str], ...]]
) -> bool:
    """Each row before is in `after`, compared on the columns the older row had that the
    table still has (a revision may drop a column on purpose: 0003 drops userinfo JSON)."""
    kept = {name for row in after for name, _ in row}
    for old in before:
        columns = {k: v for k, v in old if k in kept}
        if not any(all(dict(new).get(k) == v for k, v in columns.items()) for new in after):
            return False
    return True


async def _seed(url: str, revision: str) -> None:
    assert revision in SEEDS, f"add representative rows for revision {revision} to SEEDS"
    engine = create_engine(url)
    try:
        async with engine.begin() as conn:
            await SEEDS[revision](conn)
    finally:
        await engine.dispose()


@pytest.mark.parametrize("backend", ["postgres", "sqlite"])
async def test_every_revision_upgrades_with_data(
    backend: str, postgres_cluster: PostgresCluster, tmp_path: Path
) -> None:
    revisions = _revisions()
    assert revisions[-1] == head_revision()
    for index, revision in enumerate(revisions):
        if backend == "postgres":
            url = await postgres_cluster.new_database("m")
        else:
            url = f"sqlite+aiosqlite:///{tmp_path / f'walk{index}.db'}"
        previous = revisions[index - 1] if index else None
        before: Dump = {}
        if previous is not None:
            await upgrade(url, previous)
            await _seed(url, previous)
            before = await _dump(url)
        await upgrade(url, revision)
        assert await database_revision(url) == revision
        after = await _dump(url)
        for table, rows in _renamed(before, revision).items():
            assert table in after, f"{previous} -> {revision} dropped table {table}"
            assert _survived(rows, after[table]), f"{previous} -> {revision} lost rows of {table}"
        if revision in RENAMED:  # names only: every row is as it was, value for value
            assert after == _renamed(before, revision)
        if revision == "0008":  # what was the chat's moved onto its card 1
            [kept] = [dict(row) for row in after["account"] if ("chat_id", "1") in row]
            assert (kept["card"], kept["pickup_branch"]) == ("1", "'DK-710104'")
            assert kept["feed_entries"] == "'v1.kid.sealed'"

    # The head's seed must also be what the current code reads.
    url = (
        await postgres_cluster.new_database("m")
        if backend == "postgres"
        else f"sqlite+aiosqlite:///{tmp_path / 'head.db'}"
    )
    await upgrade(url)
    await _seed(url, revisions[-1])
    store = await Store.open(url, [KEY])
    try:
        assert await store.cards.count() == 2
        card = await store.cards.get(1)
        assert card is not None and card.token == "token-of-chat-1"
        assert (card.label, card.pickup_branch) == ("Karen", "DK-710104")
        family = await store.cards.of_chat(1)
        assert [(c.number, c.label, c.pickup_branch, c.fees_known) for c in family] == [
            (1, "Karen", "DK-710104", False),
            (2, "Sofie", "DK-714703", True),
        ]
        lapsed = await store.cards.get(1, 3, lapsed=True)
        assert lapsed is not None and lapsed.is_lapsed and lapsed.label == "Emil"
        chat = await store.chats.chat(1)
        assert (chat.language, chat.reminder_days) == ("en", (5, 1))
        assert (await store.chats.chat(2)).reminders_enabled is False
        assert (await store.chats.chat(2)).card_ended == "logged_out"
        assert chat.notices == frozenset({"queue", "fees"})
        assert await store.notices.seen(1) == {"queue:O1": "3"}
        assert await store.reminder_log.begin_reminders_many({1: ["loan:L1:2026-01-13:3"]}) == {
            1: {"loan:L1:2026-01-13:3": "sent"}
        }
        ref = await store.callbacks.callback("cb1", 1)
        assert ref is not None and ref.payload["loan_id"] == "L1"
    finally:
        await store.close()


async def test_migrate_command_on_postgres(
    postgres_cluster: PostgresCluster, tmp_path: Path
) -> None:
    url = await postgres_cluster.new_database("m")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "DATABASE_URL": url,
        "TOKEN_KEYS": key_text(KEY),
    }
    command = [sys.executable, "-m", "bot.cli", "migrate"]
    first = await asyncio.to_thread(
        subprocess.run,
        command,
        env={**env, "PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert first.returncode == 0, first.stderr
    assert f"revision {head_revision()}" in first.stdout
    assert await database_revision(url) == head_revision()
    again = await asyncio.to_thread(
        subprocess.run,
        command,
        env={**env, "PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert again.returncode == 0, again.stderr  # idempotent
    store = await Store.open(url, [KEY])
    try:
        assert await store.cards.count() == 0
        assert await store.ping()
    finally:
        await store.close()
