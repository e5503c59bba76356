"""Helpers for the production tests: scraping metrics, a load balancer, patrons made directly."""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import pytest
from aiohttp import web
from prometheus_client.parser import text_string_to_metric_families

from bot.config.settings import Settings, decode_key
from bot.runtime.runner import BotInfo, run_bot
from storage.migrate import upgrade
from storage.store import Store
from tests.fixtures.bot import LAST_MOMENT, library_environment, new_key
from tests.fixtures.telegram import TEST_BOT_TOKEN

WEBHOOK_SECRET = "webhook-Secret_0123456789abcdef"

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


async def scrape(http: httpx.AsyncClient, web_url: str) -> Samples:
    """`GET /metrics`, parsed by prometheus_client's own parser (so the format must be valid)."""
    response = await http.get(f"{web_url}/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sample `name{labels}` (0 when absent, as a counter not yet touched)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def total(samples: Samples, name: str, **labels: str) -> float:
    """Sum of every `name` sample whose labels include `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= ls)


async def wait_for_call(sandbox: Any, name: str, count: int, timeout: float = 5) -> None:  # noqa: ASYNC109
    """Until the library sandbox has seen `count` requests `name` ("platform GET /v3/user")."""
    async with asyncio.timeout(timeout):
        while sandbox.calls[name] < count:  # noqa: ASYNC110 (the sandbox has no event for it)
            await asyncio.sleep(0.01)


ROOT = Path(__file__).resolve().parents[2]


def process_environment(
    sandbox: Any, telegram: Any, database_url: str, key: str, **extra: str
) -> dict[str, str]:
    """The environment of a real `library-bot run` against the sandbox and the stand-in: no
    reminder before the day's last moment unless `extra` says otherwise."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        **library_environment(sandbox),
        "TELEGRAM_BOT_TOKEN": TEST_BOT_TOKEN,
        "TELEGRAM_API_URL": telegram.url,
        "HOST": "127.0.0.1",
        "PORT": "0",
        "DATABASE_URL": database_url,
        "TOKEN_KEYS": key,
        "LOG_LEVEL": "INFO",
        "REMINDER_TIME": LAST_MOMENT,
        **extra,
    }


READY = re.compile(r"running .*web server at (http://\S+)")


@dataclass
class BotProcess:
    """A real `library-bot run`: the process, its log lines so far, and its web address."""

    process: asyncio.subprocess.Process
    lines: list[str]
    web_url: str


@asynccontextmanager
async def bot_process(
    env: dict[str, str],
    cwd: Path,
    *,
    preexec_fn: Callable[[], None] | None = None,
    wrapper: Sequence[str] = (),
    ready_within: float = 20,
) -> AsyncIterator[BotProcess]:
    """`library-bot run` as a process, once its web server runs, until the block ends (SIGTERM
    unless it has exited); `wrapper` goes before the command (a tracer, say)."""
    process = await asyncio.create_subprocess_exec(
        *wrapper,
        sys.executable,
        "-m",
        "bot.cli",
        "run",
        env=env,
        cwd=cwd,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        preexec_fn=preexec_fn,
    )
    assert process.stderr is not None
    stderr = process.stderr
    lines: list[str] = []

    async def drain() -> None:
        while raw := await stderr.readline():
            lines.append(raw.decode(errors="replace"))

    reader = asyncio.create_task(drain())
    try:
        async with asyncio.timeout(ready_within):
            while not (found := [m for line in lines if (m := READY.search(line))]):
                if reader.done():
                    raise AssertionError("the bot exited early:\n" + "".join(lines))
                await asyncio.sleep(0.05)
        yield BotProcess(process, lines, found[0].group(1))
    finally:
        if process.returncode is None:
            process.terminate()
        async with asyncio.timeout(15):
            await process.wait()
        await reader


