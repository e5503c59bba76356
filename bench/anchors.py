"""Anchors: `/loans` against two bare bots, in one session, on one Bot API stand-in.

A bare PTB bot (stock `Application`, PTB's own `HTTPXRequest`, 8 connections) and a bare
aiogram 3 bot (`AiohttpSession`) answer `/anchor` with a 1 KB HTML message; the library bot
answers `/loans` (database reads, a library call, texts), and `/help` beside it (the chat's
settings and a text, no library call). A third bare bot, aiogram's again, reads a patron's
`/v3/user` from the platform stand-in before it answers: a bare bot doing the one library call
`/loans` does. Each bot runs in a process of its own, all pinned to one core, the stand-ins and
this load generator on the other(s). Blocks interleave them, so a busy machine slows them
alike: the ratio is the figure, not the milliseconds.

Two loads, each reported as CPU per command (the bot process's, all threads) and wake-ups per
command (voluntary context switches of all its threads: a thread giving up the CPU to wait):

- streaming: every chat sends its next command as soon as the last one is answered;
- paced: 20 commands a second over 32 chats, each chat waiting for its answer (a patron's pace,
  where timers and loops that tick without work show).

Each load runs in short blocks, the bots in turn (in reverse order every other cycle), cycle
after cycle: the machine's speed drifts over seconds (a virtual machine's host is busy too),
and interleaving spreads the drift over all alike. A bot's figure is its CPU over all its
commands (a rare full garbage collection counts at its weight); the cycles' own ratios are
printed beside, as the noise. From the two loads together, each bot's paced CPU is split into
the work of a command and the cost of a wake-up (everything a process runs after a wait runs
cold), which shows whether `/loans` does more than a bare bot or only wakes more often.
CPU time is the scheduler's own count per thread (`/proc/<pid>/task/*/sched`), to the
nanosecond where the kernel shows it, else the clock ticks of `/proc/<pid>/stat`.

`--platform-latency` has the library stand-ins (the platform's among them) answer that many
seconds late, as production does from tens of milliseconds away: then every bot making the
call waits for its answer, and wakes for it.

aiogram is a benchmark-only extra (`pip install -e '.[bench]'`); without it its column reads
"n/a". Run alone with `python -m bench.anchors`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import os
import signal
import statistics
import sys
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from telegram import Update
from telegram.constants import ParseMode
from telegram.ext import Application, CommandHandler, ContextTypes

from bench.callbacks import BOT_TOKEN, Rig, running_rig
from bench.commands import TimedSandbox, connect, cpu_seconds, pin
from sandbox.telegram import TelegramStandIn

PTB_TOKEN = "222222:BARE-ptb"
AIOGRAM_TOKEN = "333333:BARE-aiogram"
CALL_TOKEN = "555555:BARE-call"
TOKENS = {"ptb": PTB_TOKEN, "aiogram": AIOGRAM_TOKEN, "call": CALL_TOKEN}
FIRST_BARE_CHAT = {"ptb": 9_100_000, "aiogram": 9_200_000, "call": 9_300_000}
# Where the bare bot of "call" reads a patron's /v3/user, and with which access token.
PLATFORM_URL_ENV, ACCESS_TOKEN_ENV = "BENCH_PLATFORM_URL", "BENCH_ACCESS_TOKEN"
# Many short blocks rather than a few long ones: a cycle of five bots' 3 s blocks spanned 15 s of
# the machine's drift, and one run's paced ratio moved from 1.04 to 1.27 between runs; with 1 s
# blocks and three times the cycles (the same commands in all) it read 1.08-1.13.
CYCLES = 24
STREAM_CHATS = 64
STREAM_BLOCK = 200  # commands per bot per cycle, streamed
PACED_CHATS = 32
PACED_RATE = 20.0
PACED_BLOCK = 20  # commands per bot per cycle, paced (1 s)
REPLY_TIMEOUT = 30.0
# The target: `/loans` CPU per command within this many times bare aiogram's, streamed and paced.
RATIO_BOUND = 1.15
# About 1 KB of HTML, as a list of loans reads.
ANSWER = "<b>Dine lån</b>\n" + "\n".join(
    f"• <i>Bog nummer {n}</i>, afleveres senest <b>1{n % 10}. december</b>" for n in range(20)
)
ROOT = str(Path(__file__).resolve().parent.parent)
LABELS = {
    "loans": "/loans",
    "help": "/help",
    "ptb": "bare PTB",
    "aiogram": "bare aiogram",
    "call": "bare aiogram + /v3/user",
}
VARIANTS = tuple(LABELS)


@dataclass
class Sample:
    cpu_ms: float
    wakeups: float
    main_wakeups: float  # of them, the event loop's thread
    throughput: float
    added_p50_ms: float


@dataclass
class Figures:
    streaming: dict[str, list[Sample]] = field(default_factory=dict)
    paced: dict[str, list[Sample]] = field(default_factory=dict)
    core: str = ""
    missing: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        lines = [f"anchors: {self.core}"]
        for name, samples in (("streaming", self.streaming), ("paced", self.paced)):
            lines.append(f"  {name}:")
            lines.extend(f"    {line}" for line in _summary(samples))
        lines.extend(f"  {missing}" for missing in self.missing)
        lines.extend(f"  {line}" for line in self._wake_ups())
        for load in ("streaming", "paced"):
            ratio = self.ratio(load)
            verdict = (
                "n/a"
                if ratio is None
                else f"{ratio:.2f} ({'met' if ratio <= RATIO_BOUND else 'NOT met'})"
            )
            lines.append(f"  target {load} /loans <= {RATIO_BOUND} x bare aiogram: {verdict}")
        return lines

    def split(self, variant: str) -> tuple[float, float] | None:
        """A bot's CPU per command as work + wake-ups x the cost of one, from the two loads:
        streamed, it wakes almost never; paced, about twice a command, and what it then runs
        runs cold. (ms of work, ms per wake-up); None without both loads' figures."""
        figures = _means(
            (samples, variant, what)
            for samples in (self.streaming, self.paced)
            for what in ("cpu_ms", "wakeups")
        )
        if figures is None:
            return None
        streamed_cpu, streamed_woke, paced_cpu, paced_woke = figures
        if paced_woke - streamed_woke < 0.5:
            return None
        per_wake = (paced_cpu - streamed_cpu) / (paced_woke - streamed_woke)
        return streamed_cpu - per_wake * streamed_woke, per_wake

    def _wake_ups(self) -> list[str]:
        """Where the paced gap comes from: the work a command does, or how often it wakes."""
        loans, aiogram = self.split("loans"), self.split("aiogram")
        figures = _means(
            (self.paced, variant, what)
            for variant in ("loans", "aiogram")
            for what in ("cpu_ms", "wakeups")
        )
        if loans is None or aiogram is None or figures is None:
            return []
        mine, my_wakes, theirs, their_wakes = figures
        # /loans as it would cost waking as often as bare aiogram: without its library call's.
        alike = mine - (my_wakes - their_wakes) * loans[1]
        return [
            "paced = work + wake-ups x the cost of one (from the two loads): work per command "
            f"/loans {loans[0]:.2f} ms, bare aiogram {aiogram[0]:.2f} ms "
            f"(ratio {loans[0] / aiogram[0]:.2f}); a wake-up /loans {loans[1]:.2f} ms, "
            f"bare aiogram {aiogram[1]:.2f} ms",
            f"paced /loans waking as often as bare aiogram ({their_wakes:.1f}, not "
            f"{my_wakes:.1f}): {alike:.2f} ms, ratio {alike / theirs:.2f}",
        ]

    @property
    def met(self) -> bool:
        """Both loads' `/loans` within `RATIO_BOUND` of bare aiogram (not met without it)."""
        ratios = (self.ratio("streaming"), self.ratio("paced"))
        return all(ratio is not None and ratio <= RATIO_BOUND for ratio in ratios)

    def ratio(self, load: str) -> float | None:
        """`/loans` CPU per command over bare aiogram's, each over all its blocks."""
        return _ratio(self.streaming if load == "streaming" else self.paced)


