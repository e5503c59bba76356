"""Probes for orchestrators (`/livez`, `/readyz`), the container's HEALTHCHECK, `/metrics` on
a listener of its own (`METRICS_ADDRESS`) and what the metrics carry."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from bot.config.settings import SettingsError, load_settings
from bot.services.metrics import Metrics
from storage.store import Store
from tests.fixtures.bot import BotFactory, BotHarness
from tests.fixtures.patrons import KAREN
from tests.runtime.conftest import (
    Running,
    connect_directly,
    make_settings,
    scrape,
    start_bot,
    value,
    wait_for_call,
)

ROOT = Path(__file__).resolve().parents[2]
CHAT = 7301


async def test_livez_and_readyz_answer_a_working_bot(bot: BotHarness) -> None:
    live = await bot.http.get(f"{bot.info.web_url}/livez")
    assert live.status_code == 200
    assert live.text == "ok"
    ready = await bot.http.get(f"{bot.info.web_url}/readyz")
    assert ready.status_code == 200
    assert ready.json() == {
        "status": "ok",
        "database": "ok",
        "telegram": "running",
        "mode": "polling",
    }
    assert ready.headers["Cache-Control"] == "no-store"
    health = await bot.http.get(f"{bot.info.web_url}/health")  # as it was
    assert health.status_code == 200
    assert health.json() == ready.json()


async def test_stopping_bot_is_alive_but_not_ready(
    telegram: Any, library_sandbox: Any, database_url: str, started: list[Running]
) -> None:
    settings = make_settings(telegram, library_sandbox, database_url)
    store = await Store.open(database_url, settings.token_keys)
    try:
        await connect_directly(store, library_sandbox, telegram, CHAT, KAREN)
    finally:
        await store.close()
    running = await start_bot(settings)
    started.append(running)
    library_sandbox.faults.latency["platform"] = 1.5  # an update in flight keeps it serving
    await telegram.send_text(CHAT, "/loans")
    await wait_for_call(library_sandbox, "platform GET /v3/user", 1)
    running.stop.set()
    await asyncio.sleep(0.2)
    async with httpx.AsyncClient() as http:
        ready = await http.get(f"{running.info.web_url}/readyz")
        live = await http.get(f"{running.info.web_url}/livez")
    assert ready.status_code == 503
    assert ready.json()["telegram"] == "stopped"
    assert live.status_code == 200


def _healthcheck_command() -> list[str]:
    """The HEALTHCHECK's CMD of deploy/Containerfile (its exec form, a JSON array)."""
    text = (ROOT / "deploy" / "Containerfile").read_text()
    match = re.search(r"^HEALTHCHECK [^\n]*\\\n\s*CMD (\[.*\])$", text, re.MULTILINE)
    assert match, "deploy/Containerfile has no HEALTHCHECK CMD in exec form"
    command: list[str] = json.loads(match.group(1))
    assert command[0] == "python"
    return [sys.executable, *command[1:]]


async def _healthcheck(port: int, **proxies: str) -> int:
    env = {"PATH": os.environ.get("PATH", ""), "PORT": str(port), **proxies}
    process = await asyncio.create_subprocess_exec(
        *_healthcheck_command(),
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    async with asyncio.timeout(15):
        return await process.wait()


async def test_container_healthcheck_ignores_proxy_variables(bot: BotHarness) -> None:
    port = int(bot.info.web_url.rsplit(":", 1)[1])
    # A proxy nobody listens on, and no NO_PROXY: the check must not go through it.
    dead_proxy = "http://127.0.0.1:9"
    assert await _healthcheck(port, HTTP_PROXY=dead_proxy, http_proxy=dead_proxy) == 0
    assert await _healthcheck(port) == 0


async def test_container_healthcheck_fails_without_a_bot() -> None:
    with socket.socket() as bound:  # bound but not listening: connections are refused
        bound.bind(("127.0.0.1", 0))
        assert await _healthcheck(bound.getsockname()[1]) != 0


async def test_metrics_on_a_listener_of_their_own(bot_factory: BotFactory) -> None:
    bot = await bot_factory(METRICS_ADDRESS="127.0.0.1:0")
    assert bot.info.metrics_url
    assert bot.info.metrics_url != bot.info.web_url
    public = await bot.http.get(f"{bot.info.web_url}/metrics")
    assert public.status_code == 404  # the public port does not carry them
    samples = await scrape(bot.http, bot.info.metrics_url)
    assert value(samples, "library_bot_build_info", version=version("library-bot")) == 1
    assert value(samples, "library_bot_connected_patrons") == 0
    only = await bot.http.get(f"{bot.info.metrics_url}/health")
    assert only.status_code == 404  # and the metrics port carries nothing else
    assert (await bot.http.get(f"{bot.info.web_url}/health")).status_code == 200


async def test_build_info_on_the_public_listener_by_default(bot: BotHarness) -> None:
    samples = await scrape(bot.http, bot.info.web_url)
    assert value(samples, "library_bot_build_info", version=version("library-bot")) == 1
    assert not bot.info.metrics_url


@pytest.mark.parametrize("address", ["9100", "localhost", "127.0.0.1:port", "[::1]:70000"])
def test_a_bad_metrics_address_is_one_line(address: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(_env_file=None, METRICS_ADDRESS=address)
    message = str(caught.value)
    assert message.startswith("METRICS_ADDRESS: must be host:port")
    assert "\n" not in message


def test_a_foreign_button_is_counted_as_documented() -> None:
    """docs/deployment.md names the outcome `foreign` (a button shown to another user)."""
    metrics = Metrics()
    metrics.callback("renew", "foreign")
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(generate_latest(metrics.registry).decode())
        for sample in family.samples
    }
    key = ("library_bot_callbacks_total", (("action", "renew"), ("outcome", "foreign")))
    assert samples[key] == 1
    assert "`foreign`" in (ROOT / "docs" / "deployment.md").read_text()
