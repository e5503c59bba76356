"""The reminder sweep at scale: 1,000 and 10,000 patrons, every tenth with something due.

The library sandbox (50 ms platform latency) and the Telegram stand-in (30 messages per second)
run in this process; each sweep runs in a fresh child process, so its CPU time and peak RSS are
its own. Printed per size: wall time over the lower bound
`max(messages / 30, patrons x latency / concurrency)`, CPU ms per patron, and peak RSS.
Targets: ratio <= 1.15 at 10,000, <= 0.5 ms CPU per patron, RSS at 10,000 within 10% of 1,000.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import cProfile
import json
import os
import resource
import secrets
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SIZES = (1_000, 10_000)
LATENCY = 0.05
TELEGRAM_RATE = 30
DUE_EVERY = 10
BOT_TOKEN = "123456:BENCH-token"
FIRST_CHAT = 10_000_000
INSERT_CHUNK = 1_000
ROOT = Path(__file__).resolve().parent.parent


async def insert_accounts(
    database_url: str, keys: list[bytes], tokens: list[tuple[int, str]]
) -> None:
    """Connected accounts straight into the table: 10,000 logins would bench the login."""
    from storage.crypto import TokenCipher
    from storage.store import Store
    from storage.tables import AccountRow

    cipher = TokenCipher(keys)
    table: Any = AccountRow.__table__  # type: ignore[attr-defined]
    now = datetime.now(UTC)
    store = await Store.open(database_url, keys)
    try:
        async with store.engine.begin() as conn:
            for start in range(0, len(tokens), INSERT_CHUNK):
                rows: list[dict[str, Any]] = [
                    {
                        "chat_id": chat_id,
                        "token": cipher.encrypt(token, chat_id),
                        "key_id": cipher.current_key_id,
                        "token_expires_at": None,
                        "unique_id": None,
                        "municipality": None,
                        "attributes": {},
                        "connected_at": now,
                        "expiry_warned": False,
                        "swept_on": None,
                        "lease_owner": None,
                        "lease_until": None,
                    }
                    for chat_id, token in tokens[start : start + INSERT_CHUNK]
                ]
                await conn.execute(table.insert(), rows)
    finally:
        await store.close()


async def measure(size: int) -> dict[str, Any]:
    """Serve the sandbox and the stand-in here, sweep `size` patrons in a child process."""
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
            await insert_accounts(database_url, keys, tokens)
            env = {
                **os.environ,
                **sandbox.env(),
                "TELEGRAM_BOT_TOKEN": BOT_TOKEN,
                "TELEGRAM_API_URL": telegram.url,
                "DATABASE_URL": database_url,
                "TOKEN_KEYS": base64.urlsafe_b64encode(keys[0]).decode().rstrip("="),
                "LOG_LEVEL": "WARNING",
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
    from bot.library.client import LibraryClient
    from bot.reminders import build_bot, sweep
    from bot.settings import load_settings
    from storage.store import Store

    settings = load_settings()
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
            report = await sweep(store=store, library=library, bot=bot, settings=settings)
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
                "peak_rss_mb": peak_rss_kb() / 1024,
            }
        )
    )


def main(sizes: tuple[int, ...] = SIZES) -> int:
    results = []
    for size in sizes:
        result = asyncio.run(measure(size))
        results.append(result)
        print(
            f"sweep {size:>6} patrons: {result['messages']} messages, "
            f"wall {result['wall']:.1f} s / bound {result['bound']:.1f} s = "
            f"ratio {result['ratio']:.2f}, CPU {result['cpu_ms_per_patron']:.2f} ms/patron, "
            f"peak RSS {result['peak_rss_mb']:.1f} MB, failures {result['failures'] or 'none'}",
            flush=True,
        )
    if len(results) > 1:
        growth = results[-1]["peak_rss_mb"] / results[0]["peak_rss_mb"] - 1
        print(f"peak RSS growth {results[0]['size']} -> {results[-1]['size']}: {growth:+.1%}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--child", action="store_true", help="internal: run one sweep")
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    args = parser.parse_args()
    if args.child:
        asyncio.run(child())
    else:
        sys.exit(main(tuple(args.sizes)))
