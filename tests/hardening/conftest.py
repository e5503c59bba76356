"""Helpers shared by the hardening tests: talk to the running bot, read texts, run sweeps."""

from __future__ import annotations

import asyncio
import html
import re
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from telegram import Bot

from bot.jobs.sweep import SweepReport, sweep
from bot.library.client import LibraryClient
from bot.telegram.request import AiohttpRequest
from bot.texts import load_catalogue
from tests.fixtures.bot import BotHarness

ANSWER_SECONDS = 10.0
QUIET_SECONDS = 0.4  # how long to wait for a second, unwanted answer

CATALOGUE = load_catalogue()
_TAG = re.compile(r"<[^>]*>")
_PLACEHOLDER = re.compile(r"\{[^}]*\}")


def fragment(lang: str, key: str) -> str:
    """The longest fixed piece of a catalogue text, as the patron sees it (tags removed)."""
    pieces = [
        html.unescape(_TAG.sub("", piece)).strip()
        for piece in _PLACEHOLDER.split(CATALOGUE[lang][key])
    ]
    return max(pieces, key=len)


def says(message: Any, lang: str, *keys: str) -> bool:
    """True when `message` shows one of the catalogue texts `keys` in `lang`."""
    return any(fragment(lang, key) in message.text for key in keys)


async def answers(
    bot: BotHarness,
    chat_id: int,
    action: Callable[[], Any],
    *,
    count: int = 1,
    timeout: float = ANSWER_SECONDS,  # noqa: ASYNC109
    quiet: float = QUIET_SECONDS,
) -> list[Any]:
    """Run `action` (a send or a tap); the bot's new messages once `count` came and all is quiet.

    Edits of earlier messages count too (a tapped button may edit its message).
    """
    before = {m.message_id: m.edits for m in bot.telegram.sent(chat_id)}
    loop = asyncio.get_running_loop()
    started = loop.time()
    result = action()
    if asyncio.iscoroutine(result):
        await result

    def changed() -> list[Any]:
        return [m for m in bot.telegram.sent(chat_id) if before.get(m.message_id) != m.edits]

    async with asyncio.timeout(timeout):
        while True:
            if len(changed()) >= count:
                break
            await asyncio.sleep(0.01)
    assert loop.time() - started < timeout
    await asyncio.sleep(quiet)
    return changed()


async def send(bot: BotHarness, chat_id: int, text: str, **kwargs: Any) -> list[Any]:
    return await answers(bot, chat_id, lambda: bot.telegram.send_text(chat_id, text), **kwargs)


async def tap(bot: BotHarness, chat_id: int, message: Any, label: str, **kwargs: Any) -> list[Any]:
    data = message.button(label).callback_data
    return await answers(
        bot, chat_id, lambda: bot.telegram.tap(chat_id, message.message_id, data), **kwargs
    )


async def callback_answer(bot: BotHarness, query_id: str, timeout: float = 5) -> dict[str, Any]:  # noqa: ASYNC109
    """The bot's answer to a button tap (the notice Telegram shows briefly)."""
    async with asyncio.timeout(timeout):
        while True:
            if query_id in bot.telegram.callback_answers:
                return dict(bot.telegram.callback_answers[query_id])
            await asyncio.sleep(0.01)


def sqlite_path(database_url: str) -> str:
    return database_url.split(":///", 1)[1]


@asynccontextmanager
async def database_locked(database_url: str, seconds: float) -> AsyncIterator[None]:
    """Another process's connection holds an exclusive write lock for `seconds`."""
    taken = threading.Event()

    def hold() -> None:
        connection = sqlite3.connect(sqlite_path(database_url), timeout=5, isolation_level=None)
        try:
            connection.execute("BEGIN EXCLUSIVE")
            taken.set()
            threading.Event().wait(seconds)
            connection.execute("ROLLBACK")
        finally:
            connection.close()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    await asyncio.to_thread(taken.wait, 5)
    try:
        yield
    finally:
        await asyncio.to_thread(thread.join, seconds + 5)


@asynccontextmanager
async def sweeper(
    bot: BotHarness, *, read_timeout: float = 5.0
) -> AsyncIterator[Callable[[], Any]]:
    """A reminder sweep over the running bot's database, as `library-bot remind --once` runs it."""
    library = LibraryClient.from_settings(bot.settings)
    assert bot.settings.TELEGRAM_BOT_TOKEN is not None
    telegram = Bot(
        bot.settings.TELEGRAM_BOT_TOKEN.get_secret_value(),
        base_url=f"{bot.settings.TELEGRAM_API_URL}/bot",
        request=AiohttpRequest(read_timeout=read_timeout, connect_timeout=2.0),
    )

    async def run() -> SweepReport:
        return await sweep(
            store=bot.store,
            library=library,
            bot=telegram,
            settings=bot.settings,
            today=bot.sandbox.today,
            worker="hardening",
            # No lease: a patron left unfinished is taken again by the next sweep at once.
            lease=timedelta(0),
        )

    async with telegram:
        try:
            yield run
        finally:
            await library.aclose()
