"""The async engine: URL normalisation, SQLite pragmas, a PostgreSQL pool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

SQLITE_BUSY_TIMEOUT_MS = 15_000


def normalize_url(url: str) -> URL:
    """Accept the URL forms operators paste and pick the async driver for each.

    `postgres://` and `postgresql://` become asyncpg, `sqlite:///` becomes aiosqlite, and a
    relative SQLite path is resolved against the working directory now, so that every part
    of the process (and Alembic) opens the same file.
    """
    text = url.strip()
    for prefix in ("postgres://", "postgresql://"):
        if text.startswith(prefix):
            text = "postgresql+asyncpg://" + text[len(prefix) :]
    if text.startswith("sqlite://"):
        text = "sqlite+aiosqlite://" + text[len("sqlite://") :]
    parsed = make_url(text)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if database and database != ":memory:" and not database.startswith("file:"):
            path = Path(database).expanduser()
            if not path.is_absolute():
                path = Path.cwd() / path
            path.parent.mkdir(parents=True, exist_ok=True)
            parsed = parsed.set(database=str(path))
    return parsed


def sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # Set per connection: WAL lets readers run beside the single writer, and busy_timeout
    # makes concurrent writers queue instead of failing with "database is locked".
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    # Deleted rows (a forgotten chat, a logged-out token) are overwritten, not left in free
    # pages; some builds have this on already, others not.
    cursor.execute("PRAGMA secure_delete=ON")
    cursor.close()


def create_engine(url: str) -> AsyncEngine:
    """An `AsyncEngine` for `url` (SQLite via aiosqlite, PostgreSQL via asyncpg)."""
    parsed = normalize_url(url)
    if parsed.get_backend_name() == "sqlite":
        kwargs: dict[str, Any] = {}
        if parsed.database in (None, "", ":memory:"):
            # One shared connection, or every pooled connection sees its own empty database.
            kwargs["poolclass"] = StaticPool
        engine = create_async_engine(parsed, hide_parameters=True, **kwargs)
        event.listen(engine.sync_engine, "connect", sqlite_pragmas)
        return engine
    return create_async_engine(
        parsed,
        hide_parameters=True,  # tokens must not appear in error messages
        pool_size=10,
        max_overflow=10,
        pool_timeout=30,
        pool_pre_ping=True,
        pool_recycle=1800,
    )
