"""Shelf watches at national scale: `/v3/holdingsitems` calls per watch per day, and the delay
from a copy coming home to its ping, against the bounds the issue sets.

The real check (`bot.jobs.shelf.check_watches`) runs over a real SQLite store holding the
watches, three times a simulated day (`bot.jobs.schedule.SHELF_CHECKS`), against an in-process
holdings source that counts its calls and a bot that counts its messages: what is measured is
the check's own batching, not the network.

Population (`--watches`, default 10,000; `--full` 100,000) over 90 libraries for 30 days:
titles drawn from 5,000 per library with a Zipf-like weight (popular titles are watched by
many), each at one of 6 branches. A watched copy comes home on a given day with 5 % chance, at
a random minute between 09:00 and 18:00; the delay is from then to the check that tells it.

Bounds: under 0.2 calls per watch per day; every ping within the check interval, the longest
gap between two checks (overnight: 18 h).
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

from bot.jobs import shelf
from bot.jobs.schedule import SHELF_CHECKS
from bot.library.models import Copy, Holdings
from bot.runtime import loop
from bot.services import Services
from bot.telegram.deliver import TelegramDeliverer
from storage.migrate import upgrade
from storage.store import Store

LIBRARIES = 90
TITLES = 5_000
BRANCHES = 6
DAYS = 30
WATCHES = 10_000
FULL_WATCHES = 100_000
COME_HOME = 0.05  # a watched copy's chance to come home on a day
CALLS_BOUND = 0.2
DAY0 = datetime(2026, 12, 1, tzinfo=UTC)


@dataclass
class Shelves:
    """The copies' truth: the branches where a (library, title) is on the shelf; the calls."""

    home: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    calls: int = 0

    async def holdings_public(self, agency: str, pids: list[str]) -> list[Holdings]:
        self.calls += 1
        return [
            Holdings(
                pid=pid,
                holdingsitems=[
                    Copy(branch=branch, status="OnShelf") for branch in self.home[(agency, pid)]
                ],
            )
            for pid in pids
        ]


@dataclass
class Bot:
    """Counts the pings, and when each chat got its own."""

    clock: list[datetime]
    told: dict[int, datetime] = field(default_factory=dict)

    async def do_api_request(self, endpoint: str, api_kwargs: dict[str, Any]) -> None:
        self.told.setdefault(api_kwargs["chat_id"], self.clock[0])


@dataclass
class Figures:
    watches: int
    calls: int = 0
    delays: list[float] = field(default_factory=list)

    def lines(self, days: int) -> list[str]:
        per_day = self.calls / self.watches / days
        worst = max(self.delays, default=0.0) / 3600
        mean = sum(self.delays) / len(self.delays) / 3600 if self.delays else 0.0
        gap = longest_gap() / 3600
        return [
            f"{self.watches:,} watches over {LIBRARIES} libraries for {days} days, "
            f"checked {len(SHELF_CHECKS)} times a day",
            f"holdings calls per watch per day: {per_day:.3f} (bound {CALLS_BOUND}: "
            f"{'met' if per_day < CALLS_BOUND else 'NOT met'})",
            f"shelf to ping: mean {mean:.1f} h, worst {worst:.1f} h over {len(self.delays):,} "
            f"pings (bound: the longest gap between checks, {gap:.0f} h: "
            f"{'met' if worst <= gap else 'NOT met'})",
        ]


def longest_gap() -> float:
    """The longest time between two checks, overnight included, in seconds."""
    seconds = sorted(t.hour * 3600 + t.minute * 60 for t in SHELF_CHECKS)
    gaps = [b - a for a, b in itertools.pairwise(seconds)]
    return float(max([*gaps, 86_400 - seconds[-1] + seconds[0]]))


async def run(watches: int, days: int, *, seed: int = 37) -> Figures:
    """The real check over `watches` watches for `days` simulated days."""
    rng = random.Random(seed)
    clock = [DAY0]
    weights = [1 / (rank + 1) ** 0.8 for rank in range(TITLES)]
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite+aiosqlite:///{Path(folder) / 'watches.db'}"
        await upgrade(url)
        store = await Store.open(url, [b"k" * 32], clock=lambda: clock[0])
        copy_of: dict[int, tuple[str, str, str]] = {}  # chat -> (library, title, branch)
        for chat in range(1, watches + 1):
            library = f"DK-7{rng.randrange(LIBRARIES):02d}100"
            title = f"870970-basis:{rng.choices(range(TITLES), weights)[0]:08d}"
            branch = f"Branch {rng.randrange(BRANCHES)}"
            await store.watches.add(chat, 1, title, branch, library, "Title")
            copy_of[chat] = (library, title, branch)
        shelves, bot = Shelves(), Bot(clock)
        # The chat's deliverer as `run` makes it; no settings, as no login is sent here.
        deliverer = TelegramDeliverer(
            cast(Any, bot), Services(cast(Any, None), store, cast(Any, shelves))
        )
        came: dict[tuple[str, str, str], datetime] = {}
        for day in range(days):
            midnight = DAY0 + timedelta(days=day)
            for copy in set(copy_of.values()) - set(came):
                if rng.random() < COME_HOME:
                    came[copy] = midnight + timedelta(minutes=rng.randrange(9 * 60, 18 * 60))
            for at in SHELF_CHECKS:
                clock[0] = midnight.replace(hour=at.hour, minute=at.minute)
                for (library, title, branch), when in came.items():
                    if when <= clock[0]:
                        shelves.home[(library, title)].add(branch)
                await shelf.check_watches(store, cast(Any, shelves), deliverer)
        await store.close()
    figures = Figures(watches=watches, calls=shelves.calls)
    figures.delays = [
        (told - came[copy_of[chat]]).total_seconds() for chat, told in bot.told.items()
    ]
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.watches", description=__doc__)
    parser.add_argument("--full", action="store_true", help=f"{FULL_WATCHES:,} watches")
    parser.add_argument("--watches", type=int, default=WATCHES)
    parser.add_argument("--days", type=int, default=DAYS)
    args = parser.parse_args(argv if argv is not None else [])
    started = time.perf_counter()
    figures = loop.run(run(FULL_WATCHES if args.full else args.watches, args.days))
    for line in figures.lines(args.days):
        print(line)
    print(f"({time.perf_counter() - started:.0f} s)")
    per_day = figures.calls / figures.watches / args.days
    worst = max(figures.delays, default=0.0)
    return 0 if per_day < CALLS_BOUND and worst <= longest_gap() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
