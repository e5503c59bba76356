"""`library-bot migrate` and `library-bot rotate-keys` (wired lazily from bot/cli.py)."""

from __future__ import annotations

import argparse
import asyncio
import sys

from sqlalchemy.exc import SQLAlchemyError

from library_bot.storage.migrate import database_revision, upgrade
from library_bot.storage.store import Store


def _database_error(command: str, exc: Exception) -> int:
    # Parameters are hidden by the engine, so the message carries no token.
    reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
    print(f"library-bot {command}: database error: {reason}", file=sys.stderr)
    return 1


def migrate_command(_: argparse.Namespace) -> int:
    """Upgrade the schema to the newest revision and say which revision the database is at."""
    from library_bot.cli import settings_for

    settings = settings_for("migrate", "DATABASE_URL")

    async def migrate() -> str | None:
        await upgrade(settings.DATABASE_URL)
        return await database_revision(settings.DATABASE_URL)

    try:
        revision = asyncio.run(migrate())
    except (SQLAlchemyError, OSError) as exc:
        return _database_error("migrate", exc)
    print(f"database schema at revision {revision} (head)")
    return 0


def rotate_keys_command(_: argparse.Namespace) -> int:
    """Re-encrypt every stored token under the first key of TOKEN_KEYS."""
    from library_bot.cli import settings_for

    settings = settings_for("rotate-keys", "DATABASE_URL", "TOKEN_KEYS")

    async def rotate() -> int:
        store = await Store.open(settings.DATABASE_URL, settings.token_keys)
        try:
            return await store.rotate_keys()
        finally:
            await store.close()

    try:
        rotated = asyncio.run(rotate())
    except (SQLAlchemyError, OSError) as exc:
        return _database_error("rotate-keys", exc)
    print(f"re-encrypted {rotated} token{'' if rotated == 1 else 's'} under the newest key")
    return 0
