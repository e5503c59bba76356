"""The harness's bot talks to the Bot API stand-in in-process here."""

from __future__ import annotations

import pytest

from tests.fixtures.bot import IN_PROCESS, chosen_bot_api


@pytest.fixture
def bot_api(request: pytest.FixtureRequest) -> str:
    """Handler tests: the bot reaches the Bot API stand-in in-process (tests/fixtures/bot.py)."""
    return chosen_bot_api(request, IN_PROCESS)
