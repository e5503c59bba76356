"""`library-bot demo`: the library sandbox, the Telegram stand-in and the bot in one process.

Everything listens on 127.0.0.1. The database and its key live in a local directory
(`.demo/` by default), so a restarted demo keeps its patrons and their settings. The sandbox
keeps its tokens in memory only, so after a restart the bot asks patrons to log in again, as it
would when a real token expires.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from bot.config.logs import setup_logging
from bot.config.settings import (
    Settings,
    SettingsError,
    decode_key,
    new_key,
)
from bot.runtime import maintenance
from bot.runtime.runner import BotInfo, run_bot
from bot.runtime.signals import stop_on_signals
from sandbox.library import LibrarySandbox
from sandbox.library.data import FAMILY_IDS, LIBRARIES, TestPatron
from sandbox.telegram import TelegramStandIn

log = logging.getLogger(__name__)

DEFAULT_DIR = Path(".demo")
DATABASE_FILE = "library-bot.db"
KEY_FILE = "token-key"
DEFAULT_CHAT_PORT = 8080
BOT_USERNAME = "library_demo_bot"
BOT_NAME = "Biblioteksbot"
SWEEP_ACTION = "Run reminder sweep"
EXPIRE_ACTION = "Expire library logins"
LOSE_ACTION = "Lose the next order's answer"
RETURN_ACTION = "Bring lent copies back to the shelf"
START_TIMEOUT = 30.0
STOP_TIMEOUT = 12.0
# The operator's values for these win; everything else is the demo's own wiring.
PASSTHROUGH = (
    "REMINDER_DAYS",
    "REMINDER_TIME",
    "BOT_TIMEZONE",
    "LOG_FORMAT",
    "LOG_LEVEL",
    "LIBRARY_TIMEOUT",
    "SWEEP_CONCURRENCY",
)
# Seconds before a placed order shows up under /holds, as with the real order system.
ORDER_DELAY = 5.0
# What to try, so that each behaviour of the real services shows (printed in the banner).
TRY_THESE = (
    (
        "/order 870970-basis:27015794 DK-710100",
        "any branch of the library that has it: reserve it in its catalogue (owned_own_catalogue)",
    ),
    (
        "/order 870970-basis:27015794 DK-751000",
        f"another library's branch (Dokk1, Aarhus) takes it; under /holds after {ORDER_DELAY:g} s",
    ),
    ("/order 870970-basis:51371213", "a net audiobook: cannot be ordered for pick-up"),
    ("/order 870970-basis:22677608 DK-123456", "no such branch: refused before confirming"),
    (
        "/renew, Renew those due within 3 days",
        "the button says what it renews; the new due dates, what it left; Kongens fald is "
        "reserved by another patron and marked so from then on",
    ),
    ("/loans as patron 1000000003", "a due date sent as dd/mm/yyyy is read and sorted"),
    ("/calendar", "a private calendar feed of the due dates; open it, renew, open it again"),
    (
        "/login as the family, three times",
        "three cards in one chat: /cards names them; /loans, /holds, /debt, /renew and the "
        "reminders show a section per card; /order asks which card",
    ),
    ("/logout, then /login", "a link to end the library login's session; a fresh login next"),
    ("a chat in English", "reminders and login pages in English, with no /language"),
    (f'"{LOSE_ACTION}", then an order', "placed once; the bot says it may have gone through"),
    ("/events, /news", "what is on at the card's library, soonest first; its latest news"),
    ("/recommend", "works like your recent loans, each with an Order button"),
    (
        f'/where, "🔔 Tell me when it is back", "{RETURN_ACTION}", "{SWEEP_ACTION}"',
        "where a title stands; then a ping, once, when its copy comes home",
    ),
    ("karen blixen (no command)", "offered as a search; a bare /search asks for the words"),
    ("/language", "the chat's command menu follows the chosen language"),
    (
        f"@{BOT_USERNAME} hobbit (in the message field)",
        "inline mode: pick a result to share it; its button opens the order confirmation",
    ),
)
# Quieter than `run` unless the operator asks: the console should show the address to open.
DEMO_LOG_LEVEL = "WARNING"


def new_bot_token() -> str:
    """A Bot-API-shaped token (`<digits>:<secret>`) for the stand-in."""
    return f"{secrets.randbelow(9 * 10**9) + 10**9}:{secrets.token_urlsafe(27)}"


def demo_key(data_dir: Path) -> str:
    """The demo's token key, generated once and kept beside the database (mode 0600)."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = data_dir / KEY_FILE
    if path.exists():
        text = path.read_text(encoding="ascii").strip()
        try:
            decode_key(text)
        except ValueError as exc:
            raise SettingsError(f"{path}: {exc}; delete the demo directory to start over") from None
        return text
    text = new_key()
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="ascii") as handle:
        handle.write(text + "\n")
    return text


