"""Plurals and grouped numbers as a patron reads them in the chat (the real bot and stand-ins)."""

from __future__ import annotations

from tests.fixtures.bot import BotHarness
from tests.fixtures.chat import command
from tests.fixtures.patrons import KAREN


async def test_reminder_days_read_as_one_day_or_several(bot: BotHarness) -> None:
    bot.add_chat(801, language_code="da")
    one = await bot.send(801, "/reminders 1")
    assert "1 dag før afleveringsdatoen" in one.text
    several = await bot.send(801, "/reminders 1 0")
    assert "1 og 0 dage før afleveringsdatoen" in several.text
    bot.add_chat(802, language_code="en")
    one = await bot.send(802, "/reminders 1")
    assert "1 day before the due date" in one.text
    none_yet = await bot.send(802, "/reminders 0")
    assert "0 days before the due date" in none_yet.text
    # Ukrainian: one (1, 21), few (2-4) and many (0, 5-20); a list reads "дн." whatever it ends in.
    bot.add_chat(805, language_code="uk")
    for days, words in (
        ("1", "за 1 день до терміну"),
        ("21", "за 21 день до терміну"),
        ("2", "за 2 дн. до терміну"),
        ("5", "за 5 дн. до терміну"),
        ("1 0", "за 1 і 0 дн. до терміну"),
    ):
        reply = await bot.send(805, f"/reminders {days}")
        assert words in reply.text, reply.text


async def test_renew_all_with_a_one_day_window_says_day(bot: BotHarness) -> None:
    await bot.connect(803, KAREN, language_code="en")
    await bot.send(803, "/reminders 1")
    [listing] = await command(bot, 803, "/renew")
    await bot.tap(803, listing, "🔄 Renew those due within 1 day")
    result = await bot.telegram.wait_for(803, "🔄 Renewal", after=listing.message_id)
    left = result.text.splitlines()[-1]
    assert left.startswith("⏭ ") and "as they are not due within 1 day: " in left, left


async def test_one_search_result_is_singular(bot: BotHarness) -> None:
    bot.add_chat(804, language_code="da")
    [reply] = await command(bot, 804, "/search rødt & sort")
    assert reply.text.startswith("🔎 1 resultat for »rødt & sort«")
    bot.add_chat(806, language_code="uk")
    [reply] = await command(bot, 806, "/search rødt & sort")
    assert reply.text.startswith("🔎 1 результат за запитом «rødt & sort»")


async def test_renew_all_in_ukrainian_counts_days_in_the_genitive(bot: BotHarness) -> None:
    await bot.connect(807, KAREN, language_code="uk")
    await bot.send(807, "/reminders 1")
    [listing] = await command(bot, 807, "/renew")
    await bot.tap(807, listing, "🔄 Продовжити ті, що треба повернути протягом 1 дня")
    result = await bot.telegram.wait_for(807, "🔄 Продовження", after=listing.message_id)
    left = result.text.splitlines()[-1]
    assert left.startswith("⏭ Не продовжено "), left
    assert "які не треба повертати протягом 1 дня: " in left, left
