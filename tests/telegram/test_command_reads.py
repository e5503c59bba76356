"""A command's one read of the chat on SQLite and on PostgreSQL: the guard's `read_chat` reads
the settings, the cards and their refused renewals in one statement, and the lists take them
(`take_cards`, `take_refusals`). The same SQLAlchemy statement runs on both databases, so each
test here runs on both."""

from __future__ import annotations

import pytest

from tests.fixtures.bot import BotFactory, BotHarness
from tests.fixtures.cards import jonas_title, two_cards
from tests.fixtures.chat import buttons, command
from tests.fixtures.patrons import KAREN


@pytest.fixture
async def bot(bot_factory: BotFactory, store_url: str) -> BotHarness:
    """The harness's bot on a fresh database: once SQLite, once PostgreSQL (`store_url`)."""
    return await bot_factory(DATABASE_URL=store_url)


async def test_loans_reads_the_chats_language_and_every_card_with_its_name(
    bot: BotHarness,
) -> None:
    await two_cards(bot, 901)
    await bot.store.chats.set_language(901, "da")
    [reply] = await command(bot, 901, "/loans")
    assert reply.text.startswith("📚 Dine lån (8)")
    karen, jonas = reply.text.index("👤 Karen"), reply.text.index("👤 Jonas")
    assert karen < reply.text.index("Den afrikanske farm") < jonas
    assert jonas < reply.text.index(jonas_title(bot))
    assert buttons(reply)[:3] == ["Karen", "Jonas", "· Alle kort ·"]


async def test_loans_reads_the_refusals_a_renewal_left(bot: BotHarness) -> None:
    await bot.connect(902, KAREN, language_code="en")
    [listing] = await command(bot, 902, "/renew")
    await bot.tap(902, listing, "🔄 Renew those due within 3 days")
    await bot.telegram.wait_for(902, "🔄 Renewal", after=listing.message_id)
    [reply] = await command(bot, 902, "/loans")
    assert reply.text.splitlines()[1] == "2 due within 3 days · ⛔ 2 can't be renewed"
    kongens = reply.text.split("🟡 Kongens fald\n", 1)[1].split("\n\n", 1)[0]
    assert kongens.endswith("⛔ can't be renewed: reserved by another patron")
    assert "⛔" not in reply.text.split("Den afrikanske farm", 1)[1]  # renewable ones are not
