"""Telegram's send budget shared by the processes of one bot (`storage.senders`)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import timedelta

import pytest

from storage.senders import shares
from storage.store import Store
from tests.fixtures.storage import FakeClock

LIVE_FOR = timedelta(seconds=10)
OpenStore = Callable[..., AbstractAsyncContextManager[Store]]


def test_a_floor_each_and_the_rest_by_demand() -> None:
    # The whole total, however many send: their sends go at the bot's turns, spaced out
    # together (`storage.pace`); the shares only say whose ask.
    assert shares({"a": 0, "b": 0}, 30.0, 3.0) == {"a": 15.0, "b": 15.0}
    split = shares({"sweeping": 300, "idle": 0, "answering": 100}, 30.0, 3.0)
    assert split == {"sweeping": 3.0 + 15.75, "idle": 3.0, "answering": 3.0 + 5.25}
    assert sum(split.values()) == pytest.approx(30.0)
    # More processes than the floors fit: an even split.
    assert shares(dict.fromkeys("abcdefghijklmnop", 5), 30.0, 3.0)["a"] == 30.0 / 16
    assert shares({"alone": 5}, 30.0, 3.0) == {"alone": 30.0}


async def test_a_process_that_stops_beating_leaves_its_share(
    open_store: OpenStore, clock: FakeClock
) -> None:
    async with open_store() as store:
        assert await store.senders.share("a", 0, 30.0, floor=3.0, live_for=LIVE_FOR) == (30.0, 1)
        assert await store.senders.share("b", 0, 30.0, floor=3.0, live_for=LIVE_FOR) == (15.0, 2)
        clock.advance(LIVE_FOR / 2)
        assert await store.senders.share("a", 0, 30.0, floor=3.0, live_for=LIVE_FOR) == (15.0, 2)
        clock.advance(LIVE_FOR * 0.6)  # b has not beaten for longer than `live_for`
        assert await store.senders.share("a", 0, 30.0, floor=3.0, live_for=LIVE_FOR) == (30.0, 1)
        await store.senders.share("b", 0, 30.0, floor=3.0, live_for=LIVE_FOR)
        await store.senders.leave("b")  # a clean stop hands its share back at once
        assert await store.senders.share("a", 0, 30.0, floor=3.0, live_for=LIVE_FOR) == (30.0, 1)


def test_replies_are_served_before_the_sweep() -> None:
    # The sweeping process asks for everything; the other needs 9 a second for its replies:
    # its floor and 6 more, taken before the rest goes by demand.
    split = shares({"sweeping": 300, "answering": 0}, 30.0, 3.0, {"answering": 9.0})
    assert split == {"sweeping": 3.0 + 18.0, "answering": 3.0 + 6.0}
    # Replies beyond the whole budget take all but the floors.
    flood = shares({"sweeping": 300, "answering": 0}, 30.0, 3.0, {"answering": 100.0})
    assert flood == {"sweeping": 3.0, "answering": 27.0}


def test_the_most_urgent_digests_go_first_across_processes() -> None:
    # Two processes sweep: one holds a hold ready (rank 0), the other loans due tomorrow
    # (rank 3), with more waiting. The rest of the budget goes to the hold ready; the other
    # keeps its floor, so that its commands are answered at once.
    ranks: dict[str, int | None] = {"holds": 0, "tomorrow": 3, "idle": None}
    split = shares({"holds": 20, "tomorrow": 300, "idle": 0}, 30.0, 3.0, ranks=ranks)
    assert split == {"holds": 3.0 + 21.0, "tomorrow": 3.0, "idle": 3.0}
    # Of one rank, by demand; replies still go before either.
    even = shares({"a": 30, "b": 10, "c": 50}, 30.0, 3.0, {"c": 5.0}, {"a": 1, "b": 1, "c": 2})
    assert even == {"a": 3.0 + 14.25, "b": 3.0 + 4.75, "c": 3.0 + 2.0}


async def test_a_beat_carries_the_rank_it_holds(open_store: OpenStore) -> None:
    async with open_store() as store:
        beat = {"floor": 3.0, "live_for": LIVE_FOR}
        assert await store.senders.share("urgent", 10, 30.0, rank=1, **beat) == (30.0, 1)
        assert await store.senders.share("later", 100, 30.0, rank=4, **beat) == (3.0, 2)
        assert await store.senders.share("urgent", 10, 30.0, rank=1, **beat) == (27.0, 2)
        # The urgent ones sent: the budget goes to what is left.
        assert await store.senders.share("urgent", 0, 30.0, rank=None, **beat) == (3.0, 2)
        assert await store.senders.share("later", 100, 30.0, rank=4, **beat) == (27.0, 2)
