"""/events, /news, /recommend, free text as a search, a bare /search, and the command menus:
the real bot against the library sandbox and the Bot API stand-in."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, cast

from sqlalchemy import text as sql
from telegram import Chat, Message, Update, User

from bot.telegram.handlers import COMMANDS
from bot.telegram.handlers.search import is_search_reply
from bot.texts import t
from tests.fixtures.bot import BotHarness
from tests.fixtures.chat import buttons, command
from tests.fixtures.patrons import JONAS, KAREN, METTE, OLE

COPENHAGEN_BRANCHES = (
    "Københavns Hovedbibliotek",
    "Vesterbro Bibliotek",
    "Islands Brygge Bibliotek",
    "Nørrebro Bibliotek",
)
ORDER_CALLS = "platform GET /v3/order"


# --- /events and /news ----------------------------------------------------------------------


async def test_events_of_the_cards_library_soonest_first(bot: BotHarness) -> None:
    await bot.connect(70, KAREN)
    [reply] = await command(bot, 70, "/events")
    text = reply.text
    assert text.startswith("📅 Det sker på dit bibliotek")
    titles = ["Mød forfatteren", "Højtlæsning for de mindste", "Digital hjælp"]
    assert all(title in text for title in titles)
    assert [text.index(title) for title in titles] == sorted(text.index(title) for title in titles)
    assert "kl. 19:00–21:00" in text and "Pris: 50 kr." in text
    assert any(f"📍 {branch}" in text for branch in COPENHAGEN_BRANCHES)
    assert "<b>Mød forfatteren</b>" in reply.html and "<p>" not in reply.html
    assert bot.sandbox.calls["platform GET /v3/events"] == 1
    assert bot.sandbox.calls["platform GET /v3/user"] >= 1


async def test_events_in_english_and_only_coming_ones(bot: BotHarness) -> None:
    await bot.connect(71, JONAS, language_code="en")
    content = bot.sandbox.content  # the sandbox's site content, to age one event
    first = content.items["events"]["710100"][0]
    first["field_ding_event_date"]["value"] = {
        "from": "2020-01-01 10:00:00",
        "to": "2020-01-01 12:00:00",
    }
    [reply] = await command(bot, 71, "/events")
    assert reply.text.startswith("📅 What's on at your library")
    assert "Mød forfatteren" not in reply.text  # over
    assert "Højtlæsning for de mindste" in reply.text and ", 10:00–11:00" in reply.text
    for item in content.items["events"]["710100"]:
        item["field_ding_event_date"]["value"] = {"from": "2020-01-01 10:00:00", "to": ""}
    [none] = await command(bot, 71, "/events")
    # No events: still the library's site and its opening hours, no dead end.
    assert none.text.startswith("📅 Your library has no coming events right now.\n\n🔗 ")


async def test_news_newest_first(bot: BotHarness) -> None:
    await bot.connect(72, KAREN, language_code="en")
    [reply] = await command(bot, 72, "/news")
    text = reply.text
    assert text.startswith("📰 News from your library")
    assert text.index("Nye åbningstider i sommerferien") < text.index("Månedens anbefalinger")
    assert "Se hvornår biblioteket har åbent." in text
    assert bot.sandbox.calls["platform GET /v3/news"] == 1


async def test_events_and_news_need_a_login_and_say_when_the_platform_fails(
    bot: BotHarness,
) -> None:
    bot.add_chat(73, language_code="en")
    [prompt] = await command(bot, 73, "/events")
    assert "log" in prompt.text.lower()
    assert bot.sandbox.calls["platform GET /v3/events"] == 0
    await bot.connect(74, KAREN)
    bot.sandbox.faults.down.add("platform")
    [down] = await command(bot, 74, "/news")
    assert "svarer ikke" in down.text
    bot.sandbox.faults.down.clear()
    # A status with no library, so none is sent, and no site the platform reaches for the
    # login: the platform's 500 "DDBCMS-API not available ..." is about the library.
    record = bot.sandbox._state.record(KAREN)
    record.patron = dataclasses.replace(record.patron, agency="")
    [none] = await command(bot, 74, "/events")
    assert none.text.startswith("Dit bibliotek deler ikke sine arrangementer og nyheder"), none.text


# --- /recommend -----------------------------------------------------------------------------


async def test_recommendations_from_recent_loans_with_order_buttons(bot: BotHarness) -> None:
    await bot.connect(75, KAREN)
    [reply] = await command(bot, 75, "/recommend")
    assert reply.text.startswith("💡 Forslag ud fra dine lån")
    # Karen has Blixen's "Den afrikanske farm" on loan: Blixen's other work comes first, and
    # nothing she has on loan or on hold is suggested.
    assert "1. Babettes gæstebud\nKaren Blixen" in reply.text
    assert "Den afrikanske farm" not in reply.text and "Kongens fald" not in reply.text
    assert "Frøken Smillas fornemmelse for sne" not in reply.text  # on hold
    labels = buttons(reply)
    assert labels[:2] == ["📥 Bestil 1: Babettes gæstebud", "🗺 1"]  # order, where it stands
    assert 2 < len(labels) <= 20
    assert all(len(b.callback_data or "") <= 64 for row in reply.buttons for b in row)
    assert bot.sandbox.calls["platform GET /v3/recommend"] == 1
    assert bot.sandbox.calls["platform GET /v3/work"] == 1
    # The button leads to /order's confirmation, and "yes" places one order.
    ask = await bot.tap(75, reply, "📥 Bestil 1: Babettes gæstebud")
    assert ask is not None and "Vil du bestille Babettes gæstebud af Karen Blixen?" in ask.text
    done = await bot.tap(75, ask, "📥 Ja, bestil")
    assert done is not None and "Babettes gæstebud er bestilt" in done.text
    await asyncio.sleep(0.2)
    assert bot.sandbox.calls[ORDER_CALLS] == 1
    assert bot.sandbox.patron_data(KAREN).orders[-1]["title"] == "Babettes gæstebud"
    assert done.buttons == []  # nothing left to tap twice
    assert bot.sandbox.calls[ORDER_CALLS] == 1


async def test_no_loans_and_nothing_to_recommend(bot: BotHarness) -> None:
    await bot.connect(76, OLE, language_code="en")
    [reply] = await command(bot, 76, "/recommend")
    assert reply.text.startswith("💡 You have no loans or holds right now")
    assert bot.sandbox.calls["platform GET /v3/recommend"] == 0
    # A loan with no record id of the national bibliography: nothing to base suggestions on.
    loans = bot.sandbox.patron_data(OLE).loans
    loans.append({"loanId": "2", "dueDate": "2030-01-01", "title": "Y", "titleId": "lokal-7"})
    [unknown] = await command(bot, 76, "/recommend")
    assert unknown.text.startswith("💡 I found no suggestions based on your loans right now")
    assert bot.sandbox.calls["platform GET /v3/recommend"] == 0
    # A loan the recommender does not know: "no suggestions", not a failure.
    loans.append({"loanId": "1", "dueDate": "2030-01-01", "title": "X", "titleId": "99999999"})
    [none] = await command(bot, 76, "/recommend")
    assert none.text.startswith("💡 I found no suggestions based on your loans right now")


async def test_everything_already_on_loan_is_never_suggested(bot: BotHarness) -> None:
    # Mette's 65 loans cover the whole sandbox catalogue: all of it goes in `ignore`.
    await bot.connect(82, METTE, language_code="en")
    [reply] = await command(bot, 82, "/recommend")
    assert reply.text.startswith("💡 I found no suggestions based on your loans right now")
    assert bot.sandbox.calls["platform GET /v3/recommend"] == 1
    assert bot.sandbox.calls["platform GET /v3/work"] == 0


# --- free text and a bare /search -----------------------------------------------------------


async def test_free_text_offers_a_search_in_the_patrons_language(bot: BotHarness) -> None:
    bot.add_chat(77, language_code="en")
    [offer] = await command(bot, 77, "karen   blixen")
    assert "/help" in offer.text
    assert buttons(offer) == ["🔎 Search for “karen blixen”"]
    assert bot.sandbox.calls["platform GET /v3/search"] == 0
    results = await bot.tap(77, offer, "🔎 Search for “karen blixen”")
    assert results is not None and "2 results for “karen blixen”" in results.text
    assert buttons(results)[0] == "📥 Order 1: Den afrikanske farm"
    bot.add_chat(78, language_code="da")
    [dansk] = await command(bot, 78, "<b>Tove & Gift</b>")
    assert buttons(dansk) == ["🔎 Søg efter »<b>Tove & Gift</b>«"]
    [long] = await command(bot, 78, "ø" * 300)
    assert "højst 200 tegn" in long.text and long.buttons == []
    # A login page's one-time code typed as it is, a secret: no search, nothing stored.
    stored = await _button_rows(bot)
    [code] = await command(bot, 78, "abcd-2345")
    assert "/help" in code.text and code.buttons == []
    assert await _button_rows(bot) == stored


async def test_a_bare_search_asks_and_the_next_message_is_the_search(bot: BotHarness) -> None:
    bot.add_chat(79, language_code="da")
    [ask] = await command(bot, 79, "/search")
    assert ask.text == "🔎 Hvad leder du efter? Skriv en titel, en forfatter eller et emne."
    [results] = await command(bot, 79, "karen blixen")
    assert results.text.startswith("🔎 2 resultater for »karen blixen«")
    # Only the next message: the one after that is offered as a search again.
    [offer] = await command(bot, 79, "tove")
    assert buttons(offer) == ["🔎 Søg efter »tove«"]


async def test_free_text_in_a_group_is_not_offered_as_a_search(bot: BotHarness) -> None:
    bot.add_chat(7201, language_code="en")
    bot.telegram.add_group(-1007201, title="Book club")
    before = len(bot.telegram.sent(-1007201))
    await bot.telegram.send_text(-1007201, "karen blixen", user_id=7201)
    await asyncio.sleep(0.5)
    for message in bot.telegram.sent(-1007201)[before:]:
        assert message.buttons == []


# --- the command menus ----------------------------------------------------------------------


async def test_menus_per_language_and_per_chat_after_language(bot: BotHarness) -> None:
    for language in (None, "da", "en", "uk"):
        assert [c["command"] for c in bot.telegram.commands[language]] == list(COMMANDS)
    described = {c["command"]: c["description"] for c in bot.telegram.commands["en"]}
    assert described["events"] == "Events at your library"
    assert {c["command"]: c["description"] for c in bot.telegram.commands["da"]}[
        "recommend"
    ] == "Forslag ud fra dine lån"
    bot.add_chat(80, language_code="da")
    assert bot.telegram.chat_commands(80)[3]["description"] == "Dine lån og afleveringsdatoer"
    prompt = await bot.send(80, "/language")
    await bot.tap(80, prompt, "English")
    await _until(
        lambda: bot.telegram.chat_commands(80)[3]["description"] != "Dine lån og afleveringsdatoer"
    )
    assert bot.telegram.chat_commands(80)[3]["description"] == "Your loans and due dates"
    # Other chats keep the menu of their language; the default menus are untouched.
    bot.add_chat(81, language_code="da")
    assert bot.telegram.chat_commands(81)[3]["description"] == "Dine lån og afleveringsdatoer"
    assert bot.telegram.commands[None][3]["description"] == "Dine lån og afleveringsdatoer"
    # Back to automatic: the chat follows its app language again.
    prompt = await bot.send(80, "/language")
    await bot.tap(80, prompt, "Automatic (from Telegram)")
    await _until(lambda: bot.telegram.chat_commands(80)[3]["description"].startswith("Dine"))


async def _button_rows(bot: BotHarness) -> int:
    def count(conn: Any) -> int:
        return int(conn.execute(sql("SELECT count(*) FROM callback_ref")).scalar_one())

    return await bot.store.database.run(count)


async def _until(done: Callable[[], bool]) -> None:
    async with asyncio.timeout(5):
        while True:
            if done():
                return
            await asyncio.sleep(0.02)


def test_a_reply_to_the_prompt_is_the_search_in_any_process() -> None:
    """With Telegram's ForceReply the words come as a reply to the prompt, which any process
    (webhook mode, several of them) recognises without the first one's memory."""
    bot_user = User(123456, "Library Bot", is_bot=True)
    patron = User(90, "Karen", is_bot=False)
    chat = Chat(90, "private")
    now = dt.datetime.now(dt.UTC)
    context = cast("Any", SimpleNamespace(bot=SimpleNamespace(id=bot_user.id)))

    def words(replied_text: str | None, sender: User = bot_user) -> Update:
        replied = None
        if replied_text is not None:
            replied = Message(1, now, chat, from_user=sender, text=replied_text)
        message = Message(2, now, chat, from_user=patron, text="blixen", reply_to_message=replied)
        return Update(1, message=message)

    for lang in ("da", "en", "uk"):
        assert is_search_reply(words(t(lang, "whatson.search.ask")), context)
    assert not is_search_reply(words(None), context)
    assert not is_search_reply(words("Something else"), context)
    assert not is_search_reply(words(t("en", "whatson.search.ask"), patron), context)


