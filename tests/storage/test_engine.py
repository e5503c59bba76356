"""URL normalisation and the SQLite connection settings."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import text

from storage.engine import (
    DatabaseUrlError,
    check_database_url,
    create_engine,
    normalize_url,
    split_ssl_options,
)
from tests.fixtures.cli import library_bot
from tests.fixtures.database import PostgresCluster


def test_pasted_urls_get_async_drivers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    pg = normalize_url("postgres://bot:p%40ss@db.example:5432/library")
    assert pg.drivername == "postgresql+asyncpg" and pg.password == "p@ss"
    assert normalize_url("postgresql://h/db").drivername == "postgresql+asyncpg"
    assert normalize_url("postgresql+asyncpg://h/db").drivername == "postgresql+asyncpg"
    lite = normalize_url("sqlite:///data/bot.db")
    assert lite.drivername == "sqlite+aiosqlite"
    assert lite.database == str(tmp_path / "data" / "bot.db")
    assert not (tmp_path / "data").exists()  # a mistyped folder is never made


async def test_sqlite_pragmas_and_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    engine = create_engine("sqlite+aiosqlite:///relative.db")
    try:
        async with engine.connect() as conn:
            values = [
                (await conn.execute(text(f"PRAGMA {name}"))).scalar()
                for name in ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")
            ]
    finally:
        await engine.dispose()
    assert values[0] == "wal"
    assert values[1] == 1  # NORMAL
    assert values[2] == 1
    assert int(str(values[3])) >= 1000
    assert (tmp_path / "relative.db").exists()


def test_libpq_tls_options_leave_the_url_for_asyncpg() -> None:
    url = normalize_url(
        "postgres://bot:pw@db.example:5432/library?sslmode=verify-full"
        "&sslrootcert=/etc/ca.pem&sslcert=/etc/c.pem&sslkey=/etc/k.pem&application_name=x"
    )
    rest, options = split_ssl_options(url)
    assert dict(rest.query) == {"application_name": "x"}
    assert options == {
        "sslmode": "verify-full",
        "sslrootcert": "/etc/ca.pem",
        "sslcert": "/etc/c.pem",
        "sslkey": "/etc/k.pem",
    }


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("mysql+pymysql://bot@db.example/library", "mysql databases are not supported"),
        ("oracle://bot@db.example/library", "oracle databases are not supported"),
        ("postgresql+psycopg2://bot@db.example/library", "the driver psycopg2 is not supported"),
        ("library.db", "not a database URL"),
        ("", "not a database URL"),
        ("postgres://bot@db/library?sslmode=Require", "sslmode=Require is not one of disable,"),
        ("postgres://bot@db/library?sslmode=require&sslcrl=/no/root.crl", "sslcrl /no/root.crl"),
        ("postgres://bot@db/library?sslmode=prefer&sslcert=/no/c.pem", "sslcert /no/c.pem"),
        ("postgres://bot@db/library?sslkey=/no/k.pem", "sslkey /no/k.pem"),
        ("sqlite:////no/such/folder/bot.db", "the folder /no/such/folder of the SQLite"),
    ],
)
def test_database_urls_that_cannot_work_are_refused(url: str, says: str) -> None:
    with pytest.raises(DatabaseUrlError, match=re.escape(says)):
        check_database_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "sqlite+aiosqlite:///library-bot.db",  # the default, in the working directory
        "sqlite:///:memory:",
        "postgres://bot:pw@db.example:5432/library",
        "postgresql+asyncpg://bot@db.example/library?sslmode=verify-full",
        # asyncpg reads neither file when it does not verify the server or try TLS.
        "postgresql://bot@db.example/library?sslmode=prefer&sslrootcert=/no/root.crt",
        "postgresql://bot@db.example/library?sslmode=disable&sslcert=/no/c.pem",
    ],
)
def test_database_urls_that_can_work_pass(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    check_database_url(url)


def test_tls_files_that_exist_pass(tmp_path: Path) -> None:
    root = tmp_path / "root.crt"
    root.write_text("not read here", encoding="ascii")
    check_database_url(f"postgresql://bot@db/library?sslmode=verify-ca&sslrootcert={root}")


def _migrate(url: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "DATABASE_URL": url}
    return library_bot("migrate", env=env, cwd=tmp_path)


@pytest.mark.postgres
@pytest.mark.parametrize("mode", ["disable", "prefer"])
async def test_sslmode_disable_and_prefer_connect_without_tls(
    postgres_cluster: PostgresCluster, tmp_path: Path, mode: str
) -> None:
    url = await postgres_cluster.new_database()
    done = _migrate(f"{url}?sslmode={mode}", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "at revision" in done.stdout
    engine = create_engine(f"{url}?sslmode={mode}")
    try:
        async with engine.connect() as conn:
            assert (await conn.execute(text("SELECT ssl FROM pg_stat_ssl"))).scalar() is False
    finally:
        await engine.dispose()


@pytest.mark.postgres
async def test_sslmode_require_without_tls_is_one_line_naming_it(
    postgres_cluster: PostgresCluster, tmp_path: Path
) -> None:
    url = await postgres_cluster.new_database()
    done = _migrate(f"{url}?sslmode=require", tmp_path)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1, done.stderr
    assert "sslmode=require" in done.stderr and "Traceback" not in done.stderr
    assert " CRITICAL bot.cli: library-bot migrate: database error:" in done.stderr
