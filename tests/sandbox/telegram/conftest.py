"""Shared helpers for the stand-in's tests: a real PTB `Bot` against the `telegram` fixture."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import telegram as tg

from sandbox.telegram import TelegramStandIn
from tests.fixtures.telegram import TEST_BOT_TOKEN

CHAT = 4242


@pytest.fixture
async def bot(telegram: TelegramStandIn) -> AsyncIterator[tg.Bot]:
    """A python-telegram-bot `Bot` talking to the stand-in, with chat `CHAT` open."""
    telegram.add_chat(CHAT, first_name="Karen", language_code="da")
    async with tg.Bot(TEST_BOT_TOKEN, base_url=f"{telegram.url}/bot") as client:
        yield client
