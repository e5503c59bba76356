"""Load: 500 patrons log in at once, over real HTTP, and each ends up in their own chat only.

Every patron is a synthetic sandbox user with a name of their own. The journey is the one a
person makes: `/login` in the chat, the sandbox's login form, the redirect to the bot's OAuth
callback, and `/start <code>` back in the chat. Afterwards each chat's stored token is asked
for `/v3/user`, and the name and uniqueId that come back must be that chat's patron.

Everything runs in this process (the library sandbox, the Bot API stand-in and the real
`run_bot`), on loopback. Run alone with `python -m bench.callbacks [--patrons N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx

from bot.config.settings import Settings, new_key
from bot.runtime import loop
from bot.runtime.runner import BotInfo, run_bot
from bot.runtime.signals import stop_on_signals
from bot.runtime.startup import freeze_start_up_heap
from bot.telegram.ratelimit import SEND_RATE
from sandbox.library import LibrarySandbox, TestPatron
from sandbox.library.data import GUID_NAMESPACE
from sandbox.telegram import SentMessage, TelegramStandIn
from sandbox.telegram.messages import TELEGRAM_RATE
from storage.store import Store

BOT_TOKEN = "123456:BENCH-token"
PATRONS = 500
CONCURRENCY = 50
FIRST_CHAT = 7_000_000
STEP_TIMEOUT = 30.0
DEEP_LINK = re.compile(r"[?&]start=([A-Za-z0-9_-]+)")
URL_IN_TEXT = re.compile(r"https?://\S+")


class _Form(HTMLParser):
    """The hidden inputs of the sandbox's login form and where it posts to."""

    def __init__(self) -> None:
        super().__init__()
        self.action = ""
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "form" and not self.action:
            self.action = values.get("action", "")
        elif tag == "input" and values.get("type") == "hidden" and values.get("name"):
            self.fields[values["name"]] = values.get("value", "")


@dataclass
class Rig:
    """The three parts of a demo, started in this process."""

    sandbox: LibrarySandbox
    telegram: TelegramStandIn
    settings: Settings
    info: BotInfo
    store: Store
    bot_pid: int | None = None


def _settings(
    sandbox: LibrarySandbox, telegram: TelegramStandIn, directory: str, *, throttle: bool
) -> Settings:
    key = new_key()
    values: dict[str, Any] = {
        **sandbox.env(),
        "TELEGRAM_BOT_TOKEN": BOT_TOKEN,
        "TELEGRAM_API_URL": telegram.url,
        "HOST": "127.0.0.1",
        "PORT": 0,
        "DATABASE_URL": f"sqlite+aiosqlite:///{Path(directory) / 'bench.db'}",
        "TOKEN_KEYS": key,
        "LOG_LEVEL": "WARNING",
        # Telegram's 30 messages/s is its limit, not the bot's cost: with the pace on, every
        # figure here would read 30/s. Retries on 429 stay as in production.
        "TELEGRAM_SEND_RATE": SEND_RATE if throttle else 0,
    }
    return Settings(_env_file=None, **values)


