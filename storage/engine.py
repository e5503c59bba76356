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
    of the process (and Alembic) opens the same file. The file's folder is never made here:
    a mistyped path must not become a new, empty database (`check_database_url` says so).
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
            parsed = parsed.set(database=str(path))
    return parsed


class DatabaseUrlError(ValueError):
    """`DATABASE_URL` cannot work as written; the message says why without repeating the URL
    (it may carry a password)."""


SSL_MODES: Final = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
SUPPORTED: Final = "use sqlite:///path/to/file.db or postgresql://user@host/database"
# The files asyncpg opens, and from which sslmode on: the CA and the CRL verify the server
# (require and up); the client certificate and key are sent whenever TLS is tried.
_SSL_FILES: Final = {
    "sslrootcert": "require",
    "sslcrl": "require",
    "sslcert": "allow",
    "sslkey": "allow",
}


def check_database_url(url: str) -> None:
    """Raise `DatabaseUrlError` for a URL that could only fail later, or do harm: one that does
    not parse, a database other than SQLite or PostgreSQL, a bad `sslmode`, a TLS file that is
    not there, or an SQLite file in a folder that does not exist (it would silently be a new,
    empty database)."""
    try:
        parsed = normalize_url(url)
    except Exception:  # SQLAlchemy's ArgumentError, or a ValueError from a bad port
        raise DatabaseUrlError(f"not a database URL ({SUPPORTED})") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        _check_sqlite_folder(parsed)
    elif backend != "postgresql":
        raise DatabaseUrlError(f"{backend} databases are not supported ({SUPPORTED})")
    elif parsed.get_driver_name() != "asyncpg":
        raise DatabaseUrlError(
            f"the driver {parsed.get_driver_name()} is not supported: "
            "write postgresql://user@host/database (the bot uses asyncpg)"
        )
    else:
        _check_ssl_options(split_ssl_options(parsed)[1])


def _check_sqlite_folder(parsed: URL) -> None:
    database = parsed.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    folder = Path(database).parent
    if not folder.is_dir():
        raise DatabaseUrlError(
            f"the folder {folder} of the SQLite database does not exist "
            "(correct the path, or create the folder)"
        )


def _check_ssl_options(options: dict[str, str]) -> None:
    mode = options.get("sslmode", "prefer")
    if mode not in SSL_MODES:
        raise DatabaseUrlError(f"sslmode={mode} is not one of {', '.join(SSL_MODES)}")
    for name, from_mode in _SSL_FILES.items():
        path = options.get(name)
        if not path or SSL_MODES.index(mode) < SSL_MODES.index(from_mode):
            continue  # asyncpg does not open it in this mode
        if not Path(path).is_file():
            raise DatabaseUrlError(
                f"{name} {path} does not exist or is not a file (sslmode={mode} reads it)"
            )


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
