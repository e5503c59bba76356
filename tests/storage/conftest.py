"""Helpers shared by the storage tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import pytest

from storage.store import Store
from tests.fixtures.storage import FakeClock


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