def demo_settings(
    base: Settings,
    *,
    data_dir: Path,
    sandbox: LibrarySandbox,
    telegram_url: str,
    bot_token: str,
    token_key: str,
) -> Settings:
    """`base` (the operator's settings) with every address, secret and store set for the demo."""
    values: dict[str, Any] = {name: getattr(base, name) for name in PASSTHROUGH}
    values.update(sandbox.env())
    values.update(
        TELEGRAM_BOT_TOKEN=bot_token,
        TELEGRAM_API_URL=telegram_url,
        TELEGRAM_LINK_URL=f"{telegram_url}/t.me",
        TELEGRAM_TEST_ENVIRONMENT=True,  # the Mini App at the demo's plain-http address
        HOST="127.0.0.1",
        PORT=0,
        PUBLIC_URL=None,  # run_bot fills in the bound port
        WEBHOOK_SECRET=None,
        DATABASE_URL=f"sqlite+aiosqlite:///{(data_dir / DATABASE_FILE).resolve()}",
        TOKEN_KEYS=token_key,
        # Everything the demo calls is on 127.0.0.1: no forward proxy.
        HTTP_PROXY=None,
        HTTPS_PROXY=None,
        ALL_PROXY=None,
        NO_PROXY="",
    )
    # Every field is given, so nothing is read from the environment or `.env` here.
    return Settings(_env_file=None, **values)


@dataclass
class Demo:
    """The running parts; `chat_url` is the one address a person opens."""

    sandbox: LibrarySandbox
    telegram: TelegramStandIn
    settings: Settings
    bot: BotInfo | None = None
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task[None] | None = None
    _cleanup: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)

    @property
    def chat_url(self) -> str:
        return f"{self.telegram.url}/"

    async def lose_next_order_answer(self) -> str:
        """The next order is placed, but its answer is lost (the connection closes)."""
        self.sandbox.faults.lose_next.append("/v3/order")
        return "The next order's answer will be lost: the bot must say it does not know."

    async def run_reminder_sweep(self) -> str:
        """One reminder sweep now (the chat page's button); its one-line summary."""
        if self.bot is None:
            return "The bot is still starting; try again in a moment."
        report = await maintenance.remind_once(self.settings)
        if not report.patrons:
            # As in production, a card is swept once a day: the bot's own sweep may have been
            # first (it sweeps a card soon after it logs in).
            return f"{report.summary()}; each card has had today's sweep already"
        return report.summary()

    async def return_lent_copies(self) -> str:
        """Every copy lent out comes back to its shelf, so a shelf watch can be seen to fire."""
        count = self.sandbox.shelves.return_lent()
        return (
            f"{count} lent copies are back on their shelves: "
            f'"{SWEEP_ACTION}" now tells whoever waits for one.'
        )

    async def expire_library_logins(self) -> str:
        """Make every patron's library token expire, to show how the bot asks to log in again."""
        self.sandbox.expire_all_tokens()
        return "Every library login has expired: the next command asks the patron to log in again."

    async def stop(self) -> None:
        """Stop the bot first (it still talks to both stand-ins while finishing), then the rest."""
        self._stop.set()
        try:
            if self._task is not None:
                await asyncio.wait_for(asyncio.shield(self._task), STOP_TIMEOUT)
        finally:
            await self._cleanup.aclose()


async def start_demo(
    data_dir: Path = DEFAULT_DIR,
    *,
    base: Settings | None = None,
    chat_port: int | None = None,
    bot_token: str | None = None,
    client_secret: str | None = None,
) -> Demo:
    """Start the sandbox, the stand-in and the bot; `chat_port=None` tries 8080, then any port.

    `base` supplies the operator's reminder, time zone, logging and tuning values (the defaults
    when None); the library, Telegram, database and key settings are always the demo's own.
    """
    base = base or Settings(_env_file=None)
    token_key = demo_key(data_dir)
    token = bot_token or new_bot_token()
    cleanup = contextlib.AsyncExitStack()
    try:
        sandbox = LibrarySandbox(
            host="127.0.0.1",
            client_secret=client_secret,
            timezone=base.BOT_TIMEZONE,
            order_delay=ORDER_DELAY,
        )
        await sandbox.start()
        cleanup.push_async_callback(sandbox.stop)
        actions: dict[str, Callable[[], Awaitable[str]]] = {}
        telegram = await _start_stand_in(chat_port, actions)
        cleanup.push_async_callback(telegram.stop)
        telegram.add_bot(token, username=BOT_USERNAME, first_name=BOT_NAME)
        settings = demo_settings(
            base,
            data_dir=data_dir,
            sandbox=sandbox,
            telegram_url=telegram.url,
            bot_token=token,
            token_key=token_key,
        )
        demo = Demo(sandbox=sandbox, telegram=telegram, settings=settings, _cleanup=cleanup)
        actions[SWEEP_ACTION] = demo.run_reminder_sweep
        actions[EXPIRE_ACTION] = demo.expire_library_logins
        actions[LOSE_ACTION] = demo.lose_next_order_answer
        actions[RETURN_ACTION] = demo.return_lent_copies

        ready: asyncio.Future[BotInfo] = asyncio.get_running_loop().create_future()

        def on_ready(info: BotInfo) -> None:
            if not ready.done():
                ready.set_result(info)

        demo._task = asyncio.create_task(run_bot(settings, stop=demo._stop, on_ready=on_ready))
        waiting: set[asyncio.Future[Any]] = {demo._task, ready}
        done, _ = await asyncio.wait(
            waiting, timeout=START_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
        )
        if ready not in done:
            demo._stop.set()
            if demo._task.done():
                demo._task.result()  # raises whatever stopped the bot
                raise RuntimeError("the bot stopped while starting")
            demo._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await demo._task
            raise RuntimeError(f"the bot did not start within {START_TIMEOUT:.0f} s")
        demo.bot = ready.result()
        # The sweep needs the address the bot really serves (reconnect prompts carry links).
        demo.settings = settings.model_copy(update={"PUBLIC_URL": demo.bot.public_url})
        return demo
    except BaseException:
        await cleanup.aclose()
        raise


