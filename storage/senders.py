"""Telegram's send budget shared by the processes of one bot (issue 36).

Telegram counts a bot's messages, not a process's. Each process beats here every few seconds
with its demand (sends waiting and sent since its last beat) and takes its share of the bot's
budget: a floor each, so a process with nothing queued still answers a command at once, and
the rest first to replies to chats beyond those floors (`urgent`, in messages a second), then
in proportion to demand, so the process sweeping gets what replies leave. A process that stops
beating drops out after `live_for`, and its share returns to the others.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.engine import Connection

from storage.database import Repository
from storage.tables import SENDER


def shares(
    demands: dict[str, int],
    total: float,
    floor: float,
    urgent: dict[str, float] | None = None,
) -> dict[str, float]:
    """Each sender's messages per second: `floor` each (less when there are too many), then
    what each needs for its replies beyond its floor (`urgent`, messages a second), then the
    rest of `total` by demand (evenly when no one has any). Of `total`, two a second per
    sender but one are kept back: each paces evenly but not in step with the others, so in
    one second's window a sender at `r` a second may fit `floor(r) + 1` messages, and their
    requests reach Telegram a little bunched (one a second each was measured to be too little:
    31 in a second from two processes at 14.25, bench.scale_pg)."""
    if not demands:
        return {}
    urgent = urgent or {}
    total = max(total - 2 * (len(demands) - 1), total / 2)
    base = min(floor, total / len(demands))
    rest = total - base * len(demands)
    needs = {worker: max(0.0, urgent.get(worker, 0.0) - base) for worker in demands}
    needed = sum(needs.values())
    replies = min(rest, needed)
    rest -= replies
    wanted = sum(demands.values())
    return {
        worker: base
        + (replies * needs[worker] / needed if needed else 0.0)
        + (rest * demand / wanted if wanted else rest / len(demands))
        for worker, demand in demands.items()
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
    ) -> tuple[float, int]:
        """Beat for `worker` with `demand`, `urgent` of it replies to chats (messages a
        second); its share of `total` messages a second, and how many processes share it
        (itself included)."""
        now = self._now()
        beat = (
            self._insert(SENDER)
            .values(worker=worker, seen_at=now, demand=demand, urgent=urgent)
            .on_conflict_do_update(
                index_elements=["worker"],
                set_={"seen_at": now, "demand": demand, "urgent": urgent},
            )
        )
        gone = delete(SENDER).where(SENDER.c.seen_at < now - live_for)
        live = select(SENDER.c.worker, SENDER.c.demand, SENDER.c.urgent)

        def work(conn: Connection) -> tuple[dict[str, int], dict[str, float]]:
            conn.execute(beat)
            conn.execute(gone)
            rows = conn.execute(live).all()
            return (
                {str(row.worker): int(row.demand) for row in rows},
                {str(row.worker): float(row.urgent) for row in rows},
            )

        demands, replies = await self._run(work)
        return shares(demands, total, floor, replies)[worker], len(demands)

    async def leave(self, worker: str) -> None:
        """Stop sharing: the others take the whole budget at their next beat."""
        await self._run(lambda conn: conn.execute(delete(SENDER).where(SENDER.c.worker == worker)))
