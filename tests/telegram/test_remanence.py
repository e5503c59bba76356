"""Data that outlives `/forget` (SECURITY.md, data remanence): nothing of a forgotten chat is
left in the SQLite file or its `-wal`, and a search button keeps the typed words sealed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import text as sql

from tests.fixtures.bot import BotHarness
from tests.fixtures.calendar import feed_url
from tests.fixtures.chat import buttons, command
from tests.fixtures.patrons import KAREN

CHAT = 91
# A CPR number typed by mistake, with words a search would take.
TYPED = "karen 0101701234"
LABEL = "Remanensia"


def database_files(bot: BotHarness) -> list[Path]:
    path = Path(bot.settings.DATABASE_URL.split("///", 1)[1])
    return [path, path.with_name(path.name + "-wal")]


def scan(bot: BotHarness, *needles: str) -> list[tuple[str, str]]:
    """Which of `needles` (as UTF-8 bytes) are in which of the database's files."""
    found = []
    for path in database_files(bot):
        data = path.read_bytes() if path.exists() else b""
        found += [(path.name, needle) for needle in needles if needle.encode() in data]
    return found


async def stored_payloads(bot: BotHarness) -> str:
    def read(conn: Any) -> str:
        return str(conn.execute(sql("SELECT payload FROM callback_ref")).all())

    return await bot.store.database.run(read)


async def test_a_search_button_keeps_the_typed_words_sealed(bot: BotHarness) -> None:
    bot.add_chat(CHAT, language_code="en")
    [offer] = await command(bot, CHAT, TYPED)
    assert buttons(offer) == [f"🔎 Search for “{TYPED}”"]
    payloads = await stored_payloads(bot)
    assert payloads != "[]"
    assert "0101701234" not in payloads and "karen" not in payloads
    # The button still searches for the words as typed.
    results = await bot.tap(CHAT, offer, f"🔎 Search for “{TYPED}”")
    assert results is not None and f"“{TYPED}”" in results.text


async def test_forget_leaves_no_label_unique_id_or_words_in_the_sqlite_files(
    bot: BotHarness,
) -> None:
    await bot.connect(CHAT, KAREN, language_code="en")
    await bot.store.cards.set_label(CHAT, 1, LABEL)
    card = await bot.store.cards.get(CHAT)
    assert card is not None and card.unique_id
    unique_id = card.unique_id
    await feed_url(bot, CHAT)
    await command(bot, CHAT, TYPED)
    # Before: what a copy of the files would show (the words are sealed from the start).
    assert {needle for _, needle in scan(bot, LABEL, unique_id)} == {LABEL, unique_id}
    prompt = await bot.send(CHAT, "/forget")
    done = await bot.tap(CHAT, prompt, "🗑 Yes, delete everything")
    assert done is not None and "Everything is deleted" in done.text
    assert scan(bot, LABEL, unique_id, "0101701234") == []


async def test_a_logout_leaves_no_label_or_unique_id_in_the_sqlite_files(
    bot: BotHarness,
) -> None:
    await bot.connect(CHAT + 1, KAREN, language_code="en")
    await bot.store.cards.set_label(CHAT + 1, 1, LABEL)
    card = await bot.store.cards.get(CHAT + 1)
    assert card is not None and card.unique_id
    assert scan(bot, LABEL)
    # What /logout runs (its dialogue is another test's): the patron's own removal.
    assert await bot.store.remove_card(CHAT + 1, 1, logout=True) is not None
    assert scan(bot, LABEL, card.unique_id) == []
