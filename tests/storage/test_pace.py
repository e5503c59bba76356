"""Telegram's per-chat and per-group limits, and its pauses, shared by the processes of one bot
through the database (`storage.pace`); each store here stands for one process."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from datetime import timedelta

import pytest

from storage.store import Store
from tests.fixtures.storage import FakeClock, rows

OpenStore = Callable[..., AbstractAsyncContextManager[Store]]
# A private chat's bucket as the bot's limiter has it: 20 at once, then one a second.
EMISSION, SPAN = 1.0, 19.0


async def test_a_chat_has_one_burst_between_all_processes(
    open_store: OpenStore, clock: FakeClock
) -> None:
    async with AsyncExitStack() as stack:
        stores = [await stack.enter_async_context(open_store()) for _ in range(3)]
        waits = [(await stores[n % 3].pace.turn("7601", EMISSION, SPAN))[0] for n in range(23)]
        # 20 at once, whichever process sends them, then each a second after the last.
        assert waits == [0.0] * 20 + [1.0, 2.0, 3.0]
        assert await stores[0].pace.turn("7602", EMISSION, SPAN) == (0.0, 0.0, True)  # another chat
        clock.advance(timedelta(seconds=3))
        assert await stores[1].pace.turn("7601", EMISSION, SPAN) == (1.0, 0.0, True)


async def test_the_bots_turns_space_every_processs_sends_out(
    open_store: OpenStore, clock: FakeClock
) -> None:
    # Ten chats, each with a burst to spare, sent to by three processes: the bot's turns (one
    # every 0.1 s here) set the time of each send, whichever process takes it.
    async with AsyncExitStack() as stack:
        stores = [await stack.enter_async_context(open_store()) for _ in range(3)]
        waits = [
            (await stores[n % 3].pace.turn(str(7700 + n), EMISSION, SPAN, 0.1))[0]
            for n in range(10)
        ]
        assert waits == pytest.approx([n / 10 for n in range(10)])
        # Asked with a lead (the asker's round trip): not before it, and the next from then.
        led = [await stores[0].pace.turn(str(7710 + n), EMISSION, SPAN, 0.1, 1.5) for n in range(2)]
        assert [turn.wait for turn in led] == pytest.approx([1.5, 1.6])
        # A pause: the next turns come after it, spaced out from its end, not all at once.
        await stores[0].pace.hold(None, 2.0)
        after = [
            (await stores[n % 3].pace.turn(str(7800 + n), EMISSION, SPAN, 0.1)) for n in range(3)
        ]
        assert [turn.wait for turn in after] == pytest.approx([2.0, 2.1, 2.2])
        assert {turn.paused for turn in after} == {2.0}
        # A chat's own turn later than the bot's: the bot's is taken from then on, and the
        # next chat's after it.
        clock.advance(timedelta(seconds=10))
        for _ in range(20):
            await stores[1].pace.turn("7900", EMISSION, SPAN)  # its burst spent
        wait = (await stores[2].pace.turn("7900", EMISSION, SPAN, 0.1)).wait
        assert wait == pytest.approx(1.0)
        assert (await stores[0].pace.turn("7901", EMISSION, SPAN, 0.1))[0] == pytest.approx(1.1)


async def test_no_background_turn_is_taken_while_the_bots_are_booked_too_far_ahead(
    open_store: OpenStore, clock: FakeClock
) -> None:
    # A reply takes the bot's next turn after every turn booked: what the sweep's digests may
    # book ahead (`within`) is what a reply may wait behind them.
    async with AsyncExitStack() as stack:
        stores = [await stack.enter_async_context(open_store()) for _ in range(2)]
        for n in range(10):  # the bot's turns booked to 1.0 s from now
            await stores[n % 2].pace.turn(str(7950 + n), EMISSION, SPAN, 0.1, within=1.0)
        refused = await stores[0].pace.turn("7960", EMISSION, SPAN, 0.1, within=0.5)
        assert not refused.taken and refused.wait == pytest.approx(0.5, abs=1e-3)
        store = stores[1]
        assert await rows(store, "SELECT key FROM send_pace WHERE key = '7960'") == []
        reply = await store.pace.turn("7961", EMISSION, SPAN, 0.1)
        assert reply.taken and reply.wait == pytest.approx(1.0, abs=1e-3)
        clock.advance(timedelta(seconds=0.6))
        taken = await stores[0].pace.turn("7960", EMISSION, SPAN, 0.1, within=0.5)
        assert taken.taken and taken.wait == pytest.approx(
            0.5, abs=1e-3
        )  # the turn after the reply's
        # A pause reaching past `within` holds them too.
        await store.pace.hold(None, 2.0)
        held = await store.pace.turn("7962", EMISSION, SPAN, 0.1, within=0.5)
        assert not held.taken and (held.wait, held.paused) == pytest.approx((1.5, 2.0), abs=1e-3)


@pytest.mark.postgres
async def test_turns_taken_at_once_by_three_processes_are_never_the_same(
    open_store: OpenStore,
) -> None:
    async with AsyncExitStack() as stack:
        stores = [await stack.enter_async_context(open_store()) for _ in range(3)]
        turns = await asyncio.gather(
            *(stores[n % 3].pace.turn("7601", EMISSION, SPAN) for n in range(60))
        )
    waits = sorted(turn.wait for turn in turns)
    assert waits == [0.0] * 20 + [float(n) for n in range(1, 41)]


async def test_a_pause_holds_every_process_and_a_groups_only_that_group(
    open_store: OpenStore, clock: FakeClock
) -> None:
    async with open_store() as first, open_store() as second:
        await first.pace.hold(None, 3.5)  # Telegram's 429 to the first process
        assert await second.pace.turn("7601", EMISSION, SPAN) == (0.0, 3.5, True)
        await first.pace.hold(None, 1.0)  # a shorter pause does not end the longer one
        clock.advance(timedelta(seconds=1))
        assert await second.pace.turn("7602", EMISSION, SPAN) == (0.0, 2.5, True)
        clock.advance(timedelta(seconds=3))
        assert await second.pace.turn("7603", EMISSION, SPAN) == (0.0, 0.0, True)

        # A group's 429: that group waits (its whole burst spent), everyone else goes on.
        group_emission, group_span = 60 / 9, 9 * 60 / 9
        await first.pace.hold("-100777", 59 + group_span)
        assert await second.pace.turn("-100777", group_emission, group_span) == (59.0, 0.0, True)
        assert await second.pace.turn("7604", EMISSION, SPAN) == (0.0, 0.0, True)


async def test_drained_buckets_are_pruned(open_store: OpenStore, clock: FakeClock) -> None:
    async with open_store() as store:
        for chat in range(5):
            await store.pace.turn(str(chat), EMISSION, SPAN)
        for _ in range(3):
            await store.pace.turn("busy", EMISSION, SPAN)
        clock.advance(timedelta(seconds=2))
        assert await store.pace.prune() == 5  # the chats sent once are as good as new
        assert await rows(store, "SELECT key FROM send_pace") == [("busy",)]
        assert await store.pace.turn("0", EMISSION, SPAN) == (0.0, 0.0, True)
