"""/where and "🗺 Where is it?": where a title stands at the libraries of the chat's cards."""

from __future__ import annotations

from tests.fixtures.bot import BotHarness
from tests.fixtures.chat import buttons, command
from tests.fixtures.patrons import EMIL, KAREN, OLE, SOFIE

FARM = "870970-basis:27247164"  # "Den afrikanske farm": on the shelf at two branches
HOBBIT = "870970-basis:06442885"  # "The Hobbit": none on the shelf in Copenhagen
NET = "870970-basis:51371213"  # "Kvinden i buret" as a net audiobook: on no shelf
HOLDINGS = "platform GET /v3/holdingsitems"


async def test_where_a_title_stands_branch_by_branch(bot: BotHarness) -> None:
    await bot.connect(70, KAREN, language_code="en")
    [where] = await command(bot, 70, f"/where {FARM}")
    lines = where.text.splitlines()
    assert lines[0] == "📍 Den afrikanske farm at Københavns Biblioteker"
    assert lines[1:] == [
        "📗 Københavns Hovedbibliotek: on the shelf · Voksen › Skønlitteratur › Blixen",
        "📗 Vesterbro Bibliotek: on the shelf · Voksen › Skønlitteratur › Blixen",
        "📕 Islands Brygge Bibliotek: can be read there, not borrowed · Voksen › Læsesal › Blixen",
        "📘 1 copy is lent out at the moment.",
    ]
    # Order, and a wait for the branch whose copy is lent out (none on its shelf).
    assert buttons(where) == ["📥 Order it", "🔔 Tell me when it is back at Nørrebro Bibliotek"]
    # Its Order button leads to the order's confirmation.
    ask = await bot.tap(70, where, "📥 Order it")
    assert ask is not None and "Do you want to order Den afrikanske farm" in ask.text


async def test_plainly_none_on_the_shelf_and_no_copy_at_all(bot: BotHarness) -> None:
    await bot.connect(71, KAREN)
    [hobbit] = await command(bot, 71, f"/where {HOBBIT}")
    assert "Der står ingen eksemplarer på hylden på Københavns Biblioteker lige nu." in hobbit.text
    assert "📕" in hobbit.text and "📗" not in hobbit.text
    [net] = await command(bot, 71, f"/where {NET}")
    assert "Københavns Biblioteker har den ikke." in net.text
    assert buttons(net) == []  # a net-only title cannot be ordered for pick-up


async def test_words_find_the_best_hit_and_say_how_to_find_another(bot: BotHarness) -> None:
    await bot.connect(72, KAREN, language_code="en")
    [where] = await command(bot, 72, "/where afrikanske farm")
    assert where.text.startswith("📍 Den afrikanske farm at ")
    assert where.text.endswith("Not the one you meant? /search afrikanske farm")
    [nothing] = await command(bot, 72, "/where zzzz qqqq")
    assert nothing.text == "I found nothing for “zzzz qqqq”. Try other words, or /search."
    [usage] = await command(bot, 72, "/where")
    assert usage.text.startswith("Send /where and a material id")


async def test_each_library_of_the_chats_cards_once(bot: BotHarness) -> None:
    await bot.connect(73, KAREN, language_code="en")
    await bot.connect(73, OLE, language_code="en")  # the same library as Karen's
    [where] = await command(bot, 73, f"/where {FARM}")
    assert where.text.count("📍 Den afrikanske farm at") == 1
    assert bot.sandbox.calls[HOLDINGS] == 1


async def test_a_family_at_two_libraries_gets_both(bot: BotHarness) -> None:
    await bot.connect(74, SOFIE, language_code="en")
    await bot.connect(74, EMIL, language_code="en")  # Frederiksberg
    [where] = await command(bot, 74, f"/where {FARM}")
    assert "📍 Den afrikanske farm at Københavns Biblioteker" in where.text
    assert "📍 Den afrikanske farm at Frederiksberg Bibliotek" in where.text


async def test_without_a_login_it_asks_which_library_and_looks_there(bot: BotHarness) -> None:
    bot.add_chat(75, language_code="en")
    [ask] = await command(bot, 75, f"/where {FARM}")
    assert ask.text.startswith("🗺 Which library should I look in for “Den afrikanske farm”?")
    assert bot.sandbox.calls[HOLDINGS] == 0
    [unknown] = await command(bot, 75, "Atlantis")
    assert unknown.text.startswith("I know no library called “Atlantis”.")
    # Still waiting: a branch's name is its library's.
    [where] = await command(bot, 75, "Vesterbro")
    assert where.text.startswith("📍 Den afrikanske farm at Københavns Biblioteker")
    assert "Vesterbro Bibliotek: on the shelf" in where.text
    # No card to keep a watch for: the way to one instead of its button.
    assert where.text.endswith("Log in with /login, and I can tell you when it is back.")
    assert buttons(where) == ["📥 Order it"]
    assert bot.sandbox.calls[HOLDINGS] == 1


async def test_a_name_that_fits_several_libraries_offers_each(bot: BotHarness) -> None:
    bot.add_chat(77, language_code="da")
    await command(bot, 77, f"/where {FARM}")
    [choose] = await command(bot, 77, "Nørre")  # Nørrebro, Nørresundby
    assert choose.text == "Flere biblioteker passer. Hvilket mener du?"
    assert buttons(choose) == ["Aalborg Bibliotekerne", "Københavns Biblioteker"]
    where = await bot.tap(77, choose, "Københavns Biblioteker")
    assert where is not None
    assert where.text.startswith("📍 Den afrikanske farm på Københavns Biblioteker")
    # Answered: the next message is a search again, not a library's name.
    [offer] = await command(bot, 77, "Aarhus")
    assert "Søg" in offer.text or buttons(offer)[0].startswith("🔎")


async def test_a_logged_in_patron_is_never_asked(bot: BotHarness) -> None:
    await bot.connect(78, KAREN, language_code="en")
    [where] = await command(bot, 78, f"/where {FARM}")
    assert "Which library" not in where.text


async def test_the_where_button_of_a_search_result(bot: BotHarness) -> None:
    await bot.connect(76, KAREN, language_code="en")
    [results] = await command(bot, 76, "/search afrikanske farm")
    sent = len(bot.telegram.sent(76))
    await bot.tap(76, results, "🗺 1")
    told = await bot.telegram.wait_for(76, "📍 Den afrikanske farm", after=results.message_id)
    assert "📗 Vesterbro Bibliotek: on the shelf" in told.text
    assert len(bot.telegram.sent(76)) == sent + 1  # a new message: the results stay
