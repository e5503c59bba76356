"""The reminder sweep at scale: 1,000 and 10,000 patrons, every tenth with something due.

The library sandbox (50 ms platform latency) and the Telegram stand-in (30 messages per second)
run in this process; each sweep runs in a fresh child process, so its CPU time and peak RSS are
its own. Printed per size, each as a ratio to its bound (<= 1 meets the target): wall time over
the lower bound `max(messages / 30, patrons x latency / concurrency)` against 1.15, CPU ms per
patron against 1.0, and the growth of peak RSS from the smallest to the largest size against 10%.

`BENCH_PROFILE=<path>` writes the sweep's cProfile stats (wall clock) from the child.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import resource
import secrets
import sys
import tempfile
import time
from collections.abc import Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from bot.runtime import loop

SIZES = (1_000, 10_000)
LATENCY = 0.05
TELEGRAM_RATE = 30
DUE_EVERY = 10
BOT_TOKEN = "123456:BENCH-token"
FIRST_CHAT = 10_000_000
ROOT = Path(__file__).resolve().parent.parent
# The targets of issue 5.
RATIO_BOUND = 1.15  # wall time over the lower bound, at the largest size
CPU_BOUND_MS = 1.0  # CPU per patron, at every size
RSS_GROWTH_BOUND = 0.10  # peak RSS growth from the smallest to the largest size


async def insert_cards(
    database_url: str,
    keys: list[bytes],
    tokens: list[tuple[int, str]],
    marks: Mapping[int, tuple[date | None, bool]] | None = None,
) -> None:
    """Connected cards straight into the table, as a login stores them (card 1 with its
    identity, which the digest's buttons name): 10,000 logins would bench the login.

    `marks`: per chat, what its card's last check saw (its first loan due date, a hold
    ready), which orders the next pass most urgent first; none: never checked."""
    from storage.cards import new_card_id
    from storage.crypto import TokenCipher
    from storage.store import Store
    from storage.tables import CARD

    cipher = TokenCipher(keys)
    now = datetime.now(UTC)
    rows: list[dict[str, Any]] = [
        {
            "chat_id": chat_id,
            "number": 1,
            "card_id": new_card_id(),
            "token": cipher.encrypt(token, chat_id),
            "key_id": cipher.current_key_id,
            "token_expires_at": None,
            "unique_id": None,
            "municipality": None,
            "connected_at": now,
            "expiry_warned": False,
            "swept_on": None,
            "lease_owner": None,
            "lease_until": None,
            "next_check": None,
            "first_due": marks[chat_id][0] if marks else None,
            "hold_ready": marks[chat_id][1] if marks else False,
        }
        for chat_id, token in tokens
    ]
    store = await Store.open(database_url, keys)
    try:
        # One executemany in one transaction; the store API has no bulk insert to offer.
        await store.database.run(lambda conn: conn.execute(CARD.insert(), rows))
    finally:
        await store.close()


async def measure(size: int) -> dict[str, Any]:
    """Serve the sandbox and the stand-in here, sweep `size` patrons in a child process."""
    from bot.config.settings import encode_key
    from sandbox.library import LibrarySandbox
    from sandbox.telegram import TelegramStandIn
    from storage.migrate import upgrade

    keys = [secrets.token_bytes(32)]
    async with LibrarySandbox() as sandbox, TelegramStandIn(rate_limit=TELEGRAM_RATE) as telegram:
        telegram.add_bot(BOT_TOKEN)
        sandbox.faults.latency = {"platform": LATENCY}
        patrons = sandbox.add_patrons(size, due_every=DUE_EVERY)
        tokens = []
        for offset, patron in enumerate(patrons):
            chat_id = FIRST_CHAT + offset
            telegram.add_chat(chat_id)
            tokens.append((chat_id, sandbox.issue_token(patron.user_id)))
        with tempfile.TemporaryDirectory(prefix="bench-sweep-") as directory:
            database_url = f"sqlite+aiosqlite:///{Path(directory) / 'bench.db'}"
            await upgrade(database_url)
            await insert_cards(database_url, keys, tokens)
            env = {
                **os.environ,
                **sandbox.env(),
                "TELEGRAM_BOT_TOKEN": BOT_TOKEN,
                "TELEGRAM_API_URL": telegram.url,
                "DATABASE_URL": database_url,
                "TOKEN_KEYS": encode_key(keys[0]),
                "LOG_LEVEL": "INFO",  # as `run` logs by default
                # The child runs in the temporary directory; `bench` is not an installed package.
                "PYTHONPATH": os.pathsep.join(
                    filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")])
                ),
            }
            child = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bench.sweep", "--child",
                env=env, cwd=directory, stdout=asyncio.subprocess.PIPE,
            )  # fmt: skip
            out, _ = await child.communicate()
            if child.returncode != 0:
                raise RuntimeError(f"the sweep child failed with exit code {child.returncode}")
    result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    bound = max(
        result["messages"] / TELEGRAM_RATE, result["patrons"] * LATENCY / result["concurrency"]
    )
    result.update(size=size, bound=bound, ratio=result["wall"] / bound)
    return result


def peak_rss_kb() -> float:
    """This process's own peak RSS.

    Linux carries `ru_maxrss` across exec, so a child forked from a bigger parent would report
    the parent's peak; the kernel's per-process high-water mark `VmHWM` starts afresh at exec.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return float(line.split()[1])
    except OSError:
        pass
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


