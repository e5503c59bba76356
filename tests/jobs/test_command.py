"""`/reminders` in a running bot, and `library-bot remind --once` as operators run it."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from storage.store import Store
from tests.fixtures.bot import BotHarness
from tests.fixtures.database import key_text
from tests.fixtures.patrons import JONAS
from tests.fixtures.telegram import TEST_BOT_TOKEN

CHAT = 601
EN_CHAT = 602


async def test_reminders_settings_in_danish(bot: BotHarness) -> None:
    bot.add_chat(CHAT, language_code="da")

    status = await bot.send(CHAT, "/reminders")
    # No account: no claim that reminders are coming, only what will apply after /login.
    assert status.text.startswith("🔕 Du får ingen påmindelser lige nu, fordi du ikke er logget")
    assert "slået til" in status.text and "3, 1 og 0" in status.text
    assert "standard" in status.text

    saved = await bot.send(CHAT, "/reminders 5 2 0")
    assert "Gemt" in saved.text and "5, 2 og 0" in saved.text
    assert (await bot.store.chats.chat(CHAT)).reminder_days == (5, 2, 0)

    for wrong in ("/reminders 31", "/reminders 1 2 3 4 5 6", "/reminders -1", "/reminders x"):
        refused = await bot.send(CHAT, wrong)
        assert "forstod jeg ikke" in refused.text and "0 og 30" in refused.text
    assert (await bot.store.chats.chat(CHAT)).reminder_days == (5, 2, 0)

    off = await bot.send(CHAT, "/reminders off")
    assert off.text.count("slået fra") == 1  # said once, by the status, not again above it
    assert (await bot.store.chats.chat(CHAT)).reminders_enabled is False

    tapped = await bot.tap(CHAT, off, "🔔 Slå til")
    assert tapped is not None and "slået til" in tapped.text
    assert (await bot.store.chats.chat(CHAT)).reminders_enabled is True

    preset = await bot.tap(CHAT, tapped, "7, 3, 1 dage")
    assert preset is not None and "7, 3 og 1" in preset.text
    assert (await bot.store.chats.chat(CHAT)).reminder_days == (7, 3, 1)


async def test_reminders_settings_in_english(bot: BotHarness) -> None:
    bot.add_chat(EN_CHAT, language_code="en")

    status = await bot.send(EN_CHAT, "/reminders")
    assert "Reminders are" in status.text and "3, 1 and 0 days" in status.text

    refused = await bot.send(EN_CHAT, "/reminders 1,2,99")
    assert "did not understand" in refused.text and "0 to 30" in refused.text

    off = await bot.tap(EN_CHAT, status, "🔕 Turn off")
    assert off is not None and "Reminders are off" in off.text
    assert (await bot.store.chats.chat(EN_CHAT)).reminders_enabled is False

    on = await bot.send(EN_CHAT, "/reminders 1 0")
    assert "1 and 0 days" in on.text
    chat = await bot.store.chats.chat(EN_CHAT)
    assert chat.reminders_enabled is True and chat.reminder_days == (1, 0)


async def test_remind_once_as_a_subprocess(
    library_sandbox, telegram, database_url: str, store_keys: list[bytes], tmp_path: Path
) -> None:
    store = await Store.open(database_url, store_keys)
    try:
        telegram.add_chat(CHAT)
        code = await store.create_pending_link(CHAT, library_sandbox.issue_token(JONAS), None, {})
        assert await store.complete_link(CHAT, code) is not None
    finally:
        await store.close()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "DATABASE_"))},
        **library_sandbox.env(),
        "TELEGRAM_BOT_TOKEN": TEST_BOT_TOKEN,
        "TELEGRAM_API_URL": telegram.url,
        "DATABASE_URL": database_url,
        "TOKEN_KEYS": ",".join(key_text(key) for key in store_keys),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "remind", "--once",
        env=env, cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 60)

    assert process.returncode == 0, err.decode()
    lines = out.decode().strip().splitlines()
    assert len(lines) == 1 and "1 patron, 1 message, 2 reminders" in lines[0]
    [digest] = telegram.sent(CHAT)
    assert "Lykke-Per" in digest.text and "Klara og solen" in digest.text
    assert library_sandbox.client_secret not in out.decode() + err.decode()


async def test_reminders_status_of_a_connected_chat(bot: BotHarness) -> None:
    await bot.connect(603, JONAS, language_code="en")
    status = await bot.send(603, "/reminders")
    assert status.text.startswith("🔔 Reminders are on: 3, 1 and 0 days")
    assert "not logged in" not in status.text
    await bot.send(603, "/logout")
    after = await bot.send(603, "/reminders")
    assert after.text.startswith("🔕 You get no reminders right now, because you are not logged")
