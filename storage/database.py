"""Where the store's transactions run: one function, one transaction, one hand-off.

SQLite runs on one thread of our own with the standard `sqlite3` driver: a transaction is one
hand-off to that thread and back, where aiosqlite hands every statement, fetch and commit to
its thread separately (five or more hand-offs for a small transaction, each waking the event
loop). PostgreSQL runs on the async engine (asyncpg), the function inside `run_sync`.
Either way a transaction's statements are plain synchronous SQLAlchemy Core.
"""

from __future__ import annotations

import asyncio
import logging
import random
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import Select, Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql.expression import Executable

from storage.engine import create_engine, create_sqlite_engine, normalize_url

log = logging.getLogger(__name__)

T = TypeVar("T")
# SQLSTATEs of a server that cannot be reached or is going away: a connection exception (class
# 08), an administrator's or a crash's shutdown, a server starting up or shutting down (57P01-3),
# too many connections (53300).
_UNAVAILABLE_STATES = ("08", "57P01", "57P02", "57P03", "53300")
# SQLite's words for a file it cannot use for now (the driver has no codes of its own to tell).
_SQLITE_UNAVAILABLE = ("database is locked", "unable to open", "disk i/o error", "is full")
# The most values one `IN (...)` binds: each is a parameter, and every driver caps how many a
# statement may have; larger batches go in several statements.
IN_CHUNK = 500


def is_unavailable(exc: BaseException) -> bool:
    """Whether `exc` says the database cannot be reached or used for now (refused, dropped,
    shutting down, locked), rather than that a statement of ours was wrong."""
    seen: BaseException | None = exc
    for _ in range(4):  # the error, what SQLAlchemy wrapped, and what caused those
        if seen is None:
            return False
        if isinstance(seen, OSError | TimeoutError | PoolTimeout):
            return True
        if isinstance(seen, DBAPIError) and seen.connection_invalidated:
            return True
        state = str(getattr(seen, "sqlstate", None) or getattr(seen, "pgcode", None) or "")
        if state.startswith(_UNAVAILABLE_STATES):
            return True
        if isinstance(seen, sqlite3.OperationalError):
            return any(words in str(seen).lower() for words in _SQLITE_UNAVAILABLE)
        seen = getattr(seen, "orig", None) or seen.__cause__
    return False


def first_line(exc: BaseException) -> str:
    """The driver's own first line of `exc` (SQLAlchemy's adds the statement on later lines)."""
    reason = str(getattr(exc, "orig", None) or exc).strip()
    return reason.splitlines()[0] if reason else type(exc).__name__


class Availability:
    """Whether the database answers, told once when it stops and once when it answers again:
    while it is away every update and job fails alike, and one line says so."""

    def __init__(self) -> None:
        self.down_since: float | None = None

    @property
    def down(self) -> bool:
        return self.down_since is not None

    def failed(self, exc: BaseException) -> None:
        if self.down_since is None and is_unavailable(exc):
            self.down_since = time.monotonic()
            log.warning("database unavailable: %s", first_line(exc))

    def answered(self) -> None:
        if self.down_since is not None:
            away = time.monotonic() - self.down_since
            self.down_since = None
            log.info("database available again after %.0f s", away)


# PostgreSQL aborts one of two transactions waiting for each other's rows (deadlock), or one it
# cannot serialize; nothing of it was kept, so it runs again, as PostgreSQL's manual advises
# (13.6, "Deadlocks"), after a short random wait so that the two do not meet again.
RETRIED_STATES = frozenset({"40P01", "40001"})
TRANSACTION_ATTEMPTS = 3
RETRY_JITTER = 0.05


def _sqlstate(exc: DBAPIError) -> str | None:
    state = getattr(exc.orig, "sqlstate", None)
    return state if isinstance(state, str) else None


