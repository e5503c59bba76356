"""The one-shot operator tasks behind `library-bot migrate`, `rotate-keys` and `remind --once`:
each builds what it needs from the settings, does its work, and closes everything again."""

from __future__ import annotations

from bot.config.settings import Settings, SettingsError
from bot.jobs.shelf import check_watches
from bot.jobs.sweep import SweepReport, sweep
from bot.library.client import LibraryClient
from bot.runtime.startup import database_stage, telegram_stage
from bot.services import Services
from bot.telegram.botapi import build_bot
from bot.telegram.deliver import TelegramDeliverer
from storage.migrate import SchemaNewerThanCode, database_revision, upgrade
from storage.rotation import Rotation
from storage.store import Store


async def migrate(settings: Settings) -> str:
    """Upgrade the schema to the newest revision; the revision the database is at then."""
    await upgrade(settings.DATABASE_URL)
    revision = await database_revision(settings.DATABASE_URL)
    if revision is None:
        raise RuntimeError("the database has no schema revision after its upgrade")
    return revision


async def rotate_keys(settings: Settings) -> Rotation:
    """Re-encrypt every stored token under the first key of TOKEN_KEYS."""
    store = await Store.open(settings.DATABASE_URL, settings.token_keys)
    try:
        return await store.rotate_keys()
    finally:
        await store.close()


async def remind_once(settings: Settings) -> SweepReport:
    """Migrate, then one reminder sweep now, with a bot that sends like the one in `run`. The
    database and Telegram fail at start as `run`'s do: one line (`StartupFailure`)."""
    with database_stage(settings.DATABASE_URL):
        try:
            await upgrade(settings.DATABASE_URL)
        except SchemaNewerThanCode as exc:
            raise SettingsError(f"DATABASE_URL: {exc}") from None
        store = await Store.open(settings.DATABASE_URL, settings.token_keys)
    library = LibraryClient.from_settings(settings)
    bot = build_bot(settings)
    try:
        with telegram_stage(settings.TELEGRAM_API_URL):
            await bot.initialize()
        try:
            deliverer = TelegramDeliverer(bot, Services(settings, store, library))
            report = await sweep(
                store=store, library=library, deliverer=deliverer, settings=settings
            )
            await check_watches(store, library, deliverer)
            return report
        finally:
            await bot.shutdown()
    finally:
        await library.aclose()
        await store.close()
