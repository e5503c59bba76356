"""Single use under concurrency, and sweepers that never share a patron."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import date, timedelta

from storage.store import Store

OpenStore = Callable[..., AbstractAsyncContextManager[Store]]


async def test_twenty_concurrent_claims_one_winner(open_store: OpenStore) -> None:
    async with open_store(use_clock=False) as first, open_store(use_clock=False) as second:
        [callback_id] = await first.callbacks.put_callbacks(1, [("order", {"pid": "p"})])
        claims = await asyncio.gather(
            *(
                (first if n % 2 else second).callbacks.claim_callback(callback_id, 1)
                for n in range(20)
            )
        )
    assert sum(claim is not None for claim in claims) == 1


async def test_concurrent_state_and_code_are_single_use(open_store: OpenStore) -> None:
    async with open_store(use_clock=False) as first, open_store(use_clock=False) as second:
        state = await first.logins.create_login_state(1)
        consumed = await asyncio.gather(
            *((first if n % 2 else second).logins.take_login_state(state) for n in range(10))
        )
        assert consumed.count((1, False)) == 1 and consumed.count(None) == 9
        code = await first.create_pending_link(1, "token", None, {})
        linked = await asyncio.gather(
            *((first if n % 2 else second).complete_link(1, code) for n in range(10))
        )
        assert sum(card is not None for card in linked) == 1
        assert await first.cards.count() == 1


async def test_two_sweepers_get_disjoint_batches_covering_everyone(
    open_store: OpenStore,
) -> None:
    day = date(2026, 1, 20)
    async with open_store(use_clock=False) as a, open_store(use_clock=False) as b:
        for chat_id in range(1, 81):
            code = await a.create_pending_link(chat_id, f"token-{chat_id}", None, {})
            await a.complete_link(chat_id, code)

        async def sweep(store: Store, worker: str) -> list[int]:
            seen: list[int] = []
            while batch := await store.sweeps.claim_sweep_batch(
                day, worker, 5, timedelta(minutes=5)
            ):
                for card, _settings in batch:
                    seen.append(card.chat_id)
                    await store.sweeps.finish_sweeps([card.key], day)
            return seen

        # Several sweepers per process, two processes' worth of stores, all at once.
        results = await asyncio.gather(*(sweep(a if n % 2 else b, f"worker-{n}") for n in range(6)))
    everyone = [chat_id for seen in results for chat_id in seen]
    assert sorted(everyone) == list(range(1, 81))  # each patron exactly once
