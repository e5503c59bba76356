"""Calendar feeds in the store: a hash of the secret, sealed entries per card, only for chats
with a feed."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from storage.calendar import secret_hash
from storage.store import Store
from tests.fixtures.database import new_key
from tests.fixtures.storage import rows
from tests.storage.test_store import connect

OpenStore = Callable[..., AbstractAsyncContextManager[Store]]
ENTRIES = '[{"uid":"u","kind":"due","day":"2027-03-01","title":"Kongens fald","creator":""}]'


OTHER = '[{"uid":"v","kind":"due","day":"2027-03-02","title":"Mio, min Mio","creator":""}]'


async def family(store: Store, chat_id: int = 1) -> None:
    """Two cards in the chat: card 1 and card 2."""
    await connect(store, chat_id)
    code = await store.create_pending_link(chat_id, "second", None, {"uniqueId": "child"})
    await store.complete_link(chat_id, code)
    await store.set_label(chat_id, 2, "Sofie")


async def test_the_secret_is_only_a_hash_and_the_entries_are_sealed(store: Store) -> None:
    await family(store)
    secret = await store.calendar.create(1, {1: ENTRIES, 2: OTHER})
    dump = str(await rows(store, "SELECT * FROM calendar_feed"))
    dump += str(await rows(store, "SELECT * FROM account"))
    assert secret not in dump and "Kongens fald" not in dump and "Mio, min" not in dump
    assert secret_hash(secret) in dump
    feed = await store.calendar.open(secret)
    assert feed is not None and feed.chat_id == 1 and feed.seen_at is not None
    assert [(c.card, c.label, c.entries) for c in feed.cards] == [
        (1, None, ENTRIES),
        (2, "Sofie", OTHER),
    ]
    assert await store.calendar.open(secret[:-1] + "x") is None
    assert (await store.chat(1)).has_calendar


async def test_entries_are_kept_only_for_chats_with_a_feed(store: Store) -> None:
    await family(store, 1)
    await connect(store, 2)
    await store.calendar.create(1, {})
    assert await store.calendar.with_feeds([1, 2, 3]) == {1}
    await store.calendar.remember({(1, 2): OTHER, (2, 1): ENTRIES})
    assert await store.calendar.entries_of(1, 2) == OTHER
    assert await store.calendar.entries_of(1, 1) is None
    assert await store.calendar.entries_of(2) is None
    assert await rows(store, "SELECT chat_id FROM calendar_feed") == [(1,)]
    assert not (await store.chat(2)).has_calendar


async def test_a_new_address_replaces_the_old_and_off_closes_it(store: Store) -> None:
    await family(store)
    first = await store.calendar.create(1, {1: ENTRIES})
    second = await store.calendar.create(1, {2: OTHER})
    assert await store.calendar.open(first) is None
    feed = await store.calendar.open(second)
    assert feed is not None and [c.entries for c in feed.cards] == [None, OTHER]
    assert await store.calendar.drop(1) is True
    assert await store.calendar.drop(1) is False
    assert await store.calendar.open(second) is None
    # Closed, the feed keeps nothing of the cards' loans.
    assert await rows(store, "SELECT feed_entries FROM account") == [(None,), (None,)]


async def test_the_feed_closes_with_the_last_card_and_with_forget(store: Store) -> None:
    await family(store)
    secret = await store.calendar.create(1, {1: ENTRIES, 2: OTHER})
    await store.remove_account(1, 1)
    feed = await store.calendar.open(secret)
    assert feed is not None and [c.card for c in feed.cards] == [2]
    await store.remove_account(1, 2)
    assert await store.calendar.open(secret) is None
    await family(store, 3)
    secret = await store.calendar.create(3, {1: ENTRIES})
    await store.forget_chat(3)
    assert await store.calendar.open(secret) is None


async def test_rotation_reseals_the_entries(open_store: OpenStore) -> None:
    old, new = new_key(), new_key()
    async with open_store([old]) as before:
        await family(before)
        secret = await before.calendar.create(1, {1: ENTRIES, 2: OTHER})
    async with open_store([new, old]) as during:
        await during.rotate_keys()
    async with open_store([new]) as after:
        feed = await after.calendar.open(secret)
        assert feed is not None and [c.entries for c in feed.cards] == [ENTRIES, OTHER]
