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
any process, and the bot's, so that every process's sends are spaced out together at the
total, however many there are and whenever they last beat. On SQLite there is one
process: nothing runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta

from bot.telegram.ratelimit import FairRateLimiter
from storage.store import Store

log = logging.getLogger(__name__)

BEAT = 2.0
LIVE_FOR = timedelta(seconds=10)
FLOOR = 3.0


async def share_send_budget(
    store: Store, limiter: FairRateLimiter, total: float, worker: str
) -> None:
    """Beat and rebalance until cancelled; then leave, so the others take the whole budget.

    Every send takes the bot's turn in the database (`storage.pace`), alone too: a process
    that joins, or one whose beat comes late, is spaced out with the others' sends from its
    first send, with no wait for anyone's next beat. (A process alone used to pace itself, so
    one joining waited 3 s for the others to beat, and a beat held up by a busy database let
    two processes each send the whole total.) A share is taken as it comes: shares in force
    that add up to more than the total for a beat (the others lower theirs at their own
    beats, up to `BEAT` apart) only queue a few turns ahead. A process starts at `FLOOR`.
    """
    senders = 1
    limiter.per_second = min(FLOOR, total)
    limiter.shared = store.pace  # each chat's turns, the bot's, and Telegram's pauses
    limiter.shared_rate = total
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
                limiter.per_second = share
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