async def test_events_say_who_they_are_for_link_the_site_and_give_opening_hours(
    bot: BotHarness,
) -> None:
    """Issue 25: /events was a dead end. Items carry no link of their own (the platform's event
    schema has none), so the library's site is given; the audience is `field_ding_event_target`;
    the hours are the dated `opening_hours` of `/v3/library`."""
    await bot.connect(2521, KAREN)
    [reply] = await command(bot, 2521, "/events")
    text = reply.text
    story_time = text[text.index("Højtlæsning for de mindste") :]
    assert "👥 For børn" in story_time.split("\n\n")[0]
    assert "👥 For voksne" in text
    assert (
        "🔗 Mere info og tilmelding på bibliotekets hjemmeside: https://bibliotek.sandbox.test/"
        in text
    )
    assert buttons(reply) == ["🕘 Åbningstider"]
    hours = await bot.tap(2521, reply, "🕘 Åbningstider")
    assert hours is not None and hours.message_id != reply.message_id
    lines = hours.text.splitlines()
    assert lines[0] == "🕘 Åbningstider den kommende uge"
    assert "Københavns Hovedbibliotek" in lines
    branch = lines.index("Københavns Hovedbibliotek")
    week = lines[branch + 1 : branch + 8]
    assert len(week) == 7
    assert all(line.endswith(("08:00–20:00", "10:00–16:00")) for line in week), week
    [news] = await command(bot, 2521, "/news")
    assert "🔗 Mere på bibliotekets hjemmeside" in news.text  # news has nothing to sign up for
    assert buttons(news) == ["🕘 Åbningstider"]


async def test_the_opening_hours_of_a_large_library_come_in_several_messages(
    bot: BotHarness,
) -> None:
    """A library system with two dozen branches has more hours than one message holds: they
    come in as many as needed, each branch whole, none refused by Telegram."""
    for n in range(22):
        branch = (f"DK-7101{n:02d}", f"Filial nr. {n:02d}", "Gade 1", "2100", "København Ø")
        bot.sandbox.content.add_branch_page("710100", branch)
    await bot.connect(2522, KAREN)
    [reply] = await command(bot, 2522, "/events")
    before = len(bot.telegram.sent(2522))
    await bot.tap(2522, reply, "🕘 Åbningstider")
    await bot.settled(1.0)
    sent = bot.telegram.sent(2522)[before:]
    assert len(sent) >= 2 and sent[0].text.startswith("🕘 Åbningstider den kommende uge")
    text = "\n\n".join(message.text for message in sent)
    assert all(f"Filial nr. {n:02d}" in text for n in range(22))
    assert "gik galt" not in text