def _ratio(
    samples: dict[str, list[Sample]], variant: str = "loans", anchor: str = "aiogram"
) -> float | None:
    mine, theirs = _mean(samples, variant, "cpu_ms"), _mean(samples, anchor, "cpu_ms")
    return mine / theirs if mine is not None and theirs else None


def _ratios(samples: dict[str, list[Sample]]) -> list[float]:
    pairs = zip(samples.get("loans", []), samples.get("aiogram", []), strict=False)
    return [loans.cpu_ms / aiogram.cpu_ms for loans, aiogram in pairs if aiogram.cpu_ms]


def _median(samples: dict[str, list[Sample]], variant: str, what: str) -> float | None:
    values = [getattr(s, what) for s in samples.get(variant, [])]
    return statistics.median(values) if values else None


def _means(wanted: Iterable[tuple[dict[str, list[Sample]], str, str]]) -> list[float] | None:
    """`_mean` of each (samples, variant, figure) wanted, in order; None if any is missing."""
    found = [_mean(samples, variant, what) for samples, variant, what in wanted]
    figures = [figure for figure in found if figure is not None]
    return figures if len(figures) == len(found) else None


def _mean(samples: dict[str, list[Sample]], variant: str, what: str) -> float | None:
    """Over blocks of one size, the figure of all the commands together: CPU per command
    counts a rare pause (a full garbage collection) at its weight, where a median hides it."""
    values = [getattr(s, what) for s in samples.get(variant, [])]
    return statistics.fmean(values) if values else None