async def child() -> None:
    """One sweep from the environment's settings; prints its measurements as JSON."""
    from bot.config.logs import setup_logging
    from bot.config.settings import load_settings
    from bot.jobs.sweep import sweep
    from bot.library.client import LibraryClient
    from bot.services import Services
    from bot.telegram.botapi import build_bot
    from bot.telegram.deliver import TelegramDeliverer
    from storage.store import Store

    settings = load_settings()
    # Logging as `run` sets it up, so its cost (and any per-request line) is counted.
    setup_logging(settings.LOG_LEVEL, settings.LOG_FORMAT, stream=sys.stderr)
    store = await Store.open(settings.DATABASE_URL, settings.token_keys)
    library = LibraryClient.from_settings(settings)
    bot = build_bot(settings)
    try:
        async with bot:
            profile = os.environ.get("BENCH_PROFILE")  # a path: write cProfile stats there
            profiler = cProfile.Profile() if profile else None
            before = resource.getrusage(resource.RUSAGE_SELF)
            started = time.perf_counter()
            if profiler:
                profiler.enable()
            deliverer = TelegramDeliverer(bot, Services(settings, store, library))
            report = await sweep(
                store=store, library=library, deliverer=deliverer, settings=settings
            )
            if profiler:
                profiler.disable()
                profiler.dump_stats(str(profile))
            wall = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_SELF)
    finally:
        await library.aclose()
        await store.close()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(
        json.dumps(
            {
                "patrons": report.patrons,
                "messages": report.messages,
                "failures": dict(report.failures),
                "concurrency": settings.SWEEP_CONCURRENCY,
                "wall": wall,
                "cpu_ms_per_patron": 1000 * cpu / max(1, report.patrons),
                "sys_ms_per_patron": 1000
                * (after.ru_stime - before.ru_stime)
                / max(1, report.patrons),
                "peak_rss_mb": peak_rss_kb() / 1024,
                "wakeups": after.ru_nvcsw - before.ru_nvcsw,
            }
        )
    )


def _verdict(share: float) -> str:
    return "met" if share <= 1 else "NOT met"


def report_lines(result: dict[str, Any]) -> list[str]:
    """One size's figures, each against its bound."""
    ratio = result["ratio"]
    cpu = result["cpu_ms_per_patron"]
    return [
        f"sweep {result['size']:,} patrons: {result['messages']} messages, "
        f"failures {result['failures'] or 'none'}, peak RSS {result['peak_rss_mb']:.1f} MB, "
        f"{result['wakeups'] / result['patrons']:.2f} wake-ups/patron",
        f"  wall {result['wall']:.1f} s / lower bound {result['bound']:.1f} s = {ratio:.2f}"
        f" = {ratio / RATIO_BOUND:.2f} x bound {RATIO_BOUND} ({_verdict(ratio / RATIO_BOUND)})",
        f"  CPU {cpu:.2f} ms/patron = {cpu / CPU_BOUND_MS:.2f} x bound {CPU_BOUND_MS}"
        f" ({_verdict(cpu / CPU_BOUND_MS)}; kernel {result['sys_ms_per_patron']:.2f} ms of it)",
    ]


def growth_line(first: dict[str, Any], last: dict[str, Any]) -> str:
    growth = last["peak_rss_mb"] / first["peak_rss_mb"] - 1
    share = max(growth, 0.0) / RSS_GROWTH_BOUND
    return (
        f"peak RSS {first['size']:,} -> {last['size']:,}: {first['peak_rss_mb']:.1f} -> "
        f"{last['peak_rss_mb']:.1f} MB, {growth:+.1%} = {share:.2f} x bound "
        f"{RSS_GROWTH_BOUND:.0%} ({_verdict(share)})"
    )


def met(results: list[dict[str, Any]]) -> bool:
    """Every size within its wall-time and CPU bounds, and the peak RSS within its growth."""
    within = all(
        r["ratio"] <= RATIO_BOUND and r["cpu_ms_per_patron"] <= CPU_BOUND_MS for r in results
    )
    if len(results) > 1:
        growth = results[-1]["peak_rss_mb"] / results[0]["peak_rss_mb"] - 1
        within = within and growth <= RSS_GROWTH_BOUND
    return within


def main(sizes: tuple[int, ...] = SIZES) -> int:
    results = []
    for size in sizes:
        result = asyncio.run(measure(size))
        results.append(result)
        print("\n".join(report_lines(result)), flush=True)
    if len(results) > 1:
        print(growth_line(results[0], results[-1]))
    return 0 if met(results) else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--child", action="store_true", help="internal: run one sweep")
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    args = parser.parse_args()
    if args.child:
        loop.run(child())  # a bot process: `library-bot run`'s loop
    else:
        sys.exit(main(tuple(args.sizes)))
