"""The operator's mistakes at start, as an operator makes them: `library-bot run` and `migrate`
started with one bad setting each. Every one is a single line of output in the configured log
format (text or JSON) that names the setting; a configuration error exits 2 (systemd's unit
stops restarting), a failure a restart may mend exits 1."""

from __future__ import annotations

import json
import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from storage.engine import create_engine
from storage.migrate import head_revision
from tests.fixtures.cli import library_bot, offline_env
from tests.fixtures.telegram import TEST_BOT_TOKEN

# `bot.config.logs.TEXT_FORMAT` as it prints: time, level, logger, message.
TEXT_LINE = re.compile(
    r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (?P<level>[A-Z]+) (?P<logger>[\w.]+): "
)
FORMATS = ["text", "json"]
COMMANDS = ["run", "migrate"]


def start(
    command: str, tmp_path: Path, fmt: str, **settings: str
) -> subprocess.CompletedProcess[str]:
    """`library-bot <command>` with everything it needs set well, but for `settings`. Telegram
    and the library services are on a closed port: nothing here gets as far as calling them."""
    database = f"sqlite:///{tmp_path / 'bot.db'}"
    env = {**offline_env(tmp_path, "http://127.0.0.1:9", database, fmt), **settings}
    return library_bot(command, env=env, cwd=tmp_path)


def the_one_line(done: subprocess.CompletedProcess[str], fmt: str, exit_code: int) -> str:
    """The message of the one line `done` printed, checked to be a CRITICAL record in `fmt`."""
    assert done.returncode == exit_code, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    if fmt == "json":
        record = json.loads(lines[0])
        assert record["level"] == "CRITICAL" and "exc_info" not in record
        message: str = record["message"]
        return message
    shape = TEXT_LINE.match(lines[0])
    assert shape is not None and shape["level"] == "CRITICAL", lines[0]
    return lines[0][shape.end() :]