def make_settings(telegram: Any, sandbox: Any, database_url: str, **overrides: Any) -> Settings:
    """Settings for a bot against the stand-ins, as `bot_factory` makes them."""
    values: dict[str, Any] = {
        **library_environment(sandbox),
        "TELEGRAM_BOT_TOKEN": TEST_BOT_TOKEN,
        "TELEGRAM_API_URL": telegram.url,
        "HOST": "127.0.0.1",
        "PORT": 0,
        "PUBLIC_URL": None,
        "WEBHOOK_SECRET": None,
        "DATABASE_URL": database_url,
        "TOKEN_KEYS": new_key(),
        "LOG_LEVEL": "DEBUG",
        "REMINDER_TIME": LAST_MOMENT,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@dataclass
class Running:
    """A `run_bot` task the test stops itself (to watch the shutdown)."""

    settings: Settings
    info: BotInfo
    stop: asyncio.Event
    task: asyncio.Task[None]


async def start_bot(settings: Settings) -> Running:
    stop = asyncio.Event()
    ready: asyncio.Future[BotInfo] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(run_bot(settings, stop=stop, on_ready=ready.set_result))
    done, _ = await asyncio.wait({task, ready}, timeout=15, return_when=asyncio.FIRST_COMPLETED)
    if ready not in done:
        stop.set()
        if task.done():
            task.result()
        raise AssertionError("the bot did not start in time")
    return Running(settings, ready.result(), stop, task)


@pytest.fixture
async def started() -> AsyncIterator[list[Running]]:
    """Bots started with `start_bot` are appended here and stopped at teardown."""
    bots: list[Running] = []
    yield bots
    for running in reversed(bots):
        running.stop.set()
    for running in bots:
        await asyncio.wait_for(running.task, 12)


async def connect_directly(
    store: Store, sandbox: Any, telegram: Any, chat_id: int, user_id: str
) -> str:
    """A connected patron as `/start <code>` leaves one, without the browser; the token."""
    telegram.add_chat(chat_id, language_code="da")
    token: str = sandbox.issue_token(user_id)
    code = await store.create_pending_link(chat_id, token, None, {"uniqueId": user_id})
    assert await store.complete_link(chat_id, code) is not None
    return token


async def connected_database(url: str, sandbox: Any, telegram: Any, patrons: dict[int, str]) -> str:
    """A migrated database at `url` with each chat's patron connected (`connect_directly`);
    the token key it is sealed under, for the bot process's `TOKEN_KEYS`."""
    key = new_key()
    await upgrade(url)
    store = await Store.open(url, [decode_key(key)])
    try:
        for chat_id, user_id in patrons.items():
            await connect_directly(store, sandbox, telegram, chat_id, user_id)
    finally:
        await store.close()
    return key


class LoadBalancer:
    """A reverse proxy on loopback that sends each request to the backend the test picks
    (`route_to`), or round-robin when none is picked; like a real one, it keeps nothing."""

    def __init__(self) -> None:
        self.backends: list[str] = []
        self.pinned: int | None = None
        self.url = ""
        self.log: list[tuple[str, int]] = []
        self._turn = itertools.count()
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None

    def route_to(self, index: int | None) -> None:
        self.pinned = index

    async def start(self) -> None:
        app = web.Application(client_max_size=1 << 20)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._session = aiohttp.ClientSession(auto_decompress=False)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        if not self.backends:
            return web.Response(status=502, text="no backends")
        index = self.pinned if self.pinned is not None else next(self._turn) % len(self.backends)
        self.log.append((request.path, index))
        assert self._session is not None
        headers = {
            k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")
        }
        async with self._session.request(
            request.method,
            f"{self.backends[index]}{request.rel_url}",
            headers=headers,
            data=await request.read(),
            allow_redirects=False,
        ) as upstream:
            body = await upstream.read()
            passed = {
                k: v
                for k, v in upstream.headers.items()
                if k.lower() not in ("content-length", "transfer-encoding", "connection")
            }
            return web.Response(status=upstream.status, body=body, headers=passed)


@pytest.fixture
async def load_balancer() -> AsyncIterator[LoadBalancer]:
    balancer = LoadBalancer()
    await balancer.start()
    try:
        yield balancer
    finally:
        await balancer.stop()