def _environment(settings: Settings) -> dict[str, str]:
    """`settings` as the environment variables a bot process reads."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    for name, value in settings.model_dump(exclude_none=True).items():
        if name in ("TOKEN_KEYS", "REMINDER_DAYS"):
            value = ",".join(
                v.get_secret_value() if hasattr(v, "get_secret_value") else str(v) for v in value
            )
        elif hasattr(value, "get_secret_value"):
            value = value.get_secret_value()
        env[name] = str(value)
    return env


async def _start_in_process(
    settings: Settings, stop: asyncio.Event
) -> tuple[asyncio.Task[None], BotInfo]:
    ready: asyncio.Future[BotInfo] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(run_bot(settings, stop=stop, on_ready=ready.set_result))
    waiting: list[asyncio.Future[Any]] = [task, ready]
    await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
    if not ready.done():
        task.result()  # raises what stopped the bot
    return task, ready.result()


async def _start_subprocess(settings: Settings) -> tuple[asyncio.subprocess.Process, BotInfo]:
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.callbacks",
        "--serve-bot",
        env=_environment(settings),
        stdout=asyncio.subprocess.PIPE,
    )
    assert child.stdout is not None
    line = await asyncio.wait_for(child.stdout.readline(), 60)
    if not line.startswith(b"READY "):
        await child.wait()
        raise RuntimeError("the bot process did not start")
    _, web_url, username = line.decode().split()
    return child, BotInfo(web_url, web_url, username)


@contextlib.asynccontextmanager
async def running_rig(
    *,
    latency: float = 0.0,
    sandbox: LibrarySandbox | None = None,
    throttle: bool = False,
    subprocess: bool = False,
) -> AsyncIterator[Rig]:
    """Sandbox, stand-in and bot (SQLite in a temporary directory); stopped on exit.

    With `subprocess=True` the bot runs in a process of its own (`Rig.bot_pid`), so its CPU
    can be pinned and counted apart from the stand-ins and the load generator.
    """
    sandbox = sandbox or LibrarySandbox()
    # Telegram's send limits only where the bot paces itself (`throttle`): unpaced, the stand-in
    # would answer 429s, and the figures would be of Telegram's limits, not of the bot.
    telegram = TelegramStandIn(rate_limit=TELEGRAM_RATE if throttle else None)
    telegram.add_bot(BOT_TOKEN, username="library_bench_bot")
    with tempfile.TemporaryDirectory(prefix="library-bot-bench-") as directory:
        await sandbox.start()
        await telegram.start()
        stop = asyncio.Event()
        task: asyncio.Task[None] | None = None
        child: asyncio.subprocess.Process | None = None
        store: Store | None = None
        try:
            if latency:
                sandbox.faults.latency["*"] = latency
            settings = _settings(sandbox, telegram, directory, throttle=throttle)
            if subprocess:
                child, info = await _start_subprocess(settings)
            else:
                task, info = await _start_in_process(settings, stop)
            store = await Store.open(settings.DATABASE_URL, settings.token_keys)
            yield Rig(sandbox, telegram, settings, info, store, child.pid if child else None)
        finally:
            stop.set()
            if task is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(task, 15)
            if child is not None and child.returncode is None:
                child.send_signal(signal.SIGTERM)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(child.wait(), 15)
                if child.returncode is None:
                    child.kill()
            if store is not None:
                await store.close()
            await telegram.stop()
            await sandbox.stop()


def serve_bot() -> int:
    """The bot of a subprocess rig: settings from the environment, until SIGTERM."""
    from bot.config.settings import load_settings

    settings = load_settings(_env_file=None)

    async def serve() -> None:
        def ready(info: BotInfo) -> None:
            freeze_start_up_heap()  # as `library-bot run` does
            print(f"READY {info.web_url} {info.bot_username}", flush=True)

        with stop_on_signals() as stop:
            await run_bot(settings, stop=stop, on_ready=ready)

    profile_to = os.environ.get("BENCH_PROFILE")
    if not profile_to:
        loop.run(serve())  # on the loop `library-bot run` has
        return 0
    import cProfile  # where the library_bot's time goes: `python -m pstats <file>`

    with cProfile.Profile() as profiler:
        loop.run(serve())
    profiler.dump_stats(profile_to)
    return 0


async def say(telegram: TelegramStandIn, chat_id: int, text: str) -> SentMessage:
    """Type `text` in the chat; the bot's next message there."""
    sent = telegram.sent(chat_id)
    after = sent[-1].message_id if sent else 0
    await telegram.send_text(chat_id, text)
    return await telegram.wait_for(chat_id, lambda _: True, after=after, timeout=STEP_TIMEOUT)


def login_link(reply: SentMessage) -> str:
    for row in reply.buttons:
        for button in row:
            if button.url:
                return button.url
    found = URL_IN_TEXT.search(reply.text)
    if found is None:
        raise AssertionError(f"no login link in {reply.text!r}")
    return found.group(0)