@pytest.fixture
def port_in_use() -> Iterator[int]:
    """A port another process listens on, for as long as the test runs."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.mark.parametrize("fmt", FORMATS)
def test_metrics_address_in_use_is_one_line_and_exit_1(
    tmp_path: Path, fmt: str, port_in_use: int
) -> None:
    # Exit 1, as for HOST and PORT: the port may be free again after a restart (an old process
    # still stopping).
    done = start("run", tmp_path, fmt, METRICS_ADDRESS=f"127.0.0.1:{port_in_use}")
    message = the_one_line(done, fmt, 1)
    assert message.startswith("start-up failed: metrics listener:")
    assert "Address already in use" in message
    assert f"check METRICS_ADDRESS (cannot listen on 127.0.0.1:{port_in_use})" in message
    assert not (tmp_path / "bot.db").exists()  # failed before it touched the database


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("mysql://bot:pw@db.example/library", "mysql databases are not supported"),
        ("postgresql://bot:pw@db.example:port/library", "not a database URL"),
        ("postgresql://bot:pw@db.example/library?sslmode=bogus", "sslmode=bogus is not one of"),
    ],
    ids=["mysql", "malformed", "sslmode"],
)
def test_bad_database_url_is_one_line_and_exit_2(
    tmp_path: Path, command: str, fmt: str, url: str, says: str
) -> None:
    message = the_one_line(start(command, tmp_path, fmt, DATABASE_URL=url), fmt, 2)
    assert message.startswith(f"library-bot {command}: configuration error: DATABASE_URL: ")
    assert says in message
    assert "pw" not in message  # the URL is not repeated: it may hold a password


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("command", COMMANDS)
def test_missing_sslrootcert_names_the_file_and_sslmode(
    tmp_path: Path, command: str, fmt: str
) -> None:
    missing = tmp_path / "certs" / "root.crt"
    url = f"postgresql://bot@db.example/library?sslmode=verify-full&sslrootcert={missing}"
    message = the_one_line(start(command, tmp_path, fmt, DATABASE_URL=url), fmt, 2)
    assert message.startswith(f"library-bot {command}: configuration error: DATABASE_URL: ")
    assert f"sslrootcert {missing} does not exist" in message
    assert "sslmode=verify-full" in message


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("command", COMMANDS)
def test_sqlite_folder_that_does_not_exist_is_not_made(
    tmp_path: Path, command: str, fmt: str
) -> None:
    folder = tmp_path / "nonexistent" / "dir"
    done = start(command, tmp_path, fmt, DATABASE_URL=f"sqlite:///{folder / 'x.db'}")
    message = the_one_line(done, fmt, 2)
    assert message.startswith(f"library-bot {command}: configuration error: DATABASE_URL: ")
    assert f"the folder {folder} of the SQLite database does not exist" in message
    assert not (tmp_path / "nonexistent").exists()


async def _set_revision(url: str, revision: str) -> None:
    engine = create_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                text("UPDATE alembic_version SET version_num = :revision"), {"revision": revision}
            )
    finally:
        await engine.dispose()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("command", COMMANDS)
async def test_database_newer_than_the_code_says_what_to_do(
    tmp_path: Path, store_url: str, command: str, fmt: str
) -> None:
    # As after a rollback of the code: a newer release has migrated the database.
    await _set_revision(store_url, "0099_from_the_future")
    message = the_one_line(start(command, tmp_path, fmt, DATABASE_URL=store_url), fmt, 2)
    assert message.startswith(f"library-bot {command}: configuration error: DATABASE_URL: ")
    assert "at schema revision 0099_from_the_future" in message
    assert f"does not know (it knows up to {head_revision()})" in message
    assert "Run that release or a newer one" in message
    assert "rolling the code back past a migration needs the backup" in message


@pytest.mark.parametrize("fmt", FORMATS)
def test_malformed_setting_is_one_line_in_the_configured_format(tmp_path: Path, fmt: str) -> None:
    message = the_one_line(start("run", tmp_path, fmt, PORT="eighty"), fmt, 2)
    assert message.startswith("library-bot run: configuration error: PORT: ")


def test_a_bad_log_format_is_told_in_text(tmp_path: Path) -> None:
    message = the_one_line(start("migrate", tmp_path, "xml"), "text", 2)
    assert message.startswith("library-bot migrate: configuration error: LOG_FORMAT: ")


@pytest.mark.parametrize("fmt", FORMATS)
def test_misspelt_and_unknown_variables_are_one_warning_each(tmp_path: Path, fmt: str) -> None:
    (tmp_path / ".env").write_text("REMINDER_TIMES=08:00\n", encoding="utf-8")
    done = start(
        "migrate",
        tmp_path,
        fmt,
        METRICS_ADRESS="127.0.0.1:9100",
        WEBHOOK_SECERT="webhook-secret-value",
        TELEGRAM_TOKEN=TEST_BOT_TOKEN,
        LOG_DIRECTORY="/var/log/library-bot",
        # Not ours: a Kubernetes service's links, and everyday variables.
        LIBRARY_BOT_SERVICE_HOST="10.0.0.7",
        LIBRARY_BOT_PORT="tcp://10.0.0.7:8080",
        LANG="C.UTF-8",
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    if fmt == "json":
        records = [json.loads(line) for line in lines]
        warnings = [r["message"] for r in records if r["level"] == "WARNING"]
    else:
        warnings = [line for line in lines if " WARNING bot.cli: " in line]
        warnings = [line.partition(" WARNING bot.cli: ")[2] for line in warnings]
    assert warnings == [
        "LOG_DIRECTORY is not a setting of library-bot and is ignored "
        "(see Configuration in the README)",
        "METRICS_ADRESS is not a setting of library-bot and is ignored: "
        "did you mean METRICS_ADDRESS?",
        "REMINDER_TIMES (in .env) is not a setting of library-bot and is ignored: "
        "did you mean REMINDER_TIME?",
        "TELEGRAM_TOKEN is not a setting of library-bot and is ignored: "
        "did you mean TELEGRAM_BOT_TOKEN?",
        "WEBHOOK_SECERT is not a setting of library-bot and is ignored: "
        "did you mean WEBHOOK_SECRET?",
    ]
    assert "webhook-secret-value" not in done.stderr and TEST_BOT_TOKEN not in done.stderr


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    ("content", "told"),
    [
        (b"PORT=0\nnot a valid line\n", ".env: line 2 is not NAME=value"),
        (b'TOKEN_KEYS="unterminated\n', ".env: line 1 is not NAME=value"),
        (b"\xff\xfe PORT=0\n", ".env: not UTF-8 text"),
    ],
)
def test_a_dotenv_line_that_cannot_be_read_stops_the_start(
    tmp_path: Path, fmt: str, content: bytes, told: str
) -> None:
    """python-dotenv skips such a line with a warning of its own (not in the log format); the
    bot would then start without it."""
    (tmp_path / ".env").write_bytes(content)
    message = the_one_line(start("run", tmp_path, fmt), fmt, 2)
    assert message == f"library-bot run: configuration error: {told}"


@pytest.mark.parametrize(
    ("settings", "told"),
    [
        ({"TELEGRAM_BOT_TOKEN": ""}, "TELEGRAM_BOT_TOKEN: required by `library-bot run`"),
        ({"TELEGRAM_BOT_TOKEN": "  "}, "TELEGRAM_BOT_TOKEN: required by `library-bot run`"),
        ({"WEBHOOK_SECRET": "bad secret!"}, "WEBHOOK_SECRET: must be 1-256 characters of A-Z"),
        ({"WEBHOOK_SECRET": "a" * 257}, "WEBHOOK_SECRET: must be 1-256 characters of A-Z"),
        ({"PUBLIC_URL": "https://bot.example.org?x=1"}, "PUBLIC_URL: must be a base address"),
        ({"PUBLIC_URL": "https://bot.example.org/#top"}, "PUBLIC_URL: must be a base address"),
        ({"PUBLIC_URL": "https://bot.example.org/?"}, "PUBLIC_URL: must be a base address"),
        ({"PLATFORM_URL": "https://fbi.example.org#"}, "PLATFORM_URL: must be a base address"),
        ({"REMINDER_DAYS": "3,,1"}, "REMINDER_DAYS: must be whole numbers of days"),
        ({"REMINDER_DAYS": "3,1,0,"}, "REMINDER_DAYS: must be whole numbers of days"),
    ],
)
def test_a_value_telegram_or_a_link_could_not_use_stops_the_start(
    tmp_path: Path, settings: dict[str, str], told: str
) -> None:
    message = the_one_line(start("run", tmp_path, "text", **settings), "text", 2)
    assert message.startswith(f"library-bot run: configuration error: {told}"), message
    assert "bad secret" not in message
    assert not (tmp_path / "bot.db").exists()
