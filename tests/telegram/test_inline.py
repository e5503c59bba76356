"""Inline mode: `@<bot> <words>` in any chat lists public catalogue hits; a shared card's button
deep-links into the private chat, where the order flow asks for confirmation."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from telegram import Update

from bot.library.models import Work
from bot.telegram.app import command_label
from bot.telegram.handlers.inline import cover_url, decode_pid, encode_pid
from sandbox.telegram.driver import InlineAnswer
from tests.fixtures.bot import BotHarness
from tests.fixtures.cards import karen_and_ole
from tests.fixtures.chat import buttons, command
from tests.fixtures.patrons import KAREN
from tests.fixtures.telegram import TEST_BOT_USERNAME

ALICE, BOB = 7201, 7202
GROUP = -1001234567899
HOBBIT = "870970-basis:06442885"
CARDS = 7203


async def _ask(
    bot: BotHarness, chat_id: int, words: str, *, user_id: int | None = None, offset: str = ""
) -> InlineAnswer:
    query_id = await bot.telegram.inline_query(chat_id, words, user_id=user_id, offset=offset)
    answer: InlineAnswer = await bot.telegram.inline_answer(query_id)
    return answer


def _start_of(url: str | None) -> str:
    assert url is not None
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == f"https://t.me/{TEST_BOT_USERNAME}"
    [start] = parse_qs(parts.query)["start"]
    return start


async def test_an_inline_query_lists_public_hits_with_an_order_link(bot: BotHarness) -> None:
    bot.add_chat(ALICE, language_code="en")
    answer = await _ask(bot, ALICE, "karen blixen")
    assert [r.title for r in answer.results] == ["Den afrikanske farm", "Babettes gæstebud"]
    assert answer.results[0].description == "Karen Blixen · Book"
    assert "Den afrikanske farm\nKaren Blixen · 1937 · Book" in answer.results[0].text
    assert answer.results[0].html.startswith("<b>Den afrikanske farm</b>")
    assert "Shared from the library catalogue." in answer.results[0].text
    [[order], [where]] = answer.results[0].buttons
    assert order.text == "📥 Order at your library"
    start = _start_of(order.url)
    assert start.startswith("order-870970-basis_") and len(start) <= 64
    assert where.text == "🗺 Where is it?"
    assert _start_of(where.url) == start.replace("order-", "where-", 1)
    # Public hits in the asker's language: cached for the asker alone, and no account was read.
    assert answer.is_personal and answer.cache_time > 0 and answer.next_offset == ""
    assert bot.sandbox.calls["platform GET /v3/search"] == 1
    assert bot.sandbox.calls["platform GET /v3/user"] == 0


async def test_inline_results_page_with_next_offset(bot: BotHarness) -> None:
    bot.add_chat(ALICE, language_code="da")
    first = await _ask(bot, ALICE, "h")
    assert len(first.results) == 10 and first.next_offset == "10"
    second = await _ask(bot, ALICE, "h", offset=first.next_offset)
    assert len(second.results) == 8 and second.next_offset == ""
    titles = [r.title for r in first.results + second.results]
    assert len(set(titles)) == 18
    ids = [r.id for r in first.results + second.results]
    assert len(set(ids)) == 18
    assert first.results[0].buttons[0][0].text == "📥 Bestil på dit bibliotek"
    # An offset only a crafted client sends (a digit that is no ASCII digit) finds nothing.
    odd = await _ask(bot, ALICE, "h", offset="²")
    assert odd.results == [] and odd.next_offset == ""


async def test_inline_results_speak_the_users_language(bot: BotHarness) -> None:
    bot.add_chat(ALICE, language_code="uk")
    answer = await _ask(bot, ALICE, "hobbit")
    assert answer.results[0].title == "The Hobbit"
    assert answer.results[0].buttons[0][0].text == "📥 Замовити у своїй бібліотеці"
    assert "Поширено з бібліотечного каталогу." in answer.results[0].text
    # The saved /language wins over Telegram's.
    await command(bot, ALICE, "/language en")
    again = await _ask(bot, ALICE, "hobbit", offset="")
    assert again.results[0].buttons[0][0].text == "📥 Order at your library"


async def test_nothing_to_search_answers_an_empty_list(bot: BotHarness) -> None:
    bot.add_chat(ALICE, language_code="en")
    assert (await _ask(bot, ALICE, "   ")).results == []
    assert (await _ask(bot, ALICE, "zzzyyyxxx")).results == []
    assert (await _ask(bot, ALICE, "h", offset="bogus")).results == []
    # Nothing in it depends on the asker: Telegram may give it to anyone.
    assert not (await _ask(bot, ALICE, "   ")).is_personal


@pytest.mark.bot_api_over_http  # the bot's own request sends `results` in a JSON body
async def test_a_search_without_hits_is_answered_over_the_wire(bot: BotHarness) -> None:
    bot.add_chat(ALICE, language_code="en")
    answer = await _ask(bot, ALICE, "zzzyyyxxx")
    assert answer.results == [] and answer.cache_time > 0
    assert bot.sandbox.calls["platform GET /v3/search"] == 1


async def test_a_shared_card_in_a_group_reads_no_account(bot: BotHarness) -> None:
    await bot.connect(ALICE, KAREN, language_code="en")
    bot.add_chat(BOB, language_code="da")
    bot.telegram.add_group(GROUP, title="Book club")
    users = bot.sandbox.calls["platform GET /v3/user"]
    query_id = await bot.telegram.inline_query(GROUP, "hobbit", user_id=ALICE)
    answer = await bot.telegram.inline_answer(query_id)
    await bot.telegram.choose(query_id, answer.results[0].id)
    [card] = bot.telegram.posted_via(GROUP)
    assert card.text.startswith("The Hobbit\nJ.R.R. Tolkien")
    assert _start_of(card.buttons[0][0].url) == "order-870970-basis_06442885"
    await bot.settled(0.3)
    assert bot.telegram.sent(GROUP) == []  # the bot says nothing in the group
    assert bot.sandbox.calls["platform GET /v3/user"] == users


async def test_the_deep_link_offers_the_order_confirmation(bot: BotHarness) -> None:
    await bot.connect(ALICE, KAREN)
    answer = await _ask(bot, ALICE, "hobbit")
    start = _start_of(answer.results[0].buttons[0][0].url)
    [ask] = await command(bot, ALICE, f"/start {start}")
    assert "Vil du bestille The Hobbit af J.R.R. Tolkien?" in ask.text
    assert buttons(ask)[0] == "📥 Ja, bestil"
    assert bot.sandbox.calls["platform GET /v3/order"] == 0


async def test_the_where_deep_link_shows_where_it_stands(bot: BotHarness) -> None:
    await bot.connect(ALICE, KAREN, language_code="en")
    answer = await _ask(bot, ALICE, "afrikanske farm")
    start = _start_of(answer.results[0].buttons[1][0].url)
    [where] = await command(bot, ALICE, f"/start {start}")
    assert where.text.startswith("📍 Den afrikanske farm at Københavns Biblioteker")
    assert "📗 Vesterbro Bibliotek: on the shelf" in where.text


async def test_the_deep_link_without_a_login_asks_to_log_in(bot: BotHarness) -> None:
    bot.add_chat(BOB, language_code="en")
    [prompt] = await command(bot, BOB, "/start order-870970-basis_06442885")
    assert "not logged in" in prompt.text
    [stale] = await command(bot, BOB, "/start order-nonsense")
    assert stale.text == "That button is no longer valid. Try the command again."


async def test_a_card_sent_in_the_private_chat_is_not_answered(bot: BotHarness) -> None:
    bot.add_chat(ALICE, language_code="en")
    query_id = await bot.telegram.inline_query(ALICE, "hobbit")
    answer = await bot.telegram.inline_answer(query_id)
    await bot.telegram.choose(query_id, answer.results[0].id)
    await bot.settled(0.3)
    assert bot.telegram.sent(ALICE) == []
    assert bot.sandbox.calls["platform GET /v3/search"] == 1


def test_covers_get_a_scheme_and_pids_a_safe_deep_link() -> None:
    cover = Work.model_validate({"coverUrlThumbnail": ["//moreinfo.addi.dk/2.11/thumb.jpg"]})
    assert cover_url(cover) == "https://moreinfo.addi.dk/2.11/thumb.jpg"
    assert cover_url(Work()) is None
    assert cover_url(Work.model_validate({"coverUrlThumbnail": ["javascript:x"]})) is None
    start = encode_pid(HOBBIT)
    assert start == "order-870970-basis_06442885"
    assert decode_pid(start) == HOBBIT
    # An id with underscores of its own: only the first underscore was the colon.
    assert decode_pid(encode_pid("870970-basis:a_b-c") or "") == "870970-basis:a_b-c"
    assert encode_pid("870970-basis:" + "9" * 60) is None  # past Telegram's 64 characters
    assert decode_pid("order-870970-basis") is None and decode_pid("ABCD2345") is None


async def test_the_deep_link_with_several_cards_asks_which_card(bot: BotHarness) -> None:
    bot.add_chat(CARDS, language_code="en")
    await karen_and_ole(bot, CARDS)
    [which] = await command(bot, CARDS, "/start order-870970-basis_06442885")
    assert which.text == "Which card do you want to order The Hobbit with?"
    assert buttons(which) == ["👤 Karen", "👤 Ole"]
    ask = await bot.tap(CARDS, which, "👤 Ole")
    assert ask is not None and "Do you want to order The Hobbit by J.R.R. Tolkien?" in ask.text
    assert bot.sandbox.calls["platform GET /v3/order"] == 0


async def test_a_failing_catalogue_offers_the_private_search_and_is_not_cached(
    bot: BotHarness,
) -> None:
    bot.add_chat(ALICE, language_code="da")
    bot.sandbox.faults.down.add("platform")
    answer = await _ask(bot, ALICE, "hobbit")
    assert answer.results == [] and answer.cache_time == 0 and answer.is_personal
    assert answer.button == {"text": "Kataloget svarer ikke – søg her", "start_parameter": "search"}
    bot.sandbox.faults.down.clear()
    [ask] = await command(bot, ALICE, "/start search")
    assert ask.text.startswith("🔎 Hvad leder du efter?")


def test_inline_updates_are_counted_under_their_own_labels() -> None:
    user = {"id": ALICE, "is_bot": False, "first_name": "Alice"}
    query = {"id": "1", "from": user, "query": "hobbit", "offset": ""}
    chosen = {"result_id": "0", "from": user, "query": "hobbit"}
    assert command_label(Update.de_json({"update_id": 1, "inline_query": query}, None)) == "inline"
    shared = Update.de_json({"update_id": 2, "chosen_inline_result": chosen}, None)
    assert command_label(shared) == "inline_shared"
