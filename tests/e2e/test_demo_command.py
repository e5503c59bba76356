"""`library-bot demo` as an operator runs it, and what the demo keeps between runs."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from bot.config.settings import Settings
from sandbox.demo import DATABASE_FILE, KEY_FILE, running_demo
from storage.store import Store

START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
ADDRESS = re.compile(r"Open (http://127\.0\.0\.1:\d+/) ")


async def test_demo_command_prints_the_address_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    env = {**os.environ, "PORT": "0"}  # any free port: never collide with a running demo
    script = Path(sys.executable).parent / "library-bot"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "bot"]
    process = await asyncio.create_subprocess_exec(
        *command,
        "demo",
        cwd=tmp_path,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    printed: list[str] = []
    try:
        async with asyncio.timeout(START_TIMEOUT):
            while not any("Press Ctrl-C" in line for line in printed):
                line = (await process.stdout.readline()).decode()
                assert line, f"the demo exited early: {(await process.stderr.read()).decode()}"
                printed.append(line)
        found = ADDRESS.search("".join(printed))
        assert found, printed
        async with httpx.AsyncClient(timeout=5) as client:
            page = await client.get(found.group(1))
        assert page.status_code == 200
        assert "Telegram sandbox" in page.text
        patrons = [line for line in printed if line.startswith("patron ")]
        assert "patron 1000000001 1234 " in patrons[0]
        assert len(patrons) == 7  # four patrons and the family of three
        # The guide to logging the family's three cards into one chat, each with its library.
        guide = "".join(printed)
        assert "A family in one chat: send /login 3 times" in guide
        assert re.search(r"1000000005 1234 +Anna Holm +Københavns Biblioteker \(710100\)", guide)
        assert re.search(r"1000000007 1234 +Emil Holm +Frederiksberg Bibliotek \(714700\)", guide)
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
    async with asyncio.timeout(STOP_TIMEOUT):
        _, errors = await process.communicate()
    assert process.returncode == 0, errors.decode()[-2000:]
    key = tmp_path / ".demo" / KEY_FILE
    assert (tmp_path / ".demo" / DATABASE_FILE).exists()
    assert key.stat().st_mode & 0o777 == 0o600
    assert key.read_text().strip() not in "".join(printed) + errors.decode()


async def test_a_restarted_demo_keeps_its_patrons(tmp_path: Path) -> None:
    data_dir = tmp_path / ".demo"
    # An operator's production settings must not leak into the demo; reminder days may.
    base = Settings(
        _env_file=None,
        OAUTH_URL="https://login.bib.example.dk",
        WEBHOOK_SECRET="production-secret",
        DATABASE_URL="postgresql+asyncpg://bot@db.example.dk/bot",
        REMINDER_DAYS="5,2",
    )
    async with running_demo(data_dir, base=base, chat_port=0) as first:
        assert first.sandbox.urls.oauth == first.settings.OAUTH_URL
        assert first.settings.WEBHOOK_SECRET is None
        assert first.settings.DATABASE_URL.startswith("sqlite+aiosqlite:///")
        assert first.settings.REMINDER_DAYS == [5, 2]
        assert f"{first.telegram.url}/t.me" == first.settings.TELEGRAM_LINK_URL
        store = await Store.open(first.settings.DATABASE_URL, first.settings.token_keys)
        try:
            code = await store.create_pending_link(
                5_000_001, "a-token", datetime.now(UTC) + timedelta(days=30), {}
            )
            assert await store.complete_link(5_000_001, code) is not None
        finally:
            await store.close()
    async with running_demo(data_dir, base=base, chat_port=0) as second:
        assert second.settings.DATABASE_URL == first.settings.DATABASE_URL
        store = await Store.open(second.settings.DATABASE_URL, second.settings.token_keys)
        try:
            card = await store.cards.get(5_000_001)
        finally:
            await store.close()
    assert card is not None
    assert card.token == "a-token"
