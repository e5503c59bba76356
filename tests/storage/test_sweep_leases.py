"""The sweep's claims: the most urgent first, whole chats, and short leases kept by a
heartbeat, so a dead sweeper's cards pass to another while a live one keeps its own."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import date, timedelta

from storage.store import Store
from storage.sweeps import RANKS
from tests.fixtures.storage import FakeClock, connect

DAY = date(2026, 1, 20)
LEASE = timedelta(seconds=45)
OpenStore = Callable[..., AbstractAsyncContextManager[Store]]


async def _claim_pass(store: Store, worker: str) -> list[list[tuple[int, int]]]:
    """One pass's batches of one chat each, rank by rank as the sweep claims them."""
    batches = []
    for rank in range(RANKS):
        after = None
        while batch := await store.sweeps.claim_sweep_batch(
            DAY, worker, 1, LEASE, after=after, rank=rank
        ):
            batches.append([card.key for card, _ in batch])
            after = batch[-1][0].chat_id
    return batches


async def test_a_pass_claims_the_most_urgent_first_and_a_chat_whole(
    open_store: OpenStore,
) -> None:
    yesterday = DAY - timedelta(days=1)
    # chat -> what its card's last check saw: (first loan due, a hold ready)
    seen = {
        1: (DAY + timedelta(days=9), False),  # the rest
        2: (DAY + timedelta(days=1), False),  # due tomorrow
        3: (DAY, False),  # due today
        4: (DAY - timedelta(days=3), False),  # overdue
        5: (DAY + timedelta(days=9), True),  # a hold ready
        6: None,  # never checked: with the rest
    }
    async with open_store() as store:
        for chat_id in (*seen, 7):
            await connect(store, chat_id)
        # Chat 7: card 1 is due later, card 2 overdue; the chat goes out with the overdue.
        code = await store.create_pending_link(7, "token-2", None, {"uniqueId": "second"})
        assert await store.complete_link(7, code) is not None
        marks = {(chat_id, 1): mark for chat_id, mark in seen.items() if mark is not None}
        marks[(7, 1)] = (DAY + timedelta(days=20), False)
        marks[(7, 2)] = (DAY - timedelta(days=1), False)
        await store.sweeps.finish_sweeps(list(marks), yesterday, marks=marks)
        await store.sweeps.set_next_checks(dict.fromkeys([*marks, (6, 1)], DAY))

        batches = await _claim_pass(store, "w1")

    assert batches == [
        [(5, 1)],
        [(4, 1)],
        [(7, 1), (7, 2)],
        [(3, 1)],
        [(2, 1)],
        [(1, 1)],
        [(6, 1)],
    ]


async def test_the_last_rank_leaves_a_chat_with_an_urgent_card_to_its_rank(
    open_store: OpenStore,
) -> None:
    # The sweep claims the last rank beside the others: a family with a card overdue and one
    # with nothing due goes whole, with the overdue one, not split or at the last rank.
    async with open_store() as store:
        for chat_id in (1, 7):
            await connect(store, chat_id)
        code = await store.create_pending_link(7, "token-2", None, {"uniqueId": "second"})
        assert await store.complete_link(7, code) is not None
        marks = {
            (1, 1): (DAY + timedelta(days=9), False),
            (7, 1): (DAY + timedelta(days=20), False),
            (7, 2): (DAY - timedelta(days=1), False),
        }
        await store.sweeps.finish_sweeps(list(marks), DAY - timedelta(days=1), marks=marks)
        await store.sweeps.set_next_checks(dict.fromkeys(marks, DAY))

        last = await store.sweeps.claim_sweep_batch(DAY, "w1", 10, LEASE, rank=RANKS - 1)
        overdue = await store.sweeps.claim_sweep_batch(DAY, "w1", 10, LEASE, rank=1)

    assert [card.key for card, _ in last] == [(1, 1)]
    assert [card.key for card, _ in overdue] == [(7, 1), (7, 2)]


async def test_a_heartbeat_keeps_a_lease_and_a_dead_sweepers_cards_pass_on(
    open_store: OpenStore, clock: FakeClock
) -> None:
    async with open_store() as store:
        for chat_id in (1, 2, 3):
            await connect(store, chat_id)
        claimed = await store.sweeps.claim_sweep_batch(DAY, "alive", 2, LEASE)
        mine = [card.key for card, _ in claimed]
        assert mine == [(1, 1), (2, 1)]
        dead = await store.sweeps.claim_sweep_batch(DAY, "dead", 1, LEASE)
        assert [card.key for card, _ in dead] == [(3, 1)]
        assert not await store.sweeps.stranded(DAY)  # all three at work

        clock.advance(LEASE * 2 / 3)
        assert await store.sweeps.renew(mine, "alive", LEASE) == set(mine)
        clock.advance(LEASE * 2 / 3)  # past the first lease: the dead one's has run out
        assert await store.sweeps.stranded(DAY)
        taken = await store.sweeps.claim_sweep_batch(DAY, "other", 10, LEASE)
        assert [card.key for card, _ in taken] == [(3, 1)]  # only the dead one's card
        assert not await store.sweeps.stranded(DAY)
        # The dead one, should it wake, finds it no longer holds its card.
        assert await store.sweeps.renew([(3, 1)], "dead", LEASE) == set()

        # A failed card is released to a retry: not stranded, claimed again after the hold.
        await store.sweeps.release([(1, 1)], "alive", timedelta(minutes=15))
        clock.advance(LEASE * 2)  # nobody beat: every lease ran out, but the released card's
        taken = await store.sweeps.claim_sweep_batch(DAY, "other", 10, LEASE)
        assert [card.key for card, _ in taken] == [(2, 1), (3, 1)]
        assert await store.sweeps.renew([(2, 1)], "alive", LEASE) == set()
        await store.sweeps.finish_sweeps([(2, 1), (3, 1)], DAY)
        assert not await store.sweeps.stranded(DAY)
        clock.advance(timedelta(minutes=15))
        retried = await store.sweeps.claim_sweep_batch(DAY, "other", 10, LEASE)
        assert [card.key for card, _ in retried] == [(1, 1)]
