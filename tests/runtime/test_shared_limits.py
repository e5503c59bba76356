"""Three real `library-bot run` processes of one bot on one PostgreSQL, behind a load balancer,
against the Bot API stand-in enforcing Telegram's limits (30 a second per bot, a burst then one
a second per chat): a morning's sweep of many digests and a chat's flood of commands together
draw no 429, because the processes share the bot's limits (`bot.runtime.budget`,
`storage.pace`). Counted, never timed: the stand-in's own count of the 429s it answered."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from sandbox.telegram.messages import CHAT_BURST
from tests.fixtures.patrons import JONAS, KAREN
from tests.runtime.conftest import (
    WEBHOOK_SECRET,
    LoadBalancer,
    bot_process,
    connected_database,
    process_environment,
    scrape,
    total,
    value,
)

pytestmark = pytest.mark.postgres

PROCESSES = 3
DIGEST_CHATS = list(range(7700, 7850))  # 150 digests, five seconds of Telegram's whole budget
ASKING = list(range(7650, 7660))  # chats asking once each during the sweep
FLOODING = 7600  # one chat typing more commands than its burst, spread over the processes
FLOOD = CHAT_BURST + 5
DIGEST = "Påmindelse fra din biblioteksbot"


async def _until(condition: Any, what: str, timeout: float = 120) -> None:  # noqa: ASYNC109
    try:
        async with asyncio.timeout(timeout):
            while not condition():  # noqa: ASYNC110 (the stand-in has no event for it)
                await asyncio.sleep(0.1)
    except TimeoutError:
        raise AssertionError(f"still waiting for {what}") from None


async def test_three_processes_keep_within_telegrams_limits_together(
    library_sandbox: Any,
    telegram: Any,
    postgres_url: str,
    load_balancer: LoadBalancer,
    tmp_path: Path,
) -> None:
    assert telegram.rate_limit is not None  # Telegram's limits, enforced per bot
    patrons = {chat: (KAREN if n % 2 else JONAS) for n, chat in enumerate(DIGEST_CHATS)}
    key = await connected_database(postgres_url, library_sandbox, telegram, patrons)
    for chat in (*ASKING, FLOODING):
        telegram.add_chat(chat, language_code="en")
    env = process_environment(
        library_sandbox,
        telegram,
        postgres_url,
        key,
        WEBHOOK_SECRET=WEBHOOK_SECRET,
        PUBLIC_URL=load_balancer.url,
        # Midnight: whenever the test runs, each process starts after the reminder time and
        # catches up on the day's digests at once.
        REMINDER_TIME="00:00",
        # Claims of 50 chats: the processes share the sweep rather than one taking it all.
        SWEEP_CONCURRENCY="4",
        # The bot's total, shared: two thirds of the stand-in's 30, the rest room for stalls of
        # this test's own event loop, which runs the stand-in, the load balancer and the
        # library sandbox, and bunches what reaches the stand-in when it stalls. Three
        # processes each at 20 would still be twice the stand-in's limit.
        TELEGRAM_SEND_RATE="20",
    )
    async with AsyncExitStack() as stack:
        processes = await asyncio.gather(
            *(
                stack.enter_async_context(bot_process(env, tmp_path, ready_within=40))
                for _ in range(PROCESSES)
            )
        )
        load_balancer.backends = [process.web_url for process in processes]  # round-robin

        # During the sweep: a chat's flood, each command to the next process, and others.
        await _until(
            lambda: any(telegram.sent(chat) for chat in DIGEST_CHATS), "the sweep to begin"
        )
        for _ in range(FLOOD):
            await telegram.send_text(FLOODING, "/help")
        for chat in ASKING:
            await telegram.send_text(chat, "/help")

        await _until(
            lambda: all(telegram.sent(chat) for chat in DIGEST_CHATS), "every chat's digest"
        )
        await _until(lambda: len(telegram.sent(FLOODING)) >= FLOOD, "the flood's replies")
        await _until(lambda: all(telegram.sent(chat) for chat in ASKING), "the replies")
        async with httpx.AsyncClient() as http:
            samples = [await scrape(http, process.web_url) for process in processes]

    # Telegram's limits held: the stand-in refused nothing, and no process met a 429.
    assert telegram.send_rate.refused_by == {}
    assert [total(s, "library_bot_telegram_429_total") for s in samples] == [0] * PROCESSES
    assert not any(
        "Telegram is throttling" in line for process in processes for line in process.lines
    )
    # And the work was done, once: a digest per chat, an answer per command.
    assert {len(telegram.sent(chat)) for chat in DIGEST_CHATS} == {1}
    assert all(DIGEST in telegram.sent(chat)[0].text for chat in DIGEST_CHATS)
    assert len(telegram.sent(FLOODING)) == FLOOD
    assert all("/loans" in message.text for message in telegram.sent(FLOODING))
    assert [len(telegram.sent(chat)) for chat in ASKING] == [1] * len(ASKING)
    # Every process answered commands: the flood's chat was sent to by all three.
    assert all(value(s, "library_bot_updates_total", command="help") > 0 for s in samples)
