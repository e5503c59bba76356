"""Schema migrations without an alembic.ini: the `Config` is built here, in code."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from storage.engine import create_engine

MIGRATIONS = Path(__file__).with_name("migrations")


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


async def database_revision(database_url: str) -> str | None:
    """The revision the database at `database_url` is at (None: not migrated)."""
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
    """Tables that revisions applied between `before` and `after` removed data from."""
    if before is None or after is None or before == after:
        return []  # a new database holds nothing to scrub; a downgrade removes no data
    script = ScriptDirectory.from_config(config)
    tables: list[str] = []
    for applied in script.iterate_revisions(after, before):
        for table in getattr(applied.module, "SCRUB_TABLES", ()):
            if table not in tables:
                tables.append(table)
    return tables


async def _scrub(engine: AsyncEngine, tables: list[str]) -> None:
    """Rewrite the files, so that values a migration removed leave no bytes behind."""
    async with engine.connect() as connection:
        autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
        if engine.dialect.name == "sqlite":
            await autocommit.exec_driver_sql("VACUUM")
            await autocommit.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        elif engine.dialect.name == "postgresql":
            await autocommit.exec_driver_sql(f"VACUUM FULL {', '.join(tables)}")


async def _run(database_url: str, action: str, revision: str) -> None:
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            if engine.dialect.name == "postgresql":
                # Held until this transaction ends: a second process waits here, then finds
                # the schema at head and has nothing to do.
                await connection.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY}
                )

            def migrate(sync_connection: Connection) -> list[str]:
                config = alembic_config(database_url)
                config.attributes["connection"] = sync_connection
                before = current_revision(sync_connection)
                if action == "upgrade":
                    command.upgrade(config, revision)
                else:
                    command.downgrade(config, revision)
                after = current_revision(sync_connection)
                return _tables_to_scrub(config, before, after) if action == "upgrade" else []

            scrub = await connection.run_sync(migrate)
        if scrub:
            await _scrub(engine, scrub)
    finally:
        await engine.dispose()


async def upgrade(database_url: str, revision: str = "head") -> None:
    """Create or upgrade the schema (to the newest revision by default)."""
    await _run(database_url, "upgrade", revision)


async def downgrade(database_url: str, revision: str = "base") -> None:
    """Step the schema back (to empty by default); for tests and emergencies."""
    await _run(database_url, "downgrade", revision)