def _summary(samples: dict[str, list[Sample]]) -> list[str]:
    def figure(variant: str, what: str, unit: str, digits: int = 2) -> str:
        value = (_mean if what == "cpu_ms" else _median)(samples, variant, what)
        return "n/a" if value is None else f"{value:.{digits}f}{unit}"

    def shown(ratio: float | None) -> str:
        return "n/a" if ratio is None else f"{ratio:.2f}"

    overall, ratios, without = _ratio(samples), _ratios(samples), _ratio(samples, "help")
    to_calling = _ratio(samples, "loans", "call")
    spread = (
        [
            f"ratio to aiogram per cycle ({len(ratios)}): median {statistics.median(ratios):.2f}, "
            f"from {min(ratios):.2f} to {max(ratios):.2f}"
        ]
        if ratios
        else []
    )
    return [
        f"command CPU per /loans: {figure('loans', 'cpu_ms', ' ms')}; "
        f"bare PTB: {figure('ptb', 'cpu_ms', ' ms')}; "
        f"bare aiogram: {figure('aiogram', 'cpu_ms', ' ms')}; ratio to aiogram: {shown(overall)}",
        "wake-ups per command (voluntary context switches, all threads / event loop's): "
        + "; ".join(
            f"{LABELS[v]}: {figure(v, 'wakeups', '', 1)} / {figure(v, 'main_wakeups', '', 1)}"
            for v in VARIANTS
        ),
        "throughput: "
        + "; ".join(f"{LABELS[v]}: {figure(v, 'throughput', '/s', 0)}" for v in VARIANTS),
        "p50 added latency: "
        + "; ".join(f"{LABELS[v]}: {figure(v, 'added_p50_ms', ' ms')}" for v in VARIANTS),
        *spread,
        # The same bot and chats on a command that reads the chat's settings and answers with
        # a text of its own, calling no library service: what the library call adds shows.
        f"the bot without a library call (/help): {figure('help', 'cpu_ms', ' ms')}; "
        f"ratio to aiogram: {shown(without)}",
        # The other way round: the bare aiogram bot reading a patron's /v3/user from the same
        # platform stand-in (one aiohttp session) before it answers, as `/loans` does.
        f"bare aiogram with one /v3/user call per command: {figure('call', 'cpu_ms', ' ms')}; "
        f"/loans ratio to it: {shown(to_calling)}",
    ]


