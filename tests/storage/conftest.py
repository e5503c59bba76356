"""Helpers shared by the storage tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from storage.store import Store

START = datetime(2026, 1, 20, 8, 0, tzinfo=UTC)


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime = START) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def open_store(
    store_url: str, store_keys: list[bytes], clock: FakeClock
) -> Callable[..., AbstractAsyncContextManager[Store]]:
    """Open more `Store`s on the same database (default: the test's keys and fake clock)."""

    @asynccontextmanager
    async def opener(
        keys: list[bytes] | None = None, *, use_clock: bool = True
    ) -> AsyncIterator[Store]:
        store = await Store.open(
            store_url, store_keys if keys is None else keys, clock=clock if use_clock else None
        )
        try:
            yield store
        finally:
            await store.close()

    return opener


async def rows(store: Store, sql: str, **params: object) -> list[tuple[object, ...]]:
    return await store.database.run(
        lambda conn: [tuple(row) for row in conn.execute(text(sql), params).all()]
    )


async def reminder_states(store: Store, chat_id: int) -> dict[str, str]:
    """The chat's reminder ledger, key -> "intent" | "sent", as stored."""
    found = await rows(store, "SELECT key, state FROM reminder_log WHERE chat_id = :c", c=chat_id)
    return {str(key): str(state) for key, state in found}
