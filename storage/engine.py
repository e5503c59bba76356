"""The engines: URL normalisation, SQLite pragmas, a PostgreSQL pool.

SQLite is opened with the standard library's `sqlite3` (a synchronous engine: the store runs
it on a thread of its own, migrations in a worker thread), so aiosqlite is not needed at run
time. `sqlite+aiosqlite://` URLs, as the contract's default spells them, are still accepted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final
from urllib.parse import urlencode

import sqlalchemy
from sqlalchemy import event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

SQLITE_BUSY_TIMEOUT_MS = 15_000

# libpq's TLS options, as managed PostgreSQL services hand them out in the URL. asyncpg takes
# none of them as keyword arguments (SQLAlchemy would pass them so, and asyncpg would refuse);
# it reads them from a DSN, with libpq's meaning. So they travel to asyncpg in a DSN of their
# own and it builds the SSLContext: verify-ca/verify-full, a client certificate, a CRL.
LIBPQ_SSL_OPTIONS: Final = (
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "sslcrl",
    "sslpassword",
    "sslnegotiation",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
)


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


def split_ssl_options(url: URL) -> tuple[URL, dict[str, str]]:
    """`url` without the libpq TLS options, and those options (last value of each)."""
    options: dict[str, str] = {}
    for name in LIBPQ_SSL_OPTIONS:
        value = url.query.get(name)
        if value is not None:
            options[name] = value if isinstance(value, str) else value[-1]
    return url.difference_update_query(LIBPQ_SSL_OPTIONS), options


def connection_problem(url: str, exc: BaseException) -> str:
    """One line saying why the database refused, naming `sslmode` when TLS is what failed."""
    reason = str(getattr(exc, "orig", None) or exc).splitlines()[0] or type(exc).__name__
    try:
        _, options = split_ssl_options(normalize_url(url))
    except Exception:  # an unparsable URL: the reason itself says enough
        return reason
    if "ssl" in reason.lower() or "certificate" in reason.lower():
        mode = options.get("sslmode", "prefer (the default)")
        return (
            f"{reason} (DATABASE_URL sslmode={mode}: "
            "check that the server offers TLS, and sslrootcert, sslcert, sslkey)"
        )
    return reason


def is_sqlite(url: str) -> bool:
    return normalize_url(url).get_backend_name() == "sqlite"


def create_sqlite_engine(url: str) -> Engine:
    """A synchronous engine on the SQLite file of `url` (standard `sqlite3`, our pragmas)."""
    parsed = normalize_url(url)
    memory = parsed.database in (None, "", ":memory:")
    engine = sqlalchemy.create_engine(
        parsed.set(drivername="sqlite+pysqlite"),
        hide_parameters=True,
        # One shared connection, or every pooled connection sees its own empty database.
        poolclass=StaticPool if memory else None,
    )
    event.listen(engine, "connect", sqlite_pragmas)
    return engine


def create_engine(url: str) -> AsyncEngine:
    """An `AsyncEngine` for `url`: PostgreSQL via asyncpg, for the store and migrations.

    On SQLite it needs aiosqlite, which only the tests install (they look into a database
    the way the PostgreSQL tests do); the package itself opens SQLite with
    `create_sqlite_engine`.
    """
    parsed = normalize_url(url)
    if parsed.get_backend_name() == "sqlite":
        kwargs: dict[str, Any] = {}
        if parsed.database in (None, "", ":memory:"):
            # One shared connection, or every pooled connection sees its own empty database.
            kwargs["poolclass"] = StaticPool
        engine = create_async_engine(parsed, hide_parameters=True, **kwargs)
        event.listen(engine.sync_engine, "connect", sqlite_pragmas)
        return engine
    parsed, ssl_options = split_ssl_options(parsed)
    connect_args: dict[str, Any] = {}
    if ssl_options:
        # Host, user and the rest come as keyword arguments and win over the DSN's (empty) ones.
        connect_args["dsn"] = "postgresql://?" + urlencode(ssl_options)
    return create_async_engine(
        parsed,
        connect_args=connect_args,
        hide_parameters=True,  # tokens must not appear in error messages
        pool_size=10,
        max_overflow=10,
        pool_timeout=30,
        pool_pre_ping=True,
        pool_recycle=1800,
    )
