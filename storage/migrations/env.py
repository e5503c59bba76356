"""Alembic environment, async-aware.

`storage.migrate` hands over an open connection in `config.attributes["connection"]` (it runs
inside the caller's event loop). The plain `alembic` command line, given only a URL, gets its
own event loop here.
"""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

from storage.engine import create_engine
from storage.tables import metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",  # SQLite cannot ALTER much
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_with_own_engine(url: str) -> None:
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_run)
            await connection.commit()
    finally:
        await engine.dispose()


def _main() -> None:
    config = context.config
    connection = config.attributes.get("connection")
    if isinstance(connection, Connection):
        _run(connection)
        return
    url = config.attributes.get("database_url") or config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no database URL given to the migrations")
    if context.is_offline_mode():
        context.configure(url=url, target_metadata=metadata, literal_binds=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    asyncio.run(_run_with_own_engine(url))


_main()