async def _start_stand_in(
    port: int | None, actions: dict[str, Callable[[], Awaitable[str]]]
) -> TelegramStandIn:
    """The stand-in on `port`; with None, on 8080 when free and otherwise on any free port."""
    for candidate in [DEFAULT_CHAT_PORT, 0] if port is None else [port]:
        # The dict is shared, so actions added once the bot is up appear on the page.
        stand_in = TelegramStandIn(host="127.0.0.1", port=candidate)
        stand_in.actions = actions
        try:
            await stand_in.start()
        except OSError:
            await stand_in.stop()
            if port is not None:
                raise SettingsError(f"PORT: cannot listen on 127.0.0.1:{port} (in use?)") from None
            continue
        return stand_in
    raise RuntimeError("no port for the chat page")  # pragma: no cover - port 0 always binds


@contextlib.asynccontextmanager
async def running_demo(data_dir: Path = DEFAULT_DIR, **options: Any) -> AsyncIterator[Demo]:
    """`start_demo(...)` as an async context manager that always stops what it started."""
    demo = await start_demo(data_dir, **options)
    try:
        yield demo
    finally:
        await demo.stop()


def family_guide(patrons: Sequence[TestPatron]) -> list[str]:
    """How to log the test family's three cards into one chat."""
    libraries = {agency_id: name for agency_id, name, _ in LIBRARIES}
    family = [p for p in patrons if p.user_id in FAMILY_IDS]
    return [
        f"A family in one chat: send /login {len(family)} times, each time logging in as the "
        "next of them",
        "(choose their library on the login page; the chat page's browser stays logged in as",
        "the last one, so type the next one's user id rather than pressing Continue):",
        *(
            f"  {p.user_id} {p.pin}  {p.name:<11} {libraries.get(p.agency, p.agency)} ({p.agency})"
            for p in family
        ),
        "then /cards lists their cards by first name, and /loans, /holds and /debt show a "
        "section per card.",
    ]


def banner(demo: Demo) -> str:
    """What the console shows: the one address to open, then the test patrons."""
    lines = [
        "library-bot demo is running.",
        "",
        f"Open {demo.chat_url} in a browser: it is the Telegram chat with the bot.",
        "Type /start, then /login, and log in as a test patron (at library 710100 unless",
        "said otherwise; the login page lists them too):",
        "",
        *(f"patron {p.user_id} {p.pin} {p.description}" for p in demo.sandbox.patrons),
        "",
        *family_guide(demo.sandbox.patrons),
        "",
        f'"{SWEEP_ACTION}" on the page sends due-date reminders now.',
        "",
        "Try these (as patron 1000000001 unless said otherwise):",
        *(f"  {what:<42} {shows}" for what, shows in TRY_THESE),
        "",
        "Press Ctrl-C to stop.",
    ]
    return "\n".join(lines)


async def serve(
    data_dir: Path,
    *,
    base: Settings,
    chat_port: int | None,
    on_start: Callable[[Demo], None] | None = None,
    out: TextIO | None = None,
) -> int:
    """Run the demo until SIGINT or SIGTERM."""
    token, client_secret = new_bot_token(), secrets.token_urlsafe(24)
    level = base.LOG_LEVEL if "LOG_LEVEL" in base.model_fields_set else DEMO_LOG_LEVEL
    setup_logging(level, base.LOG_FORMAT, secrets=[token, client_secret])
    with stop_on_signals() as stop:
        async with running_demo(
            data_dir, base=base, chat_port=chat_port, bot_token=token, client_secret=client_secret
        ) as demo:
            print(banner(demo), file=out or sys.stdout, flush=True)
            if on_start is not None:
                on_start(demo)
            await stop.wait()
            print("Stopping…", file=out or sys.stdout, flush=True)
    return 0
