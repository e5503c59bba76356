"""`library-bot run` with Telegram unreachable: one log record in the configured format that
says what failed and what to check, no traceback, and exit 1 (systemd restarts it)."""

from __future__ import annotations

import http.server
import json
import socket
import subprocess
import threading
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


class _RefusingBotApi(http.server.BaseHTTPRequestHandler):
    """The Bot API as it answers a revoked token: 401 to every method."""

    def do_POST(self) -> None:
        body = b'{"ok":false,"error_code":401,"description":"Unauthorized"}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def refusing_bot_api() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _RefusingBotApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("cause", ["unreachable", "token refused", "not a database"])
def test_remind_once_fails_at_start_in_one_line(
    tmp_path: Path, closed_port: int, refusing_bot_api: str, fmt: str, cause: str
) -> None:
    """`remind --once` meets what `run` meets at start, and says it as `run` does: one record,
    no traceback, exit 1, and never the token (PTB's own message for a refused token names
    it)."""
    database = tmp_path / "bot.db"
    env = offline_env(
        tmp_path, f"http://127.0.0.1:{closed_port}", f"sqlite+aiosqlite:///{database}", fmt
    )
    if cause == "token refused":
        env["TELEGRAM_API_URL"] = refusing_bot_api
    if cause == "not a database":
        database.write_bytes(b"these are not the pages of a SQLite database" * 100)
    done = library_bot("remind", "--once", env=env, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and TEST_BOT_TOKEN not in done.stderr
    lines = done.stderr.splitlines()
    records = [json.loads(line) for line in lines] if fmt == "json" else []
    failures = (
        [r["message"] for r in records if r["level"] == "CRITICAL"]
        if fmt == "json"
        else [line for line in lines if " CRITICAL " in line]
    )
    assert len(failures) == 1, done.stderr
    expected = {
        "unreachable": "start-up failed: Telegram: cannot reach the Bot API",
        "token refused": "start-up failed: Telegram: Telegram refused the bot token",
        "not a database": "start-up failed: database: ",
    }[cause]
    assert f"library-bot remind: {expected}" in failures[0]
