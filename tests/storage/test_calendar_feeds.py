"""Calendar feeds in the store: a hash of the secret, sealed entries per card, only for chats
with a feed."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import timedelta

from storage.calendar import secret_hash
from storage.store import Store
from tests.fixtures.database import new_key
from tests.fixtures.storage import FakeClock, connect, rows

OpenStore = Callable[..., AbstractAsyncContextManager[Store]]
ENTRIES = '[{"uid":"u","kind":"due","day":"2027-03-01","title":"Kongens fald","creator":""}]'


OTHER = '[{"uid":"v","kind":"due","day":"2027-03-02","title":"Mio, min Mio","creator":""}]'


async def family(store: Store, chat_id: int = 1) -> None:
    """Two cards in the chat: card 1 and card 2."""
    await connect(store, chat_id)
    code = await store.create_pending_link(chat_id, "second", None, {"uniqueId": "child"})
    await store.complete_link(chat_id, code)
    await store.cards.set_label(chat_id, 2, "Sofie")


async def test_the_secret_is_only_a_hash_and_the_entries_are_sealed(store: Store) -> None:
    await family(store)
    secret = await store.calendar.create(1, {1: ENTRIES, 2: OTHER})
    dump = str(await rows(store, "SELECT * FROM calendar_feed"))
    dump += str(await rows(store, "SELECT * FROM card"))
    assert secret not in dump and "Kongens fald" not in dump and "Mio, min" not in dump
    assert secret_hash(secret) in dump
    feed = await store.calendar.open(secret)
    assert feed is not None and feed.chat_id == 1 and feed.seen_at is not None
    assert [(c.number, c.label, c.entries) for c in feed.cards] == [
        (1, None, ENTRIES),
        (2, "Sofie", OTHER),
    ]
    wrong = secret[:-1] + ("y" if secret.endswith("x") else "x")  # one character off, always
    assert await store.calendar.open(wrong) is None
    assert (await store.chats.chat(1)).has_calendar


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
    assert not (await store.chats.chat(2)).has_calendar


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
    assert await rows(store, "SELECT feed_entries FROM card") == [(None,), (None,)]


async def test_the_feed_closes_with_the_last_card_and_with_forget(store: Store) -> None:
    await family(store)
    secret = await store.calendar.create(1, {1: ENTRIES, 2: OTHER})
    await store.remove_card(1, 1, logout=True)
    feed = await store.calendar.open(secret)
    assert feed is not None and [c.number for c in feed.cards] == [2]
    await store.remove_card(1, 2, logout=True)
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


async def test_a_lost_login_keeps_its_entries_until_the_same_card_logs_in(store: Store) -> None:
    await family(store)
    secret = await store.calendar.create(1, {1: ENTRIES, 2: OTHER})
    await store.remove_card(1, 2)  # Sofie's login refused: her entries stay, marked lost
    feed = await store.calendar.open(secret)
    assert feed is not None
    assert [(c.number, c.label, c.entries, c.lost_at is not None) for c in feed.cards] == [
        (1, None, ENTRIES, False),
        (2, "Sofie", OTHER, True),
    ]
    dump = str(await rows(store, "SELECT * FROM calendar_kept"))
    assert "Mio, min" not in dump and "child" not in dump  # sealed, and only a hash of the id
    # Sofie logs in again: her card takes the entries back, with nothing left marked lost.
    code = await store.create_pending_link(1, "third", None, {"uniqueId": "child"})
    linked = await store.complete_link(1, code)
    assert linked is not None and linked.card is not None
    feed = await store.calendar.open(secret)
    assert feed is not None
    assert sorted((c.entries, c.lost_at) for c in feed.cards) == [(ENTRIES, None), (OTHER, None)]
    assert await rows(store, "SELECT * FROM calendar_kept") == []


async def test_kept_entries_close_the_feed_after_30_days_without_a_login(
    open_store: OpenStore, clock: FakeClock
) -> None:
    async with open_store() as store:
        await _closes_after_30_days(store, clock)


async def _closes_after_30_days(store: Store, clock: FakeClock) -> None:
    await connect(store, 1)
    secret = await store.calendar.create(1, {1: ENTRIES})
    await store.remove_card(1, 1)  # expired: the last card, yet the feed stays open
    feed = await store.calendar.open(secret)
    assert feed is not None and [(c.entries, c.lost_at is not None) for c in feed.cards] == [
        (ENTRIES, True)
    ]
    clock.advance(timedelta(days=29))
    await store.purge_expired()
    assert await store.calendar.open(secret) is not None
    clock.advance(timedelta(days=1))
    assert await store.calendar.open(secret) is None  # closed at once, before the purge
    await store.purge_expired()
    assert await rows(store, "SELECT * FROM calendar_kept") == []
    assert await rows(store, "SELECT * FROM calendar_feed") == []


async def test_logout_forget_and_off_close_a_feed_with_kept_entries(store: Store) -> None:
    for chat_id in (1, 2, 3):
        await family(store, chat_id)
        await store.calendar.create(chat_id, {1: ENTRIES, 2: OTHER})
        await store.remove_card(chat_id, 2)  # refused: kept
    await store.remove_card(1, 1, logout=True)  # the last live card logs out
    await store.forget_chat(2)
    assert await store.calendar.drop(3) is True
    assert await rows(store, "SELECT * FROM calendar_kept") == []
    assert await rows(store, "SELECT * FROM calendar_feed") == []


async def test_rotation_reseals_kept_entries(open_store: OpenStore) -> None:
    old, new = new_key(), new_key()
    async with open_store([old]) as before:
        await family(before)
        secret = await before.calendar.create(1, {1: ENTRIES, 2: OTHER})
        await before.remove_card(1, 2)
    async with open_store([new, old]) as during:
        await during.rotate_keys()
    async with open_store([new]) as after:
        feed = await after.calendar.open(secret)
        assert feed is not None and [c.entries for c in feed.cards] == [ENTRIES, OTHER]
