"""Telegram's limits shared by the processes on one PostgreSQL (`storage.senders`,
`storage.pace`).

Every `BEAT` each process reports its demand and paces its sends to its share of
`TELEGRAM_SEND_RATE`, the bot's total: no per-process rate to divide by hand. A process with
nothing queued keeps `FLOOR` a second, so its commands are answered at once; replies to chats
beyond that are served from the total before anyone's sweep, and the rest goes to the processes
sending the sweep's most urgent digests (a hold ready, then loans overdue, due today, due
tomorrow: `background_sends`' rank), so that the order holds across them. One that dies
drops out after `LIVE_FOR`.

The shares say which process's sends ask for turns, and how often; the time each send goes is
its turn in the database (`storage.pace`): its chat's, since one chat's sends may come from
any process, and with others, the bot's, so that every process's sends are spaced out
together at `shared_total`. On SQLite there is one process: nothing runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta

from bot.telegram.ratelimit import FairRateLimiter
from storage.senders import shared_total
from storage.store import Store

log = logging.getLogger(__name__)

BEAT = 2.0
LIVE_FOR = timedelta(seconds=10)
FLOOR = 3.0
# A process joining others sends nothing for this long: until each of them has beaten since,
# and lowered its share to make room (their beats are `BEAT` apart, give or take a query).
JOIN_WAIT = 1.5 * BEAT


async def share_send_budget(
    store: Store, limiter: FairRateLimiter, total: float, worker: str
) -> None:
    """Beat and rebalance until cancelled; then leave, so the others take the whole budget.

    With others, a share is taken as it comes: their sends all go at the bot's turns
    (`storage.pace`), so shares in force that add up to more than the total for a beat (the
    others lower theirs at their own beats, up to `BEAT` apart) only queue a few turns ahead.
    Raising a share only as far as the previous beat's, as a process alone still does, took
    the lower of two noisy shares at every beat: with four processes 18.7 a second and a
    median reply of 0.34 s, against 21.7 and 0.07 s (bench.scale_pg, 6,000 cards, in turn).
    A process starts at `FLOOR`, and when others are sending already, only after
    `JOIN_WAIT`: until then their shares take the whole total.
    """
    senders = 1
    first = True
    previous = min(FLOOR, total)
    limiter.per_second = previous
    limiter.shared = store.pace  # each chat's turns, the bot's, and Telegram's pauses
    try:
        while True:
            replies = limiter.take_urgent() + limiter.urgent_waiting
            demand = limiter.take_granted() + limiter.waiting - replies
            rank = limiter.take_rank()
            try:
                share, count = await store.senders.share(
                    worker,
                    demand,
                    total,
                    floor=FLOOR,
                    live_for=LIVE_FOR,
                    urgent=replies / BEAT,
                    rank=rank,
                )
            except Exception:  # keep the last share; the next beat tries again
                log.warning("send budget: could not reach the database", exc_info=True)
            else:
                if first and count > 1:
                    limiter.hold(JOIN_WAIT)
                first = False
                limiter.per_second = share if count > 1 else min(share, previous)
                previous = share
                # Alone, the process paces itself; with others, their sends take the bot's
                # turns, at what the shares add up to.
                limiter.shared_rate = shared_total(total, count) if count > 1 else 0.0
                if count != senders:
                    log.info("send budget: %s processes share %.1f a second", count, total)
                    senders = count
                with contextlib.suppress(Exception):  # the next beat prunes what this left
                    await store.pace.prune()
            await asyncio.sleep(BEAT)
    finally:
        try:
            await asyncio.shield(store.senders.leave(worker))
        except Exception:
            log.warning("send budget: could not leave", exc_info=True)
