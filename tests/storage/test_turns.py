"""Each chat's turn shared by the processes of one bot (`storage.turns`)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import timedelta

from storage.store import Store
from tests.fixtures.storage import FakeClock

HOLD = timedelta(seconds=30)
CHAT, OTHER = 4401, 4402
OpenStore = Callable[..., AbstractAsyncContextManager[Store]]


async def test_a_chats_updates_go_in_order_and_other_chats_do_not_wait(
    open_store: OpenStore,
) -> None:
    async with open_store() as store:
        turns = store.turns
        assert await turns.take(CHAT, 11, "b", HOLD)  # b received the later update first
        assert await turns.take(CHAT, 10, "a", HOLD)
        assert await turns.take(OTHER, 12, "b", HOLD)
        assert await turns.is_next(CHAT, 10)
        assert not await turns.is_next(CHAT, 11)  # 10 is still at work on a
        assert await turns.is_next(OTHER, 12)
        await turns.hand_back([(CHAT, 11)], "a")  # not a's: nothing handed back
        await turns.hand_back([(CHAT, 10)], "a")
        assert await turns.is_next(CHAT, 11)


async def test_a_repeated_delivery_is_taken_once(open_store: OpenStore) -> None:
    async with open_store() as store:
        assert await store.turns.take(CHAT, 20, "a", HOLD)
        assert not await store.turns.take(CHAT, 20, "b", HOLD)
        assert not await store.turns.take(CHAT, 20, "a", HOLD)


async def test_a_dead_processs_turns_hold_its_chats_no_longer_than_they_are_held(
    open_store: OpenStore, clock: FakeClock
) -> None:
    async with open_store() as store:
        turns = store.turns
        assert await turns.take(CHAT, 30, "dead", HOLD)
        assert await turns.take(CHAT, 31, "live", HOLD)
        assert await turns.take(OTHER, 32, "live", HOLD)
        clock.advance(HOLD * 0.9)
        await turns.renew("live", HOLD)  # the live process beats; the dead one does not
        assert not await turns.is_next(CHAT, 31)
        clock.advance(HOLD * 0.2)
        assert await turns.is_next(CHAT, 31)  # the dead process's turn ran out
        assert await turns.take(CHAT, 30, "live", HOLD)  # Telegram's retry of it: taken over
        await turns.leave("live")  # a clean stop frees its chats at once
        assert await turns.take(OTHER, 32, "other", HOLD)
