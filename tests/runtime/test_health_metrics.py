"""`GET /health` and `GET /metrics` of a running bot."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections import Counter
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.engine import make_url

from bot.jobs.sweep import SweepReport
from bot.services.metrics import Metrics
from storage.store import Store
from tests.fixtures.bot import BotFactory, BotHarness
from tests.fixtures.patrons import KAREN
from tests.fixtures.storage import connect
from tests.runtime.conftest import (
    Running,
    connect_directly,
    make_settings,
    scrape,
    start_bot,
    total,
    value,
    wait_for_call,
)

CHAT = 7201
OTHER_CHAT = 7202


async def test_health_ok(bot: BotHarness) -> None:
    response = await bot.http.get(f"{bot.info.web_url}/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"] == "ok"
    assert body["telegram"] == "running"
    assert body["mode"] == "polling"
    assert response.headers["Cache-Control"] == "no-store"


async def test_metrics_move_after_a_journey(bot: BotHarness) -> None:
    before = await scrape(bot.http, bot.info.web_url)
    assert value(before, "library_bot_connected_patrons") == 0
    assert total(before, "library_bot_updates_total") == 0

    await bot.connect(CHAT, KAREN)
    await bot.send(CHAT, "/loans")
    await bot.send(CHAT, "/loans")
    bot.sandbox.faults.down.add("platform")
    failed = await bot.send(CHAT, "/debt")
    assert failed.text  # the patron is told, in words
    bot.sandbox.faults.down.clear()

    offer = await bot.send(CHAT, "/renew")
    data = next(
        b.callback_data
        for row in offer.buttons
        for b in row
        if b.callback_data.startswith("renew:")
    )
    await bot.telegram.tap(CHAT, offer.message_id, data)  # renews: ok
    # The answer relabels the tapped button in place (no new message).
    await _until(bot, "library_bot_library_calls_total", 1, endpoint="renew", outcome="ok")
    await bot.telegram.tap(CHAT, offer.message_id, data)  # the same button again: claimed
    await _until(bot, "library_bot_callbacks_total", 1, action="renew", outcome="claimed")
    database = make_url(bot.settings.DATABASE_URL).database
    assert database is not None
    with sqlite3.connect(database) as connection:  # buttons purged, as after /forget
        connection.execute("DELETE FROM callback_ref")
    await bot.telegram.tap(CHAT, offer.message_id, data)
    await _until(bot, "library_bot_callbacks_total", 1, action="renew", outcome="stale")

    after = await scrape(bot.http, bot.info.web_url)
    assert value(after, "library_bot_updates_total", command="loans") == 2
    assert value(after, "library_bot_updates_total", command="login") == 1
    assert value(after, "library_bot_updates_total", command="start") == 1
    assert value(after, "library_bot_updates_total", command="debt") == 1
    assert value(after, "library_bot_updates_total", command="callback") == 3
    assert value(after, "library_bot_update_seconds_count", command="loans") == 2
    assert value(after, "library_bot_update_seconds_sum", command="loans") > 0
    assert value(after, "library_bot_library_calls_total", endpoint="user", outcome="ok") >= 3
    assert value(after, "library_bot_library_calls_total", endpoint="renew", outcome="ok") == 1
    assert (
        value(after, "library_bot_library_errors_total", endpoint="user", kind="unavailable") >= 1
    )
    assert value(after, "library_bot_callbacks_total", action="renew", outcome="ok") == 1
    assert value(after, "library_bot_connected_patrons") == 1
    assert value(after, "library_bot_reminders_sent_total") == 0
    assert value(after, "library_bot_reminder_sweeps_total") == 0


async def test_registries_are_per_process(bot_factory: BotFactory) -> None:
    other_token = "654321:OTHER-token"
    first = await bot_factory()
    first.telegram.add_bot(other_token, username="other_library_bot")
    second = await bot_factory(TELEGRAM_BOT_TOKEN=other_token)
    await first.connect(CHAT, KAREN)
    one = await scrape(first.http, first.info.web_url)
    two = await scrape(second.http, second.info.web_url)
    assert value(one, "library_bot_updates_total", command="login") == 1
    assert value(two, "library_bot_updates_total", command="login") == 0
    assert value(two, "library_bot_connected_patrons") == 0


async def _until(bot: BotHarness, name: str, wanted: float, **labels: str) -> None:
    async with asyncio.timeout(5):
        while value(await scrape(bot.http, bot.info.web_url), name, **labels) < wanted:  # noqa: ASYNC110
            await asyncio.sleep(0.05)


async def test_health_503_while_stopping(
    telegram: Any,
    library_sandbox: Any,
    database_url: str,
    started: list[Running],
    tmp_path: Path,
) -> None:
    """After the stop signal the bot finishes what is in flight and says it is not ready."""
    settings = make_settings(telegram, library_sandbox, database_url)
    store = await Store.open(database_url, settings.token_keys)
    try:
        await connect_directly(store, library_sandbox, telegram, CHAT, KAREN)
    finally:
        await store.close()
    running = await start_bot(settings)
    started.append(running)
    library_sandbox.faults.latency["platform"] = 1.5
    await telegram.send_text(CHAT, "/loans")
    await wait_for_call(library_sandbox, "platform GET /v3/user", 1)
    running.stop.set()
    await asyncio.sleep(0.2)
    async with httpx.AsyncClient() as http:
        health = await http.get(f"{running.info.web_url}/health")
    assert health.status_code == 503
    assert health.json()["status"] != "ok"
    assert health.json()["telegram"] == "stopped"
    assert health.json()["database"] == "ok"
    await asyncio.wait_for(running.task, 10)
    [reply] = telegram.sent(CHAT)
    assert "Kongens fald" in reply.text  # the update in flight was still answered


@pytest.mark.postgres
async def test_health_503_when_the_database_is_gone(
    bot_factory: BotFactory, postgres_url: str
) -> None:
    bot = await bot_factory(DATABASE_URL=postgres_url)
    assert (await bot.http.get(f"{bot.info.web_url}/health")).status_code == 200
    url = make_url(postgres_url)
    admin = await asyncpg.connect(
        host=url.host, port=url.port, user=url.username, database="postgres"
    )
    try:
        await admin.execute(f'ALTER DATABASE "{url.database}" ALLOW_CONNECTIONS false')
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
            url.database,
        )
        health = await bot.http.get(f"{bot.info.web_url}/health")
        assert health.status_code == 503
        assert health.json()["database"] == "failing"
        assert health.json()["telegram"] == "running"
        metrics = await bot.http.get(f"{bot.info.web_url}/metrics")
        assert metrics.status_code == 200  # a scrape still answers
    finally:
        await admin.execute(f'ALTER DATABASE "{url.database}" ALLOW_CONNECTIONS true')
        await admin.close()
    assert (await bot.http.get(f"{bot.info.web_url}/health")).status_code == 200


def test_sweep_report_counts() -> None:
    metrics = Metrics()
    report = SweepReport(
        date(2026, 1, 10), patrons=5, messages=3, reminders=7, failures=Counter(platform=2)
    )
    metrics.sweep(report)
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(generate_latest(metrics.registry).decode())
        for sample in family.samples
    }
    assert samples[("library_bot_reminders_sent_total", ())] == 7
    assert samples[("library_bot_reminder_messages_total", ())] == 3
    assert samples[("library_bot_reminders_failed_total", (("kind", "platform"),))] == 2
    assert samples[("library_bot_reminder_sweeps_total", ())] == 1


async def test_429s_are_counted_by_scope_and_warned_once(
    bot: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot.telegram.ratelimit")
    bot.add_chat(CHAT, language_code="en")
    before = await scrape(bot.http, bot.info.web_url)
    assert value(before, "library_bot_telegram_429_total", scope="global") == 0
    assert value(before, "library_bot_telegram_send_budget") == bot.settings.TELEGRAM_SEND_RATE
    bot.telegram.failures.fail("sendMessage", 429, retry_after=1, times=2)
    reply = await bot.send(CHAT, "/help")
    assert "/loans" in reply.text  # waited as told, twice, and answered
    after = await scrape(bot.http, bot.info.web_url)
    # One answer cannot be past its chat's own limit: the bot's (`FairRateLimiter`).
    assert value(after, "library_bot_telegram_429_total", scope="global") == 2
    assert value(after, "library_bot_telegram_429_total", scope="chat") == 0
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "Telegram is throttling the bot (429, global limit)" in warnings[0]


async def test_sweep_progress_is_read_on_every_scrape(store: Store) -> None:
    metrics = Metrics()
    now = datetime(2026, 3, 2, 10, 30, tzinfo=UTC)
    metrics.watch_sweep(lambda: (now, 10, 8))  # at 10:30, chats without an hour are due at 8
    for chat in (CHAT, OTHER_CHAT):
        await connect(store, chat)
    await store.chats.set_reminder_hour(OTHER_CHAT, 11)  # not yet due
    samples = _samples(await metrics.render(store))
    assert samples["library_bot_sweep_cards_left"] == 1
    assert samples["library_bot_sweep_oldest_due_seconds"] == 2.5 * 3600
    await store.sweeps.finish_sweeps([(CHAT, 1)], now.date())
    samples = _samples(await metrics.render(store))
    assert samples["library_bot_sweep_cards_left"] == 0
    assert samples["library_bot_sweep_oldest_due_seconds"] == 0


def _samples(text: bytes) -> dict[str, float]:
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(text.decode())
        for sample in family.samples
        if not sample.labels
    }
