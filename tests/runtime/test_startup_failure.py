"""`library-bot run` with Telegram unreachable: one log record in the configured format that
says what failed and what to check, no traceback, and exit 1 (systemd restarts it)."""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.cli import library_bot, offline_env
from tests.fixtures.telegram import TEST_BOT_TOKEN


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port bound but never listening: connecting is refused for as long as it is held."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def _run(tmp_path: Path, port: int, fmt: str) -> subprocess.CompletedProcess[str]:
    database = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    env = offline_env(tmp_path, f"http://127.0.0.1:{port}", database, fmt)
    return library_bot("run", env=env, cwd=tmp_path)


def test_telegram_unreachable_is_one_json_line(tmp_path: Path, closed_port: int) -> None:
    done = _run(tmp_path, closed_port, "json")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    records = [json.loads(line) for line in done.stderr.splitlines()]  # every line is JSON
    failures = [r for r in records if r["level"] in ("ERROR", "CRITICAL")]
    assert len(failures) == 1, failures
    message = failures[0]["message"]
    assert message.startswith("start-up failed: Telegram: cannot reach the Bot API")
    assert f"127.0.0.1:{closed_port}" in message and "check TELEGRAM_API_URL" in message
    assert "HTTPS_PROXY" in message
    assert TEST_BOT_TOKEN.split(":")[1] not in done.stderr


def test_telegram_unreachable_is_one_text_line(tmp_path: Path, closed_port: int) -> None:
    done = _run(tmp_path, closed_port, "text")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    failures = [
        line for line in done.stderr.splitlines() if " CRITICAL " in line or " ERROR " in line
    ]
    assert len(failures) == 1, done.stderr
    assert "start-up failed: Telegram" in failures[0] and "check TELEGRAM_API_URL" in failures[0]