def thread_cpu_seconds(pid: int) -> float:
    """CPU so far of the process's live threads, as the scheduler counts it (the kernel's
    `/proc/<pid>/task/*/sched`, nanoseconds), else `/proc/<pid>/stat` (10 ms ticks: too coarse
    for a 1 s block at a patron's pace)."""
    total, found = 0.0, False
    for sched in Path(f"/proc/{pid}/task").glob("*/sched"):
        with contextlib.suppress(OSError):
            for line in sched.read_text().splitlines():
                if line.startswith("se.sum_exec_runtime"):
                    total += float(line.split(":", 1)[1]) / 1000  # milliseconds
                    found = True
                    break
    return total if found else cpu_seconds(pid)


def wakeups(pid: int) -> tuple[int, int]:
    """Voluntary context switches so far (Linux /proc): all the process's threads, and its
    main thread (the event loop's) alone.

    psutil's `num_ctx_switches` reads the main thread's only; the bot's SQLite thread wakes
    too, and so does the loop whenever that thread hands a result back.
    """
    total = main = 0
    for status in Path(f"/proc/{pid}/task").glob("*/status"):
        with contextlib.suppress(OSError):
            for line in status.read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    count = int(line.split()[1])
                    total += count
                    main += count if status.parent.name == str(pid) else 0
    return total, main


# --- the bare bots --------------------------------------------------------------------------


async def _serve_ptb(token: str, api_url: str) -> None:
    async def anchor(update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.message is not None
        await update.message.reply_text(ANSWER, parse_mode=ParseMode.HTML)

    application = (
        Application.builder()
        .token(token)
        .base_url(f"{api_url}/bot")
        .concurrent_updates(True)
        # PTB's default of 256 connections makes httpcore's pool re-check them all on every
        # request (several ms of CPU per send at 64 chats): 8, as a PTB bot would configure,
        # waited for as long as the library bot waits (PTB's 1 s lost answers on a busy machine).
        .connection_pool_size(8)
        .pool_timeout(5.0)
        .build()
    )
    application.add_handler(CommandHandler("anchor", anchor))
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with application:
        assert application.updater is not None
        await application.updater.start_polling(allowed_updates=["message"])
        await application.start()
        await stop.wait()
        await application.updater.stop()
        await application.stop()


async def _serve_aiogram(token: str, api_url: str, *, call: bool = False) -> None:
    """The bare aiogram bot; with `call`, it reads a patron's `/v3/user` before answering
    (`PLATFORM_URL_ENV`, `ACCESS_TOKEN_ENV`), on an aiohttp session of its own, as a bot
    serving patrons would."""
    import aiohttp
    from aiogram import Bot, Dispatcher
    from aiogram.client.default import DefaultBotProperties
    from aiogram.client.session.aiohttp import AiohttpSession
    from aiogram.client.telegram import TelegramAPIServer
    from aiogram.filters import Command
    from aiogram.types import Message

    session = AiohttpSession(api=TelegramAPIServer.from_base(api_url))
    bot = Bot(token, session=session, default=DefaultBotProperties(parse_mode="HTML"))
    dispatcher = Dispatcher()

    if call:
        user_url = f"{os.environ[PLATFORM_URL_ENV]}/v3/user"
        headers = {"Authorization": f"Bearer {os.environ[ACCESS_TOKEN_ENV]}"}

    async with contextlib.AsyncExitStack() as stack:
        platform = await stack.enter_async_context(aiohttp.ClientSession()) if call else None

        @dispatcher.message(Command("anchor"))
        async def anchor(message: Message) -> None:
            if platform is not None:
                async with platform.get(user_url, headers=headers) as response:
                    await response.read()
            await message.answer(ANSWER)

        await dispatcher.start_polling(bot, allowed_updates=["message"])


def serve(kind: str, token: str, api_url: str) -> int:
    # The bare bots stay on asyncio's default loop, where the library bot runs on uvloop
    # (bot/runtime/loop.py): they are the anchors as their users run them out of the box, so
    # the ratios include what the library bot's choice of loop saves.
    if kind == "ptb":
        asyncio.run(_serve_ptb(token, api_url))
    else:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_serve_aiogram(token, api_url, call=kind == "call"))
    return 0


def aiogram_installed() -> bool:
    return importlib.util.find_spec("aiogram") is not None