async def journey(rig: Rig, chat_id: int, patron: TestPatron) -> None:
    """One patron's whole login, with a browser (cookie jar) of their own."""
    telegram = rig.telegram
    telegram.add_chat(chat_id, first_name=f"Chat {chat_id}")
    authorize = login_link(await say(telegram, chat_id, "/login"))
    async with httpx.AsyncClient(timeout=STEP_TIMEOUT) as browser:
        form_page = await browser.get(authorize)
        form_page.raise_for_status()
        form = _Form()
        form.feed(form_page.text)
        query = {k: v[0] for k, v in parse_qs(urlsplit(authorize).query).items()}
        fields = {**query, **form.fields}
        fields.update(user_id=patron.user_id, pin=patron.pin, action="login", agency="")
        redirect = await browser.post(
            urljoin(authorize, form.action or "/oauth/authorize"), data=fields
        )
        if redirect.status_code not in (302, 303):
            raise AssertionError(f"login form answered {redirect.status_code}")
        page = await browser.get(redirect.headers["location"])
        page.raise_for_status()
    code = DEEP_LINK.search(page.text)
    if code is None:
        raise AssertionError("no deep link on the callback page")
    done = await say(telegram, chat_id, f"/start {code.group(1)}")
    if "✅" not in done.text:
        raise AssertionError(f"not connected: {done.text!r}")


@dataclass
class Result:
    patrons: int
    connected: int
    cross_wired: int
    failed: int
    seconds: float

    def lines(self) -> list[str]:
        rate = self.connected / self.seconds if self.seconds else 0.0
        return [
            f"callbacks: {self.patrons} patrons logged in concurrently "
            f"(at most {CONCURRENCY} at once)",
            f"  connected to their own chat   {self.connected}/{self.patrons}",
            f"  cross-wired chats             {self.cross_wired} (bound 0: "
            f"{'met' if self.cross_wired == 0 else 'MISSED'})",
            f"  journeys failed               {self.failed}",
            f"  elapsed                       {self.seconds:.1f} s ({rate:.0f} logins/s)",
        ]


async def verify(rig: Rig, chats: dict[int, TestPatron]) -> tuple[int, int]:
    """(connected correctly, cross-wired): each chat's token must show its own patron."""
    good = crossed = 0
    async with httpx.AsyncClient(timeout=STEP_TIMEOUT) as http:
        for chat_id, patron in chats.items():
            card = await rig.store.cards.get(chat_id)
            if card is None:
                continue
            answer = await http.get(
                f"{rig.settings.PLATFORM_URL}/v3/user", params={"access_token": card.token}
            )
            name = answer.json().get("data", {}).get("name")
            expected_guid = str(uuid.uuid5(GUID_NAMESPACE, patron.user_id))
            same = name == patron.name and card.unique_id == expected_guid
            good += same
            crossed += not same
    return good, crossed


async def run(patrons: int = PATRONS, concurrency: int = CONCURRENCY) -> Result:
    async with running_rig() as rig:
        people = rig.sandbox.add_patrons(patrons)
        chats = {FIRST_CHAT + i: patron for i, patron in enumerate(people)}
        gate = asyncio.Semaphore(concurrency)
        failed = 0

        async def one(chat_id: int, patron: TestPatron) -> None:
            nonlocal failed
            async with gate:
                try:
                    await journey(rig, chat_id, patron)
                except (AssertionError, TimeoutError, httpx.HTTPError) as exc:
                    failed += 1
                    print(f"  chat {chat_id}: {type(exc).__name__}: {str(exc)[:120]}")

        started = time.perf_counter()
        await asyncio.gather(*(one(chat, patron) for chat, patron in chats.items()))
        seconds = time.perf_counter() - started
        good, crossed = await verify(rig, chats)
    return Result(patrons, good, crossed, failed, seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.callbacks", description=__doc__)
    parser.add_argument("--patrons", type=int, default=PATRONS)
    parser.add_argument("--concurrency", type=int, default=CONCURRENCY)
    parser.add_argument("--serve-bot", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_bot:
        return serve_bot()
    result = loop.run(run(args.patrons, args.concurrency))  # the bot runs in this process
    print("\n".join(result.lines()))
    ok = result.cross_wired == 0 and result.connected == result.patrons
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
