"""Where the store's transactions run: one function, one transaction, one hand-off.

SQLite runs on one thread of our own with the standard `sqlite3` driver: a transaction is one
hand-off to that thread and back, where aiosqlite hands every statement, fetch and commit to
its thread separately (five or more hand-offs for a small transaction, each waking the event
loop). PostgreSQL runs on the async engine (asyncpg), the function inside `run_sync`.
Either way a transaction's statements are plain synchronous SQLAlchemy Core.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import sqlalchemy
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import StaticPool

from library_bot.storage.engine import create_engine, normalize_url, sqlite_pragmas

T = TypeVar("T")


class Database:
    """Run `work(connection)` as one transaction, committed when it returns."""

    def __init__(self, database_url: str) -> None:
        url = normalize_url(database_url)
        self.dialect = url.get_backend_name()
        self._async: AsyncEngine | None = None
        self._sync: Engine | None = None
        self._thread: ThreadPoolExecutor | None = None
        if self.dialect == "sqlite":
            memory = url.database in (None, "", ":memory:")
            self._sync = sqlalchemy.create_engine(
                url.set(drivername="sqlite+pysqlite"),
                hide_parameters=True,
                # One shared connection, or every pooled connection sees its own empty database.
                poolclass=StaticPool if memory else None,
            )
            event.listen(self._sync, "connect", sqlite_pragmas)
        else:
            self._async = create_engine(database_url)

    async def run(self, work: Callable[[Connection], T]) -> T:
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
        async with self._async.begin() as conn:
            return await conn.run_sync(work)

    async def dispose(self) -> None:
        if self._async is not None:
            await self._async.dispose()
        thread, self._thread = self._thread, None  # made again if the store is used again
        if self._sync is not None and thread is not None:
            await asyncio.get_running_loop().run_in_executor(thread, self._sync.dispose)
            thread.shutdown(wait=False)
