"""URL normalisation and the SQLite connection settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from storage.engine import create_engine, normalize_url


def test_pasted_urls_get_async_drivers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    pg = normalize_url("postgres://bot:p%40ss@db.example:5432/library")
    assert pg.drivername == "postgresql+asyncpg" and pg.password == "p@ss"
    assert normalize_url("postgresql://h/db").drivername == "postgresql+asyncpg"
    assert normalize_url("postgresql+asyncpg://h/db").drivername == "postgresql+asyncpg"
    lite = normalize_url("sqlite:///data/bot.db")
    assert lite.drivername == "sqlite+aiosqlite"
    assert lite.database == str(tmp_path / "data" / "bot.db")
    assert (tmp_path / "data").is_dir()


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
