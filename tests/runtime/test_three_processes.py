"""Three real `library-bot run` processes in webhook mode behind a load balancer, on one
PostgreSQL database and the Bot API stand-in (issue 36's "Done when")."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.config.settings import decode_key
from storage.store import Store
from tests.fixtures.patrons import JONAS, KAREN
from tests.fixtures.storage import rows
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
# The kill -9: this many chats, each with a digest due, swept by three processes whose cards'
# leases last `LEASE` seconds (45 in production) while each card waits `FETCH` on the platform.
SWEPT = 60
FIRST_SWEPT = 7800
LEASE = 3
FETCH = 0.1
DIGEST = "Påmindelse fra din biblioteksbot"


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


async def _leases(store: Store) -> dict[int, tuple[int, datetime]]:
    """Cards leased to a sweeping process now: chat id -> (its process id, lease end)."""
    found = await rows(
        store,
        "SELECT chat_id, lease_owner, lease_until FROM card "
        "WHERE lease_owner IS NOT NULL AND lease_until > :now",
        now=datetime.now(UTC),
    )
    # A worker is "<host>:<process id>:<random>" (jobs.sweep.default_worker).
    return {
        int(str(chat)): (int(str(owner).rsplit(":", 2)[1]), until)
        for chat, owner, until in found
        if isinstance(until, datetime)
    }


async def _stand_in_quiet(telegram: Any) -> None:
    """Until the stand-in has answered every request that reached it."""
    calm = 0
    async with asyncio.timeout(10):
        while calm < 5:
            calm = calm + 1 if telegram.api.in_flight == 0 else 0
            await asyncio.sleep(0.02)


def _signal(bots: list[BotProcess], sent: signal.Signals) -> None:
    for bot in bots:
        if bot.process.returncode is None:
            os.kill(bot.process.pid, sent)


async def test_a_process_killed_mid_sweep_delays_no_reminder_and_sends_none_twice(
    library_sandbox: Any, telegram: Any, postgres_url: str, tmp_path: Path
) -> None:
    chats = {FIRST_SWEPT + n: KAREN if n % 2 else JONAS for n in range(SWEPT)}
    key = await connected_database(postgres_url, library_sandbox, telegram, chats)
    env = process_environment(
        library_sandbox,
        telegram,
        postgres_url,
        key,
        WEBHOOK_SECRET=WEBHOOK_SECRET,
        REMINDER_TIME="00:00",  # each process catches up on the day's sweep as it starts
        SWEEP_LEASE=str(LEASE),
        SWEEP_CONCURRENCY="1",
    )
    library_sandbox.faults.latency["platform"] = FETCH

    def digests(chat_id: int) -> int:
        return sum(DIGEST in message.text for message in telegram.sent(chat_id))

    store = await Store.open(postgres_url, [decode_key(key)])
    try:
        async with _three(env, tmp_path) as bots:
            try:
                # Mid-sweep: digests have gone out, and cards are leased to the sweepers.
                async with asyncio.timeout(30):
                    while sum(map(digests, chats)) < 5 or not await _leases(store):  # noqa: ASYNC110
                        await asyncio.sleep(0.05)
                # The kill at a moment no digest of the victim is between the stand-in and
                # its ledger (Telegram took it, "sent" not yet written): one sent there would
                # be sent again, as the sweep's own crash test shows. All three stopped, the
                # stand-in done with what reached it, the ledger read, or on and again.
                for _ in range(100):
                    _signal(bots, signal.SIGSTOP)
                    await _stand_in_quiet(telegram)
                    leases = await _leases(store)
                    unconfirmed = {
                        int(str(chat))
                        for (chat,) in await rows(
                            store, "SELECT chat_id FROM reminder_log WHERE state = 'intent'"
                        )
                    }
                    if leases and not any(digests(chat) for chat in unconfirmed):
                        break
                    _signal(bots, signal.SIGCONT)
                    await asyncio.sleep(0.1)
                else:
                    raise AssertionError("no moment to kill a sweeper at")
                held: dict[int, list[int]] = {}
                for chat, (pid, _) in leases.items():
                    held.setdefault(pid, []).append(chat)
                victim = next(bot for bot in bots if bot.process.pid == max(held, key=held.get))
                victim.process.kill()  # SIGKILL, stopped or not
                await victim.process.wait()
                killed_at = datetime.now(UTC)
                _signal(bots, signal.SIGCONT)
                # Its cards whose digest had not gone out: only a survivor can send them now.
                owed = {
                    chat: until
                    for chat, (pid, until) in leases.items()
                    if pid == victim.process.pid and not digests(chat)
                }
                assert owed

                async with asyncio.timeout(45):
                    while not all(map(digests, chats)) or await rows(  # noqa: ASYNC110
                        store,
                        "SELECT chat_id FROM card WHERE swept_on IS NULL "
                        "OR lease_owner IS NOT NULL",
                    ):
                        await asyncio.sleep(0.1)
            finally:
                _signal(bots, signal.SIGCONT)
    finally:
        ledger = {
            int(str(chat)): (str(state), sent_at)
            for chat, state, sent_at in await rows(
                store, "SELECT chat_id, state, sent_at FROM reminder_log"
            )
        }
        await store.close()

    # Every chat got its digest exactly once, none twice, none lost.
    assert {chat: digests(chat) for chat in chats} == dict.fromkeys(chats, 1)
    assert {state for state, _ in ledger.values()} == {"sent"}
    # The dead process's cards were taken over once their leases ran out (not before: no
    # second sender), within the bound: a lease and a look for stranded cards (2 x 45 s in
    # production, 2 x LEASE here), well inside the two minutes.
    for chat, until in owed.items():
        sent_at = ledger[chat][1]
        assert isinstance(sent_at, datetime)
        assert until <= sent_at, (chat, until, sent_at)
        assert sent_at - killed_at < timedelta(minutes=2)