class Database:
    """Run `work(connection)` as one transaction, committed when it returns; `availability`
    follows whether the database answers. A transaction PostgreSQL aborted for a deadlock
    or a serialization failure is run again (`RETRIED_STATES`): `work` must only touch the
    database."""

    def __init__(self, database_url: str) -> None:
        url = normalize_url(database_url)
        self.dialect = url.get_backend_name()
        self._async: AsyncEngine | None = None
        self._sync: Engine | None = None
        self._thread: ThreadPoolExecutor | None = None
        self._inline_reads = False
        self._reader: Connection | None = None
        self.availability = Availability()
        if self.dialect == "sqlite":
            self._sync = create_sqlite_engine(database_url)
            self._inline_reads = url.database not in (None, "", ":memory:")
        else:
            self._async = create_engine(database_url)

    def insert(self, table: Table) -> postgresql.Insert | sqlite.Insert:
        """The dialect's own INSERT, for ON CONFLICT (both dialects spell it the same way)."""
        return postgresql.insert(table) if self.dialect == "postgresql" else sqlite.insert(table)

    async def run(self, work: Callable[[Connection], T]) -> T:
        try:
            done = await self._transaction(work)
        except Exception as exc:
            self.availability.failed(exc)
            raise
        self.availability.answered()
        return done

    async def _transaction(self, work: Callable[[Connection], T]) -> T:
        if self._sync is not None:
            engine = self._sync
            if self._thread is None:
                # One writer at a time is all SQLite allows; one thread keeps that order here.
                self._thread = ThreadPoolExecutor(1, thread_name_prefix="sqlite")

            def transaction() -> T:
                with engine.begin() as conn:
                    return work(conn)

            return await asyncio.get_running_loop().run_in_executor(self._thread, transaction)
        assert self._async is not None
        for attempt in range(1, TRANSACTION_ATTEMPTS + 1):
            try:
                async with self._async.begin() as conn:
                    return await conn.run_sync(work)
            except DBAPIError as exc:
                if attempt == TRANSACTION_ATTEMPTS or _sqlstate(exc) not in RETRIED_STATES:
                    raise
                log.info("database: transaction aborted (%s), running it again", _sqlstate(exc))
                await asyncio.sleep(random.uniform(0, RETRY_JITTER * attempt))
        raise AssertionError("unreachable")

    async def read(self, work: Callable[[Connection], T]) -> T:
        """`run` for a transaction that only reads. On a SQLite file it runs right here, on the
        event loop: WAL readers wait for no writer, the statements hold the GIL (so the loop
        waits for them on the thread all the same), and the hand-off would cost two wake-ups
        and more CPU than a small read. In-memory SQLite shares one connection with the
        writer's thread, and PostgreSQL reads like it writes: those go through `run`."""
        if self._sync is not None and self._inline_reads:
            try:
                reader = self._inline_reader(self._sync)
                with reader.begin():
                    done = work(reader)
            except Exception as exc:
                self.availability.failed(exc)
                raise
            self.availability.answered()
            return done
        return await self.run(work)

    async def fetch(
        self, statement: Select[Any], values: Mapping[str, Any]
    ) -> Sequence[Sequence[Any]]:
        """The rows of one SELECT, a module's constant, each in its columns' order: what
        every command reads. The same `Connection.execute` on every database, compiled once
        into SQLAlchemy's cache; on a SQLite file it runs on the event loop (`read`)."""
        return await self.read(lambda conn: conn.execute(statement, values).all())

    def _inline_reader(self, engine: Engine) -> Connection:
        """One connection kept for the loop's reads: a pool checkout and return cost about as
        much as a small statement. Idle between reads, it holds no snapshot."""
        reader = self._reader
        if reader is None or reader.closed:
            reader = self._reader = engine.connect()
        return reader

    async def truncate_log(self) -> bool:
        """On SQLite, copy the write-ahead log into the database file and truncate it, so
        that deleted rows (overwritten in the file by `secure_delete`) do not live on in old
        page images in `-wal`; False when a reader kept part of it (the next call or SQLite's
        own checkpoints finish it). PostgreSQL's WAL is the server's (docs/deployment.md)."""
        engine = self._sync
        if engine is None:
            return True

        def checkpoint() -> bool:
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                row = conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").first()
            return row is None or not row[0]

        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="sqlite")
        return await asyncio.get_running_loop().run_in_executor(self._thread, checkpoint)

    async def dispose(self) -> None:
        if self._async is not None:
            await self._async.dispose()
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()
        thread, self._thread = self._thread, None  # made again if the store is used again
        if self._sync is not None and thread is not None:
            await asyncio.get_running_loop().run_in_executor(thread, self._sync.dispose)
            thread.shutdown(wait=False)


class Repository:
    """One table's (or one concern's) statements. Each public async method is one transaction;
    the plain methods build statements that `Store` runs together with other tables' in one."""

    def __init__(self, database: Database, now: Callable[[], datetime]) -> None:
        self._run = database.run
        self._read = database.read
        self._fetch = database.fetch
        self._insert = database.insert
        self._now = now


def utc_clock(clock: Callable[[], datetime] | None) -> Callable[[], datetime]:
    """`clock` (default: the system's), checked to be aware and turned to UTC."""

    def now() -> datetime:
        if clock is None:
            return datetime.now(UTC)
        value = clock()
        if value.tzinfo is None:
            raise ValueError("the store's clock must return timezone-aware datetimes")
        return value.astimezone(UTC)

    return now


def chunks(items: Sequence[T]) -> Iterator[Sequence[T]]:
    """`items` in slices of `IN_CHUNK`."""
    for start in range(0, len(items), IN_CHUNK):
        yield items[start : start + IN_CHUNK]


def execute_all(conn: Connection, statements: Iterable[Executable]) -> list[int]:
    """Run the statements in order; the rows each one changed."""
    return [max(conn.execute(statement).rowcount, 0) for statement in statements]
