"""Calendar feeds in the store: a hash of the secret, sealed entries, only for chats with one."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from library_bot.storage.calendar import secret_hash
from library_bot.storage.store import Store
from tests.fixtures.database import new_key
from tests.storage.conftest import rows

OpenStore = Callable[..., AbstractAsyncContextManager[Store]]
ENTRIES = '[{"uid":"u","kind":"due","day":"2027-03-01","title":"Kongens fald","creator":""}]'


async def test_the_secret_is_only_a_hash_and_the_entries_are_sealed(store: Store) -> None:
    secret = await store.calendar.create(1, ENTRIES)
    dump = str(await rows(store, "SELECT * FROM calendar_feed"))
    assert secret not in dump and "Kongens fald" not in dump
    assert secret_hash(secret) in dump
    feed = await store.calendar.open(secret)
    assert feed is not None and feed.chat_id == 1 and feed.entries == ENTRIES
    assert await store.calendar.open(secret[:-1] + "x") is None
    assert (await store.chat(1)).has_calendar


async def test_entries_are_kept_only_for_chats_with_a_feed(store: Store) -> None:
    await store.calendar.create(1, None)
    assert await store.calendar.with_feeds([1, 2, 3]) == {1}
    await store.calendar.remember({1: ENTRIES, 2: ENTRIES})
    assert await store.calendar.entries_of(1) == ENTRIES
    assert await store.calendar.entries_of(2) is None
    assert await rows(store, "SELECT chat_id FROM calendar_feed") == [(1,)]
    assert not (await store.chat(2)).has_calendar


async def test_a_new_address_replaces_the_old_and_off_closes_it(store: Store) -> None:
    first = await store.calendar.create(1, ENTRIES)
    second = await store.calendar.create(1, ENTRIES)
    assert await store.calendar.open(first) is None
    assert await store.calendar.open(second) is not None
    assert await store.calendar.drop(1) is True
    assert await store.calendar.drop(1) is False
    assert await store.calendar.open(second) is None


async def test_forgetting_the_chat_closes_its_feed(store: Store) -> None:
    secret = await store.calendar.create(1, ENTRIES)
    await store.forget_chat(1)
    assert await store.calendar.open(secret) is None


async def test_rotation_reseals_the_entries(open_store: OpenStore) -> None:
    old, new = new_key(), new_key()
    async with open_store([old]) as before:
        secret = await before.calendar.create(1, ENTRIES)
    async with open_store([new, old]) as during:
        await during.rotate_keys()
    async with open_store([new]) as after:
        feed = await after.calendar.open(secret)
        assert feed is not None and feed.entries == ENTRIES
