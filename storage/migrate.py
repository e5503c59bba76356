"""Schema migrations without an alembic.ini: the `Config` is built here, in code."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.engine import Connection

from storage.engine import create_engine, create_sqlite_engine, is_sqlite

MIGRATIONS = Path(__file__).with_name("migrations")

log = logging.getLogger(__name__)


class SchemaNewerThanCode(Exception):
    """The database is at a revision these migrations do not have: a newer release migrated
    it, and this (older) code cannot know what its tables mean."""

    def __init__(self, revision: str, head: str) -> None:
        super().__init__(
            f"the database is at schema revision {revision}, which this version of library-bot "
            f"does not know (it knows up to {head}): a newer release has migrated it. "
            "Run that release or a newer one; rolling the code back past a migration needs "
            "the backup taken before it"
        )
        self.revision = revision


def alembic_config(database_url: str | None = None) -> Config:
    """A `Config` pointing at the packaged migrations (and at `database_url`, if given)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if database_url is not None:
        # Passed as an attribute, not an option: configparser would choke on "%" in a URL.
        config.attributes["database_url"] = database_url
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def current_revision(connection: Connection) -> str | None:
    """The revision a database is at (None: empty), on a synchronous connection."""
    return MigrationContext.configure(connection).get_current_revision()


def _sqlite_revision(database_url: str) -> str | None:
    engine = create_sqlite_engine(database_url)
    try:
        with engine.connect() as connection:
            return current_revision(connection)
    finally:
        engine.dispose()


async def database_revision(database_url: str) -> str | None:
    """The revision the database at `database_url` is at (None: not migrated)."""
    if is_sqlite(database_url):
        return await asyncio.to_thread(_sqlite_revision, database_url)
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(current_revision)
    finally:
        await engine.dispose()


# Any fixed number: the key of the PostgreSQL advisory lock that serialises migrations, so
# that several processes starting at once on one database migrate one after the other.
MIGRATION_LOCK_KEY = 0x6C6962626F74  # "libbot"


def _tables_to_scrub(config: Config, before: str | None, after: str | None) -> list[str]:
    """Tables that revisions applied between `before` and `after` removed data from, by the
    names they have at `after` (a revision's `RENAMED_TABLES`: old name -> new)."""
    if before is None or after is None or before == after:
        return []  # a new database holds nothing to scrub; a downgrade removes no data
    script = ScriptDirectory.from_config(config)
    tables: list[str] = []
    # Oldest first, so that a later revision's renames apply to what earlier ones named.
    for applied in reversed(list(script.iterate_revisions(after, before))):
        renamed: dict[str, str] = getattr(applied.module, "RENAMED_TABLES", {})
        tables = [renamed.get(table, table) for table in tables]
        for table in getattr(applied.module, "SCRUB_TABLES", ()):
            if table not in tables:
                tables.append(table)
    return tables


def _migrate(
    sync_connection: Connection, database_url: str, action: str, revision: str
) -> list[str]:
    """Apply the revisions on `sync_connection`; the tables whose removed data needs a scrub."""
    config = alembic_config(database_url)
    config.attributes["connection"] = sync_connection
    before = current_revision(sync_connection)
    script = ScriptDirectory.from_config(config)
    if before is not None and before not in {known.revision for known in script.walk_revisions()}:
        raise SchemaNewerThanCode(before, head_revision())
    if action == "upgrade":
        command.upgrade(config, revision)
    else:
        command.downgrade(config, revision)
    after = current_revision(sync_connection)
    if after != before:
        log.info("database schema: %s from %s to %s", action, before or "empty", after or "empty")
    return _tables_to_scrub(config, before, after) if action == "upgrade" else []


def _run_sqlite(database_url: str, action: str, revision: str) -> None:
    """SQLite, synchronously (in a worker thread): one writer at a time is all it allows, and
    its busy timeout makes a second process wait for the first."""
    engine = create_sqlite_engine(database_url)
    try:
        with engine.begin() as connection:
            scrub = _migrate(connection, database_url, action, revision)
        if scrub:
            # Rewrite the file, so that values a migration removed leave no bytes behind.
            with engine.connect() as connection:
                autocommit = connection.execution_options(isolation_level="AUTOCOMMIT")
                autocommit.exec_driver_sql("VACUUM")
                autocommit.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        engine.dispose()


async def _run(database_url: str, action: str, revision: str) -> None:
    if is_sqlite(database_url):
        await asyncio.to_thread(_run_sqlite, database_url, action, revision)
        return
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            # Held until this transaction ends: a second process waits here, then finds the
            # schema at head and has nothing to do.
            await connection.execute(
                text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY}
            )
            scrub = await connection.run_sync(_migrate, database_url, action, revision)
        if scrub:
            # Rewrite the tables, so that values a migration removed leave no bytes behind.
            async with engine.connect() as connection:
                autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
                await autocommit.exec_driver_sql(f"VACUUM FULL {', '.join(scrub)}")
    finally:
        await engine.dispose()


async def upgrade(database_url: str, revision: str = "head") -> None:
    """Create or upgrade the schema (to the newest revision by default)."""
    await _run(database_url, "upgrade", revision)


async def downgrade(database_url: str, revision: str = "base") -> None:
    """Step the schema back (to empty by default); for tests and emergencies."""
    await _run(database_url, "downgrade", revision)
