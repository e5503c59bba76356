"""/search: public catalogue search with an "Order" button per result."""

from __future__ import annotations

from tests.fixtures.bot import BotHarness
from tests.fixtures.chat import buttons, command
from tests.fixtures.patrons import KAREN


async def test_search_works_before_login(bot: BotHarness) -> None:
    bot.add_chat(50, language_code="da")
    [reply] = await command(bot, 50, "/search karen blixen")
    assert reply.text.startswith("🔎 2 resultater for »karen blixen«")
    assert "1. Den afrikanske farm\nKaren Blixen · 1937 · Bog" in reply.text
    assert "Babettes gæstebud" in reply.text
    assert buttons(reply) == [
        "📥 Bestil 1: Den afrikanske farm", "🗺 1", "📥 Bestil 2: Babettes gæstebud", "🗺 2"
    ]  # fmt: skip
    # Public data with the anonymous token; the patron's status is never asked for.
    assert bot.sandbox.calls["platform GET /v3/search"] == 1
    assert bot.sandbox.calls["platform GET /v3/user"] == 0
    # The anonymous token is kept and reused.
    tokens = bot.sandbox.calls["auth POST /oauth/token"]
    await command(bot, 50, "/search tove")
    assert bot.sandbox.calls["auth POST /oauth/token"] == tokens


async def test_titles_with_markup_characters_are_escaped(bot: BotHarness) -> None:
    bot.add_chat(51, language_code="en")
    [reply] = await command(bot, 51, "/search rødt & sort")
    assert "1 result for “rødt & sort”" in reply.text
    assert "Rødt & sort <2. udgave>" in reply.text
    assert "Rødt &amp; sort &lt;2. udgave&gt;" in reply.html
    [stars] = await command(bot, 51, "/search snak_om_*stjerner*")
    assert "Snak_om_*stjerner*" in stars.text and "Ærø Østergård" in stars.text


async def test_only_ten_results_are_shown(bot: BotHarness) -> None:
    bot.add_chat(52, language_code="en")
    [reply] = await command(bot, 52, "/search h")
    assert reply.text.startswith("🔎 18 results for “h” – here are the first 10")
    assert len(buttons(reply)) == 20  # Order and "where is it?" per result
    assert buttons(reply)[-2].startswith("📥 Order 10: ") and buttons(reply)[-1] == "🗺 10"
    assert all(len(b.callback_data or "") <= 64 for row in reply.buttons for b in row)


async def test_usage_no_hits_too_long_and_control_characters(bot: BotHarness) -> None:
    bot.add_chat(53, language_code="en")
    [ask] = await command(bot, 53, "/search")  # a bare /search asks for the words
    assert ask.text == "🔎 What are you looking for? Type a title, an author or a subject."
    [usage] = await command(bot, 53, '/search "\\"')  # no words once quotes are dropped
    assert "/search Karen Blixen" in usage.text
    [none] = await command(bot, 53, "/search zzzyyyxxx")
    assert none.text == "🔎 No results for “zzzyyyxxx”. Try other words."
    assert none.buttons == []
    [long] = await command(bot, 53, "/search " + "blixen " * 40)
    assert "too long" in long.text and "200" in long.text
    [cleaned] = await command(bot, 53, "/search karen\u0007 \u200bblixen")
    assert "2 results for “karen blixen”" in cleaned.text
    assert bot.sandbox.calls["platform GET /v3/search"] == 2


async def test_the_order_button_asks_to_log_in_first(bot: BotHarness) -> None:
    bot.add_chat(54, language_code="en")
    [reply] = await command(bot, 54, "/search hobbit")
    await bot.tap(54, reply, "📥 Order 1: The Hobbit")
    prompt = await bot.telegram.wait_for(54, "not logged in", after=reply.message_id)
    assert prompt.buttons or "http" in prompt.text
    assert bot.sandbox.calls["platform GET /v3/order"] == 0


async def test_the_order_button_leads_to_the_order_confirmation(bot: BotHarness) -> None:
    await bot.connect(55, KAREN)
    [results] = await command(bot, 55, "/search hobbit")
    ask = await bot.tap(55, results, "📥 Bestil 1: The Hobbit")
    assert ask is not None
    assert "Vil du bestille The Hobbit af J.R.R. Tolkien?" in ask.text
    assert buttons(ask) == ["📥 Ja, bestil", "Nej", "📍 Skift afhentningssted", "🗺 Hvor står den?"]
    # The result list stays as it was.
    [again] = [m for m in bot.telegram.sent(55) if m.message_id == results.message_id]
    assert again.text == results.text and again.buttons == results.buttons
    done = await bot.tap(55, ask, "📥 Ja, bestil")
    assert done is not None and "The Hobbit er bestilt" in done.text
    assert bot.sandbox.patron_data(KAREN).orders[-1]["title"] == "The Hobbit"


async def test_search_when_the_services_are_down(bot: BotHarness) -> None:
    bot.add_chat(56, language_code="da")
    # No anonymous token yet and its service is down.
    bot.sandbox.faults.down.add("auth")
    [reply] = await command(bot, 56, "/search blixen")
    assert "svarer ikke" in reply.text
    bot.sandbox.faults.down.clear()
    [reply] = await command(bot, 56, "/search blixen")
    assert "2 resultater" in reply.text
    bot.sandbox.faults.down.add("platform")
    [reply] = await command(bot, 56, "/search blixen")
    assert "svarer ikke" in reply.text
