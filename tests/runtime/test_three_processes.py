"""Three real `library-bot run` processes in webhook mode behind a load balancer, on one
PostgreSQL database and the Bot API stand-in (issue 36's "Done when")."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.conftest import (
    WEBHOOK_SECRET,
    BotProcess,
    LoadBalancer,
    bot_process,
    connected_database,
    process_environment,
)

pytestmark = pytest.mark.postgres

CHAT = 7701
PROCESSES = 3


@asynccontextmanager
async def _three(env: dict[str, str], cwd: Path) -> AsyncIterator[list[BotProcess]]:
    """Three processes of one bot, started at once; stopped (SIGTERM) at the end."""
    async with AsyncExitStack() as stack:
        started = await asyncio.gather(
            *(stack.enter_async_context(bot_process(env, cwd)) for _ in range(PROCESSES))
        )
        yield list(started)


async def test_one_chats_commands_spread_over_three_processes_are_answered_in_order(
    library_sandbox: Any,
    telegram: Any,
    postgres_url: str,
    load_balancer: LoadBalancer,
    tmp_path: Path,
) -> None:
    key = await connected_database(postgres_url, library_sandbox, telegram, {})
    env = process_environment(
        library_sandbox,
        telegram,
        postgres_url,
        key,
        WEBHOOK_SECRET=WEBHOOK_SECRET,
        PUBLIC_URL=load_balancer.url,
    )
    telegram.add_chat(CHAT, language_code="en")
    # A search waits for the catalogue, /help for nothing: handled at once, each /help would
    # overtake the search before it on another process.
    library_sandbox.faults.latency["platform"] = 0.2
    commands = [f"/search w{n:02}" if n % 2 else "/help" for n in range(1, 16)]
    async with _three(env, tmp_path) as bots:
        load_balancer.backends = [bot.web_url for bot in bots]  # round-robin
        for text in commands:  # back to back: Telegram posts each once the last is answered
            await telegram.send_text(CHAT, text)
        async with asyncio.timeout(40):
            while len(telegram.sent(CHAT)) < len(commands):  # noqa: ASYNC110
                await asyncio.sleep(0.05)

    def asked(text: str) -> str:
        return f"“{text.split()[1]}”" if text.startswith("/search") else "/loans"

    replies = [message.text for message in telegram.sent(CHAT)]
    assert len(replies) == len(commands)
    answered = [next(a for a in map(asked, commands) if a in reply) for reply in replies]
    assert answered == [asked(text) for text in commands]
    # Spread over the three: each took five of the chat's updates.
    posts = [index for path, index in load_balancer.log if path == "/telegram/webhook"]
    assert sorted(posts.count(index) for index in range(PROCESSES)) == [5, 5, 5]
