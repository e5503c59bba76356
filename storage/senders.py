"""Telegram's send budget shared by the processes of one bot (issue 36).

Telegram counts a bot's messages, not a process's. Each process beats here every few seconds
with its demand (sends waiting and sent since its last beat) and takes its share of the bot's
budget: a floor each, so a process with nothing queued still answers a command at once, and
the rest first to replies to chats beyond those floors (`urgent`, in messages a second), then
to the processes holding the sweep's most urgent digests (`rank`), in proportion to demand:
a pass goes most urgent first across the processes, not only within each. A process that
stops beating drops out after `live_for`, and its share returns to the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.engine import Connection, Row

from storage.database import Repository
from storage.tables import SENDER


def shares(
    demands: dict[str, int],
    total: float,
    floor: float,
    urgent: dict[str, float] | None = None,
    ranks: dict[str, int | None] | None = None,
) -> dict[str, float]:
    """Each sender's messages per second: `floor` each (less when there are too many), then
    what each needs for its replies beyond its floor (`urgent`, messages a second), then the
    rest of `total` to the senders of the most urgent rank (`ranks`, 0 the most urgent; None:
    none held), by demand among them (evenly when they have none). The shares say only whose
    sends ask for the bot's turns (`storage.pace`), which space them all out at `total`, one
    process or several, so nothing is kept back per process. (Before those turns each
    process paced its share on its own, and their sends met in one second's window: four kept
    six a second back.)"""
    if not demands:
        return {}
    urgent = urgent or {}
    base = min(floor, total / len(demands))
    rest = total - base * len(demands)
    needs = {worker: max(0.0, urgent.get(worker, 0.0) - base) for worker in demands}
    needed = sum(needs.values())
    replies = min(rest, needed)
    rest -= replies
    ranks = ranks or {}
    top = min((rank for rank in ranks.values() if rank is not None), default=None)
    takers = {worker: demand for worker, demand in demands.items() if ranks.get(worker) == top}
    wanted = sum(takers.values())
    return {
        worker: base
        + (replies * needs[worker] / needed if needed else 0.0)
        + (
            (rest * takers[worker] / wanted if wanted else rest / len(takers))
            if worker in takers
            else 0.0
        )
        for worker in demands
    }


class Senders(Repository):
    async def share(
        self,
        worker: str,
        demand: int,
        total: float,
        *,
        floor: float,
        live_for: timedelta,
        urgent: float = 0.0,
        rank: int | None = None,
    ) -> tuple[float, int]:
        """Beat for `worker` with `demand`, `urgent` of it replies to chats (messages a
        second), and `rank`, the most urgent of the sweep's digests it holds; its share of
        `total` messages a second, and how many processes share it (itself included)."""
        now = self._now()
        state = {"seen_at": now, "demand": demand, "urgent": urgent, "rank": rank}
        beat = (
            self._insert(SENDER)
            .values(worker=worker, **state)
            .on_conflict_do_update(index_elements=["worker"], set_=state)
        )
        gone = delete(SENDER).where(SENDER.c.seen_at < now - live_for)
        live = select(SENDER.c.worker, SENDER.c.demand, SENDER.c.urgent, SENDER.c.rank)

        def work(conn: Connection) -> Sequence[Row[Any, Any, Any, Any]]:
            conn.execute(beat)
            conn.execute(gone)
            return conn.execute(live).all()

        rows = await self._run(work)
        demands = {str(row.worker): int(row.demand) for row in rows}
        replies = {str(row.worker): float(row.urgent) for row in rows}
        ranks = {str(row.worker): row.rank for row in rows}
        return shares(demands, total, floor, replies, ranks)[worker], len(demands)

    async def leave(self, worker: str) -> None:
        """Stop sharing: the others take the whole budget at their next beat."""
        await self._run(lambda conn: conn.execute(delete(SENDER).where(SENDER.c.worker == worker)))
