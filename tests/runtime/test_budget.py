"""Telegram's send budget shared by the processes of one bot (`bot.runtime.budget`), each store
here standing for one process on the same database."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any

from bot.runtime.budget import share_send_budget
from bot.telegram.ratelimit import FairRateLimiter
from storage.store import Store

TOTAL = 27.5  # TELEGRAM_SEND_RATE
OpenStore = Callable[..., AbstractAsyncContextManager[Store]]  # on a clock standing still
SENDS = 45  # each process's, to chats of its own: a second and a half of the bot's budget


class _Beats:
    """A process's senders, counting its beats answered; those after the first `on_time`
    never come back, as on a database too busy to answer (the process keeps its share)."""

    def __init__(self, senders: Any, on_time: int | None = None) -> None:
        self._senders = senders
        self._on_time = on_time
        self.answered = 0

    async def share(self, *args: Any, **kwargs: Any) -> tuple[float, int]:
        if self._on_time is not None and self.answered >= self._on_time:
            await asyncio.Future()  # cancelled at the end
        result: tuple[float, int] = await self._senders.share(*args, **kwargs)
        self.answered += 1
        return result

    async def leave(self, worker: str) -> None:
        await self._senders.leave(worker)


class _Turns:
    """A process's shared pace, noting when each turn it took falls (seconds from the store's
    stopped clock)."""

    def __init__(self, pace: Any, noted: list[float]) -> None:
        self._pace = pace
        self._noted = noted

    async def turn(
        self,
        key: str,
        emission: float,
        span: float,
        every: float | None = None,
        lead: float = 0,
        within: float | None = None,
    ) -> tuple[float, float, bool]:
        wait, paused, _ = await self._pace.turn(key, emission, span, every)  # exact: no lead
        self._noted.append(wait)
        turn = (0.0, paused, True)  # sent at once: the test need not wait
        return turn

    async def hold(self, key: str | None, seconds: float) -> None:
        await self._pace.hold(key, seconds)


async def _until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(30):  # a few beats (`BEAT`)
        while not condition():  # noqa: ASYNC110 (a beat has no event)
            await asyncio.sleep(0.05)


async def _sent(*_: Any, **__: Any) -> bool:
    return True


async def _send(limiter: FairRateLimiter, chat_id: int) -> None:
    await limiter.process_request(_sent, (), {}, "sendMessage", {"chat_id": chat_id}, None)


async def test_a_process_joining_is_spaced_out_with_one_whose_beat_is_late(
    open_store: OpenStore,
) -> None:
    # The first process beats alone, and its beats then stop coming back: it never hears of
    # the second. Both send at once: every turn either takes is the bot's, so together they
    # keep to the bot's total in every second (the store's clock stands still, so each turn
    # is its offset from now, exactly).
    turns: list[float] = []
    async with AsyncExitStack() as stack:
        first_store, second_store = [
            await stack.enter_async_context(open_store()) for _ in range(2)
        ]
        beats = [_Beats(first_store.senders, on_time=2), _Beats(second_store.senders)]
        first_store.senders, second_store.senders = beats  # type: ignore[assignment]
        first, second = FairRateLimiter(TOTAL), FairRateLimiter(TOTAL)
        beating = [
            asyncio.create_task(share_send_budget(first_store, first, TOTAL, "first")),
        ]
        await _until(lambda: beats[0].answered == 2)
        assert first.per_second == TOTAL  # alone, the whole budget
        beating.append(
            asyncio.create_task(share_send_budget(second_store, second, TOTAL, "second"))
        )
        await _until(lambda: beats[1].answered == 1)  # the two share
        for limiter in (first, second):
            limiter.shared = _Turns(limiter.shared, turns)
        await asyncio.gather(
            *(_send(first, 8400 + n) for n in range(SENDS)),
            *(_send(second, 8500 + n) for n in range(SENDS)),
        )
        for task in beating:
            task.cancel()
        await asyncio.gather(*beating, return_exceptions=True)

    assert len(turns) >= 2 * SENDS  # and any taken again, late (`LATE_TURN`)
    busiest = max(sum(1 for t in turns if start <= t < start + 1) for start in turns)
    assert busiest <= 30, sorted(turns)
