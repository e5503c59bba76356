"""Schema migrations without an alembic.ini: the `Config` is built here, in code."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection

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


async def _run(database_url: str, action: str, revision: str) -> None:
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:

            def migrate(sync_connection: Connection) -> None:
                config = alembic_config(database_url)
                config.attributes["connection"] = sync_connection
                if action == "upgrade":
                    command.upgrade(config, revision)
                else:
                    command.downgrade(config, revision)

            await connection.run_sync(migrate)
    finally:
        await engine.dispose()


async def upgrade(database_url: str, revision: str = "head") -> None:
    """Create or upgrade the schema (to the newest revision by default)."""
    await _run(database_url, "upgrade", revision)


async def downgrade(database_url: str, revision: str = "base") -> None:
    """Step the schema back (to empty by default); for tests and emergencies."""
    await _run(database_url, "downgrade", revision)