@contextlib.asynccontextmanager
async def bare_bot(
    kind: str, token: str, api_url: str, extra_env: dict[str, str] | None = None
) -> AsyncIterator[asyncio.subprocess.Process]:
    env = {**os.environ, "PYTHONPATH": ROOT, **(extra_env or {})}
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.anchors", "--serve", kind, token, api_url, env=env
    )
    try:
        yield child
    finally:
        if child.returncode is None:
            child.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(child.wait(), 15)
            except TimeoutError:
                child.kill()
                await child.wait()


# --- the load -------------------------------------------------------------------------------


async def command(telegram: TelegramStandIn, chat_id: int, text: str, token: str) -> float:
    """Type `text` to the bot of `token`; seconds until its reply shows at the stand-in."""
    state = telegram.state
    chat = state.chat(chat_id)
    messages = chat.messages
    expected = len(messages) + 2  # the command and the reply
    started = time.perf_counter()
    telegram.type_text(chat, text, state.bots[token])
    try:
        async with asyncio.timeout(REPLY_TIMEOUT):
            while True:
                changed = state.changed
                if len(messages) >= expected:
                    break
                await changed.wait()
    except TimeoutError:
        raise TimeoutError(
            f"no answer to {text} in chat {chat_id} within {REPLY_TIMEOUT:g} s"
        ) from None
    seconds = time.perf_counter() - started
    reply = messages[max(messages)]
    if reply.bot_token != token:
        raise AssertionError(f"unexpected answer to {text}: {reply.text[:80]!r}")
    return seconds


@dataclass
class Target:
    """One bot under load: its process, its chats, its command."""

    variant: str
    pid: int
    chats: list[int]
    text: str
    token: str
    platform: dict[int, Any] = field(default_factory=dict)  # chat -> its token's /v3/user times


async def _timed(rig: Rig, target: Target, chat_id: int) -> float:
    """Added latency of one command: visible time less the platform's own, for `/loans`."""
    visible = await command(rig.telegram, chat_id, target.text, target.token)
    times = target.platform.get(chat_id)
    platform = times.popleft() if times else 0.0
    return visible - platform


