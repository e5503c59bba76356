"""Two `run` processes in webhook mode behind a load balancer, on one PostgreSQL database."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from telegram import Bot

from bot.jobs.sweep import SweepReport, sweep
from bot.library.client import LibraryClient
from bot.services import Services
from bot.telegram.deliver import TelegramDeliverer
from storage.store import Store
from tests.fixtures.bot import DEEP_LINK, BotFactory, new_key
from tests.fixtures.patrons import JONAS, KAREN
from tests.fixtures.telegram import TEST_BOT_TOKEN
from tests.runtime.conftest import (
    WEBHOOK_SECRET,
    LoadBalancer,
    connect_directly,
    make_settings,
    scrape,
    value,
)

pytestmark = pytest.mark.postgres

CHAT = 7601


async def test_login_started_on_one_process_finishes_on_the_other(
    bot_factory: BotFactory, postgres_url: str, load_balancer: LoadBalancer
) -> None:
    shared = {
        "DATABASE_URL": postgres_url,
        "WEBHOOK_SECRET": WEBHOOK_SECRET,
        "PUBLIC_URL": load_balancer.url,
        "TOKEN_KEYS": new_key(),  # one configuration for every process
    }
    first = await bot_factory(**shared)
    second = await bot_factory(**shared)
    assert first.info.web_url != second.info.web_url
    load_balancer.backends = [first.info.web_url, second.info.web_url]

    first.add_chat(CHAT)
    load_balancer.route_to(0)
    authorize = await first.login_url(CHAT)  # /login handled by the first
    assert f"redirect_uri={load_balancer.url}" in authorize.replace("%3A", ":").replace("%2F", "/")
    load_balancer.route_to(1)
    redirect = await first.log_in_at_library(authorize, KAREN)
    page = await first.follow(redirect)  # the callback lands on the second
    assert page.status_code == 200, page.text[:300]
    found = DEEP_LINK.search(page.text)
    assert found is not None
    done = await first.send(CHAT, f"/start {found.group(1)}")  # and so does /start <code>
    assert "✅" in done.text
    load_balancer.route_to(0)
    loans = await first.send(CHAT, "/loans")  # the first reads what the second stored
    assert "Kongens fald" in loans.text

    one = await scrape(first.http, first.info.web_url)
    two = await scrape(second.http, second.info.web_url)
    assert value(one, "library_bot_updates_total", command="login") == 1
    assert value(one, "library_bot_updates_total", command="start") == 0
    assert value(two, "library_bot_updates_total", command="start") == 1
    assert value(one, "library_bot_updates_total", command="loans") == 1
    assert value(one, "library_bot_connected_patrons") == 1
    assert ("/oauth/callback", 1) in load_balancer.log
    assert ("/telegram/webhook", 0) in load_balancer.log


async def test_a_sweep_from_both_sends_each_reminder_once(
    postgres_url: str, library_sandbox: Any, telegram: Any
) -> None:
    settings = make_settings(telegram, library_sandbox, postgres_url, SWEEP_CONCURRENCY=1)
    setup = await Store.open(postgres_url, settings.token_keys)
    chats: dict[int, str] = {}
    try:
        for offset in range(8):
            chat_id = CHAT + 10 + offset
            patron = KAREN if offset % 2 else JONAS
            await connect_directly(setup, library_sandbox, telegram, chat_id, patron)
            chats[chat_id] = patron
    finally:
        await setup.close()
    library_sandbox.faults.latency["platform"] = 0.1  # long enough for the two to interleave

    async def process(worker: str) -> SweepReport:
        store = await Store.open(postgres_url, settings.token_keys)
        library = LibraryClient.from_settings(settings)
        try:
            async with Bot(TEST_BOT_TOKEN, base_url=f"{telegram.url}/bot") as bot:
                return await sweep(
                    store=store,
                    library=library,
                    deliverer=TelegramDeliverer(bot, Services(settings, store, library)),
                    settings=settings,
                    today=library_sandbox.today,
                    worker=worker,
                    batch_size=1,
                )
        finally:
            await library.aclose()
            await store.close()

    reports = await asyncio.gather(process("process-a"), process("process-b"))
    assert sum(report.patrons for report in reports) == len(chats)
    assert all(report.patrons > 0 for report in reports)  # the work was shared
    assert not any(report.failures for report in reports)
    digests = Counter({chat_id: len(telegram.sent(chat_id)) for chat_id in chats})
    assert set(digests.values()) == {1}, digests
    again = await process("process-a")
    assert (again.messages, again.reminders) == (0, 0)


async def test_two_processes_share_telegrams_send_budget(
    bot_factory: BotFactory, postgres_url: str
) -> None:
    shared = {"DATABASE_URL": postgres_url, "WEBHOOK_SECRET": WEBHOOK_SECRET}
    first = await bot_factory(**shared)
    second = await bot_factory(**shared)
    total = first.settings.TELEGRAM_SEND_RATE  # the bot's, not a process's

    async def budget(bot: Any) -> float:
        return value(await scrape(bot.http, bot.info.web_url), "library_bot_telegram_send_budget")

    async with asyncio.timeout(30):  # a few beats of each (runtime.budget.BEAT)
        # Evenly (storage.senders.shares): 13.75 each of 27.5.
        each = total / 2
        while (await budget(first), await budget(second)) != (each, each):  # noqa: ASYNC110
            await asyncio.sleep(0.1)
