"""URL normalisation and the SQLite connection settings."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from sqlalchemy import text

from storage.engine import create_engine, normalize_url, split_ssl_options
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