async def measure(rig: Rig, target: Target, total: int, *, rate: float | None) -> Sample:
    """`total` commands over the target's chats, streamed (`rate` None) or paced at `rate`."""
    added: list[float] = []
    cpu, woke, wall = thread_cpu_seconds(target.pid), wakeups(target.pid), time.perf_counter()
    if rate is None:
        left = total

        async def stream(chat_id: int) -> None:
            nonlocal left
            while left > 0:
                left -= 1
                added.append(await _timed(rig, target, chat_id))

        await asyncio.gather(*(stream(chat_id) for chat_id in target.chats))
    else:
        busy: dict[int, asyncio.Task[None]] = {}
        loop = asyncio.get_running_loop()
        start = loop.time()

        async def one(chat_id: int) -> None:
            added.append(await _timed(rig, target, chat_id))

        for n in range(total):
            await asyncio.sleep(max(0.0, start + n / rate - loop.time()))
            chat_id = target.chats[n % len(target.chats)]
            previous = busy.get(chat_id)
            if previous is not None:
                await previous  # each chat waits for its answer
            busy[chat_id] = asyncio.create_task(one(chat_id))
        await asyncio.gather(*busy.values())
    wall = time.perf_counter() - wall
    cpu = thread_cpu_seconds(target.pid) - cpu
    woke_after = wakeups(target.pid)
    added.sort()
    return Sample(
        cpu_ms=cpu / total * 1000,
        wakeups=(woke_after[0] - woke[0]) / total,
        main_wakeups=(woke_after[1] - woke[1]) / total,
        throughput=total / wall,
        added_p50_ms=added[len(added) // 2] * 1000 if added else 0.0,
    )


async def run(
    cycles: int = CYCLES,
    stream_block: int = STREAM_BLOCK,
    paced_block: int = PACED_BLOCK,
    *,
    stream_chats: int = STREAM_CHATS,
    paced_chats: int = PACED_CHATS,
    paced_rate: float = PACED_RATE,
    pinned: bool = True,
    platform_latency: float = 0.0,
) -> Figures:
    """`cycles` of a streamed block per bot, then as many of a paced block per bot.
    `pinned=False` leaves every process's CPU affinity alone (for a test run);
    `platform_latency` delays every answer of the library stand-ins by that many seconds."""
    figures = Figures()
    sandbox = TimedSandbox()
    chats = max(stream_chats, paced_chats)
    async with running_rig(sandbox=sandbox, subprocess=True, latency=platform_latency) as rig:
        telegram = rig.telegram
        assert rig.bot_pid is not None
        kinds = ["ptb"] + (["aiogram", "call"] if aiogram_installed() else [])
        if "aiogram" not in kinds:
            figures.missing.append("bare aiogram: not installed (pip install -e '.[bench]')")
        for kind, token in TOKENS.items():
            telegram.add_bot(token, username=f"bare_{kind}_bot")
        tokens = await connect(rig, sandbox, chats)
        # The calling bare bot's patron: a token of its own, so /loans' platform times stay
        # with /loans' chats.
        [patron] = sandbox.add_patrons(1, due_every=0)
        access_token = sandbox.issue_token(patron.user_id)
        assert rig.settings.PLATFORM_URL is not None
        platform_env = {PLATFORM_URL_ENV: rig.settings.PLATFORM_URL, ACCESS_TOKEN_ENV: access_token}
        targets = [
            Target("loans", rig.bot_pid, list(tokens), "/loans", BOT_TOKEN),
            Target("help", rig.bot_pid, list(tokens), "/help", BOT_TOKEN),
        ]
        for chat_id, token in tokens.items():
            targets[0].platform[chat_id] = sandbox.user_seconds[token]
        async with contextlib.AsyncExitStack() as stack:
            for kind in kinds:
                token = TOKENS[kind]
                child = await stack.enter_async_context(
                    bare_bot(kind, token, telegram.url, platform_env if kind == "call" else None)
                )
                first = FIRST_BARE_CHAT[kind]
                bare_chats = list(range(first, first + chats))
                for chat_id in bare_chats:
                    telegram.add_chat(chat_id, first_name=f"Chat {chat_id}")
                target = Target(kind, child.pid, bare_chats, "/anchor", token)
                if kind == "call":  # one deque: its chats' calls come one at a time
                    target.platform = dict.fromkeys(bare_chats, sandbox.user_seconds[access_token])
                targets.append(target)
            pids = [target.pid for target in targets]
            figures.core = pin(*pids) if pinned else "not pinned"
            if platform_latency:
                figures.core += f"; the platform answers {platform_latency * 1000:g} ms late"
            for target in targets:  # warm up: connections, caches, first calls
                for chat_id in target.chats:
                    await _timed(rig, target, chat_id)
            for load, block, rate, width in (
                (figures.streaming, stream_block, None, stream_chats),
                (figures.paced, paced_block, paced_rate, paced_chats),
            ):
                for cycle in range(cycles):
                    # Forward, then backward: no bot always follows the same other one.
                    for target in targets if cycle % 2 == 0 else targets[::-1]:
                        narrowed = replace(target, chats=target.chats[:width])
                        sample = await measure(rig, narrowed, block, rate=rate)
                        load.setdefault(target.variant, []).append(sample)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.anchors", description=__doc__)
    parser.add_argument("--cycles", type=int, default=CYCLES)
    parser.add_argument("--block", type=int, default=STREAM_BLOCK, help="streamed, per bot")
    parser.add_argument("--paced-block", type=int, default=PACED_BLOCK, help="paced, per bot")
    parser.add_argument(
        "--platform-latency",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="the library stand-ins answer this late (production: tens of ms); default 0",
    )
    parser.add_argument(
        "--serve", nargs=3, metavar=("KIND", "TOKEN", "URL"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.serve:
        return serve(*args.serve)
    figures = asyncio.run(
        run(args.cycles, args.block, args.paced_block, platform_latency=args.platform_latency)
    )
    print("\n".join(figures.lines()), flush=True)
    return 0 if figures.met else 1


if __name__ == "__main__":
    raise SystemExit(main())
