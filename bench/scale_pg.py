"""One sweep day on PostgreSQL 15 with two processes sweeping together.

A throwaway cluster (`tests.fixtures.database.running_postgres`, the tests' own), the library
sandbox with 50 ms platform latency and the Telegram stand-in enforcing 30 messages per second
run here; two child processes run `bot.jobs.sweep.sweep` at once against one database,
each with `SWEEP_CONCURRENCY` 32 and `TELEGRAM_SEND_RATE` 29.5, the bot's total, which they
share through the database as `library-bot run` does (`bot.runtime.budget`). Every card is
due for a check (the day after the upgrade, the day with the most calls); every tenth has a
loan due soon, so gets one digest.

Printed per size: wall time against `max(messages / 30, calls x latency / concurrency)` with
the concurrency of both processes together (bound 1.15), duplicates (digests beyond one per
chat, and cards checked more than once: bound 0), and each process's peak RSS; across sizes
the growth of the peak RSS (flat: within 10 %).

`python -m bench.scale_pg` runs 1,000 and 10,000 cards; `--full` 10,000 and 100,000 cards.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SIZES = (1_000, 10_000)
FULL_SIZES = (10_000, 100_000)
PROCESSES = 2
LATENCY = 0.05
TELEGRAM_RATE = 30
CONCURRENCY = 32
TELEGRAM_RATE_SHARE = 29.5  # TELEGRAM_SEND_RATE: the bot's, shared by the processes
DUE_EVERY = 10
BOT_TOKEN = "123456:BENCH-scale"
FIRST_CHAT = 20_000_000
ROOT = Path(__file__).resolve().parent.parent
RATIO_BOUND = 1.15
RSS_GROWTH_BOUND = 0.10
USER_CALLS = "platform GET /v3/user"
RSS_MARKS = (0.1, 0.5)  # shares of the sweep's time at which the peak RSS so far is noted


async def measure(size: int, cluster: Any, rate: float = TELEGRAM_RATE_SHARE) -> dict[str, Any]:
    """One sweep day of `size` cards by two processes; their figures and the checks."""
    from bench.sweep import insert_accounts
    from bot.config.settings import encode_key
    from sandbox.library import LibrarySandbox
    from sandbox.telegram import TelegramStandIn
    from storage.migrate import upgrade

    keys = [secrets.token_bytes(32)]
    url = await cluster.new_database("scale")
    await upgrade(url)
    async with LibrarySandbox() as sandbox, TelegramStandIn(rate_limit=TELEGRAM_RATE) as telegram:
        telegram.add_bot(BOT_TOKEN)
        sandbox.faults.latency = {"platform": LATENCY}
        patrons = sandbox.add_patrons(size, due_every=DUE_EVERY)
        chats = [FIRST_CHAT + offset for offset in range(size)]
        tokens = []
        for chat_id, patron in zip(chats, patrons, strict=True):
            telegram.add_chat(chat_id)
            tokens.append((chat_id, sandbox.issue_token(patron.user_id)))
        for start in range(0, size, 10_000):
            await insert_accounts(url, keys, tokens[start : start + 10_000])
        env = {
            **os.environ,
            **sandbox.env(),
            "TELEGRAM_BOT_TOKEN": BOT_TOKEN,
            "TELEGRAM_API_URL": telegram.url,
            "DATABASE_URL": url,
            "TOKEN_KEYS": encode_key(keys[0]),
            "SWEEP_CONCURRENCY": str(CONCURRENCY),
            "TELEGRAM_SEND_RATE": str(rate),
            "LOG_LEVEL": "WARNING",
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")])
            ),
        }
        calls_before = sandbox.calls[USER_CALLS]
        with tempfile.TemporaryDirectory(prefix="bench-scale-") as directory:
            children = [
                await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    "bench.scale_pg",
                    "--child",
                    f"worker-{n}",
                    env=env,
                    cwd=directory,
                    stdout=asyncio.subprocess.PIPE,
                )
                for n in range(PROCESSES)
            ]
            outputs = await asyncio.gather(*(child.communicate() for child in children))
        for child in children:
            if child.returncode != 0:
                raise RuntimeError(f"a sweep child failed with exit code {child.returncode}")
        calls = sandbox.calls[USER_CALLS] - calls_before
        delivered = [len(telegram.sent(chat_id)) for chat_id in chats]
    reports = [json.loads(out.decode().strip().splitlines()[-1]) for out, _ in outputs]
    messages = sum(delivered)
    wall = max(r["ended"] for r in reports) - min(r["started"] for r in reports)
    concurrency = sum(r["concurrency"] for r in reports)
    bound = max(messages / TELEGRAM_RATE, calls * LATENCY / concurrency)
    return {
        "size": size,
        "calls": calls,
        "messages": messages,
        "expected_messages": size // DUE_EVERY,
        "refused": telegram.send_rate.refused,  # 429s: each a pause of a second or more
        "duplicates": sum(max(0, n - 1) for n in delivered)
        + max(0, sum(r["patrons"] for r in reports) - size),
        "patrons": [r["patrons"] for r in reports],
        "failures": [r["failures"] for r in reports],
        "wall": wall,
        "bound": bound,
        "ratio": wall / bound,
        "rss_mb": [r["peak_rss_mb"] for r in reports],
        "rss_marks_mb": [r["rss_marks_mb"] for r in reports],
        "cpu_ms_per_card": [1000 * r["cpu"] / max(1, r["patrons"]) for r in reports],
        "store_ms_per_card": 1000 * sum(r["store_seconds"] for r in reports) / size,
    }


# (repository, method): what the sweep asks of the database.
STORE_CALLS = (
    ("sweeps", "claim_sweep_batch"),
    ("sweeps", "finish_sweeps"),
    ("reminder_log", "begin_reminders_many"),
    ("callbacks", "put_callbacks_many"),
    ("reminder_log", "mark_sent"),
    ("sweeps", "set_next_checks"),
)


def _time_store(store: Any) -> list[float]:
    """Add up the time the sweep waits on the database (its transactions, end to end)."""
    total = [0.0]
    for repository_name, name in STORE_CALLS:
        repository = getattr(store, repository_name)
        method = getattr(repository, name)

        async def timed(*args: Any, _method: Any = method, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await _method(*args, **kwargs)
            finally:
                total[0] += time.perf_counter() - started

        setattr(repository, name, timed)
    return total


async def child(worker: str) -> None:
    """One process's sweep from the environment's settings; prints its figures as JSON."""
    import resource

    from bench.sweep import peak_rss_kb
    from bot.config.logs import setup_logging
    from bot.config.settings import load_settings
    from bot.jobs.sweep import sweep
    from bot.library.client import LibraryClient
    from bot.runtime.budget import share_send_budget
    from bot.telegram.botapi import build_bot
    from bot.telegram.ratelimit import FairRateLimiter
    from storage.store import Store

    settings = load_settings()
    setup_logging(settings.LOG_LEVEL, settings.LOG_FORMAT, stream=sys.stderr)
    store = await Store.open(settings.DATABASE_URL, settings.token_keys)
    store_seconds = _time_store(store)
    library = LibraryClient.from_settings(settings)
    bot = build_bot(settings)
    samples: list[tuple[float, float]] = []  # (seconds into the sweep, peak RSS so far in MB)

    async def sample() -> None:
        while True:
            samples.append((time.time() - started, peak_rss_kb() / 1024))
            await asyncio.sleep(1.0)

    try:
        async with bot:
            before = resource.getrusage(resource.RUSAGE_SELF)
            started = time.time()
            sampler = asyncio.create_task(sample())
            limiter = bot.rate_limiter
            budget = (
                asyncio.create_task(
                    share_send_budget(store, limiter, limiter.per_second, f"bench-{worker}")
                )
                if isinstance(limiter, FairRateLimiter) and limiter.per_second > 0
                else None
            )
            try:
                report = await sweep(
                    store=store, library=library, bot=bot, settings=settings, worker=worker
                )
            finally:
                sampler.cancel()
                if budget is not None:
                    budget.cancel()
                    await asyncio.gather(budget, return_exceptions=True)
            ended = time.time()
            after = resource.getrusage(resource.RUSAGE_SELF)
    finally:
        await library.aclose()
        await store.close()
    # The peak so far at a tenth and at half of the sweep: a plateau (caches filled, the
    # pipeline full) tells apart from memory that grows with the cards swept.
    marks = [
        max((mb for at, mb in samples if at <= share * (ended - started)), default=0.0)
        for share in RSS_MARKS
    ]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(
        json.dumps(
            {
                "patrons": report.patrons,
                "messages": report.messages,
                "failures": dict(report.failures),
                "concurrency": settings.SWEEP_CONCURRENCY,
                "started": started,
                "ended": ended,
                "cpu": cpu,
                "peak_rss_mb": peak_rss_kb() / 1024,
                "rss_marks_mb": marks,
                "store_seconds": store_seconds[0],
            }
        )
    )


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def report_lines(result: dict[str, Any]) -> list[str]:
    ratio = result["ratio"]
    rss = " / ".join(f"{mb:.1f}" for mb in result["rss_mb"])
    marks = ", ".join(
        " / ".join(f"{mb:.1f}" for mb in process) for process in result.get("rss_marks_mb", [])
    )
    cpu = " / ".join(f"{ms:.2f}" for ms in result["cpu_ms_per_card"])
    return [
        f"postgres sweep {result['size']:,} cards, {PROCESSES} processes: "
        f"{result['calls']:,} platform calls, {result['messages']:,} messages "
        f"(expected {result['expected_messages']:,}), cards per process {result['patrons']}, "
        f"failures {result['failures']}",
        f"  wall {result['wall']:.1f} s / bound {result['bound']:.1f} s = {ratio:.2f} "
        f"(bound {RATIO_BOUND}: {_verdict(ratio <= RATIO_BOUND)})",
        f"  duplicates: {result['duplicates']} ({_verdict(result['duplicates'] == 0)}); "
        f"Telegram 429 answers: {result['refused']}; send rate over the wall time "
        f"{result['messages'] / result['wall']:.1f} a second (Telegram's {TELEGRAM_RATE})",
        f"  peak RSS per process: {rss} MB (after 10 % / 50 % of the sweep: {marks} MB); "
        f"CPU per card per process: {cpu} ms; "
        f"waiting on the database {result['store_ms_per_card']:.3f} ms per card",
    ]


def growth_line(first: dict[str, Any], last: dict[str, Any]) -> str:
    small, big = max(first["rss_mb"]), max(last["rss_mb"])
    growth = big / small - 1
    return (
        f"peak RSS per process {first['size']:,} -> {last['size']:,} cards: {small:.1f} -> "
        f"{big:.1f} MB, {growth:+.1%} (flat within {RSS_GROWTH_BOUND:.0%}: "
        f"{_verdict(growth <= RSS_GROWTH_BOUND)})"
    )


async def run(sizes: tuple[int, ...], rate: float = TELEGRAM_RATE_SHARE) -> list[dict[str, Any]]:
    from tests.fixtures.database import running_postgres

    results = []
    with running_postgres() as cluster:
        for size in sizes:
            result = await measure(size, cluster, rate)
            results.append(result)
            print("\n".join(report_lines(result)), flush=True)
    if len(results) > 1:
        print(growth_line(results[0], results[-1]), flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scale_pg", description=__doc__)
    parser.add_argument("--full", action="store_true", help=f"sizes {FULL_SIZES}")
    parser.add_argument("--sizes", type=int, nargs="*", default=None)
    parser.add_argument(
        "--rate", type=float, default=TELEGRAM_RATE_SHARE, help="TELEGRAM_SEND_RATE (shared)"
    )
    parser.add_argument("--child", metavar="WORKER", help="internal: run one sweep")
    args = parser.parse_args(argv if argv is not None else [])
    if args.child:
        asyncio.run(child(args.child))
        return 0
    from tests.fixtures.database import postgres_missing

    missing = postgres_missing()
    if missing is not None:
        print(f"postgres sweep: skipped, {missing}")
        return 0
    sizes = tuple(args.sizes) if args.sizes else FULL_SIZES if args.full else SIZES
    results = asyncio.run(run(sizes, args.rate))
    ok = all(r["ratio"] <= RATIO_BOUND and r["duplicates"] == 0 for r in results)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
