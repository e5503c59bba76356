"""A rig for sweeps: the library sandbox, the Telegram stand-in, a real store and client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import pytest
from telegram import Bot

from bot.config.settings import Settings
from bot.jobs.delivery import Deliverer
from bot.jobs.sweep import SweepReport, sweep
from bot.library.client import LibraryClient
from bot.services import Services
from bot.telegram.deliver import TelegramDeliverer
from sandbox.library import LibrarySandbox
from sandbox.telegram import TelegramStandIn
from storage.store import Store
from tests.fixtures.bot import IN_PROCESS, chosen_bot_api
from tests.fixtures.database import key_text
from tests.fixtures.telegram import TEST_BOT_TOKEN


@dataclass
class Rig:
    sandbox: LibrarySandbox
    telegram: TelegramStandIn
    store: Store
    library: LibraryClient
    bot: Bot
    settings: Settings

    async def connect(self, chat_id: int, user_id: str, *, language: str = "da") -> str:
        """A connected patron, the way `/start <code>` leaves one; returns the token."""
        self.telegram.add_chat(chat_id, language_code=language)
        token = self.sandbox.issue_token(user_id)
        code = await self.store.create_pending_link(chat_id, token, None, {"uniqueId": user_id})
        assert await self.store.complete_link(chat_id, code) is not None
        await self.store.chats.set_language(chat_id, language)
        return token

    def deliverer(self, bot: Bot | None = None) -> TelegramDeliverer:
        """The chat's deliverer, as `run` hands it to the jobs, sending through `bot`."""
        return TelegramDeliverer(bot or self.bot, Services(self.settings, self.store, self.library))

    async def sweep(
        self, *, bot: Bot | None = None, deliverer: Deliverer[Any] | None = None, **kwargs: Any
    ) -> SweepReport:
        """A sweep sending through `bot` (the rig's by default), or through `deliverer`."""
        kwargs.setdefault("today", self.sandbox.today)
        return await sweep(
            store=self.store,
            library=self.library,
            deliverer=deliverer or self.deliverer(bot),
            settings=self.settings,
            **kwargs,
        )

    def texts(self, chat_id: int) -> list[str]:
        return [message.text for message in self.telegram.sent(chat_id)]

    def day(self, days: int) -> date:
        """The sandbox's today plus `days`."""
        return self.sandbox.today + timedelta(days=days)


def rig_settings(
    sandbox: LibrarySandbox, telegram: TelegramStandIn, database_url: str, keys: list[bytes]
) -> Settings:
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        **sandbox.env(),
        TELEGRAM_BOT_TOKEN=TEST_BOT_TOKEN,
        TELEGRAM_API_URL=telegram.url,
        DATABASE_URL=database_url,
        TOKEN_KEYS=",".join(key_text(key) for key in keys),
        PUBLIC_URL="http://127.0.0.1:9",
        SWEEP_CONCURRENCY=4,
        HTTP_PROXY=None,
        HTTPS_PROXY=None,
        ALL_PROXY=None,
    )


@pytest.fixture
async def rig(
    library_sandbox: LibrarySandbox,
    telegram: TelegramStandIn,
    database_url: str,
    store_keys: list[bytes],
    bot_api: str,
) -> AsyncIterator[Rig]:
    settings = rig_settings(library_sandbox, telegram, database_url, store_keys)
    store = await Store.open(database_url, store_keys)
    library = LibraryClient.from_settings(settings)
    request = telegram.request() if bot_api == IN_PROCESS else None
    bot = Bot(TEST_BOT_TOKEN, base_url=f"{telegram.url}/bot", request=request)
    try:
        async with bot:
            yield Rig(library_sandbox, telegram, store, library, bot, settings)
    finally:
        await library.aclose()
        await store.close()


@pytest.fixture
def bot_api(request: pytest.FixtureRequest) -> str:
    """Handler tests: the bot reaches the Bot API stand-in in-process (tests/fixtures/bot.py)."""
    return chosen_bot_api(request, IN_PROCESS)
