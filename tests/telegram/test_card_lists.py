"""/loans, /holds, /debt, /renew, /away, /events and /recommend in a chat with several cards: a
section per card, each card read with its own token, buttons to show one card."""

from __future__ import annotations

import asyncio
import dataclasses
import re

from bot.telegram.buttons import (
    CancelHold,
    ListPage,
    OrderFound,
    RenewAll,
    RenewLoan,
    decode,
)
from sandbox.telegram.driver import SentMessage
from tests.fixtures.bot import BotHarness
from tests.fixtures.cards import due, jonas_title, two_cards
from tests.fixtures.chat import buttons, command, send, tap
from tests.fixtures.patrons import JONAS, KAREN, LITTLE_PRINCE, METTE, OLE

KAREN_TITLE = "Den afrikanske farm"  # one of Karen's loans
JONAS_TITLE_COUNT = 1  # Jonas has one loan, due in 3 days, and one hold ready


async def test_loans_show_a_section_per_card_and_a_button_per_card(bot: BotHarness) -> None:
    await two_cards(bot, 401)
    [reply] = await command(bot, 401, "/loans")
    text = reply.text
    assert text.startswith("📚 Your loans (8)")
    assert "👤 <b>Karen</b>" in reply.html and "👤 <b>Jonas</b>" in reply.html
    karen, jonas = text.index("👤 Karen"), text.index("👤 Jonas")
    assert karen < text.index(KAREN_TITLE) < jonas < text.index(jonas_title(bot))
    assert "7 loans · " in text and "1 loan · " in text
    assert buttons(reply) == ["Karen", "Jonas", "· All cards ·", "📚 Overview"]
    # Only Jonas's card, in the same message.
    only = await bot.tap(401, reply, "Jonas")
    assert only is not None and only.message_id == reply.message_id
    assert only.text.startswith("📚 Your loans (1)")
    assert "👤 Jonas" in only.text and "Karen" not in only.text.replace("· Karen", "")
    assert KAREN_TITLE not in only.text and jonas_title(bot) in only.text
    assert buttons(only) == ["Karen", "· Jonas ·", "All cards", "📚 Overview"]
    back = await bot.tap(401, only, "All cards")
    assert back is not None and back.text == text


async def test_holds_and_debt_per_card(bot: BotHarness) -> None:
    await two_cards(bot, 402)
    [holds] = await command(bot, 402, "/holds")
    assert holds.text.startswith("📌 Your holds (5)")
    assert holds.text.index("👤 Karen") < holds.text.index("👤 Jonas")
    assert buttons(holds)[-3:] == ["Karen", "Jonas", "· All cards ·"]
    [debt] = await command(bot, 402, "/debt")
    assert debt.text.index("👤 Karen") < debt.text.index("👤 Jonas")
    assert "Owes the library nothing." in debt.text.split("👤 Jonas")[1]


async def test_long_lists_page_through_the_sections(bot: BotHarness) -> None:
    await bot.connect(403, METTE, language_code="en")
    await bot.connect(403, JONAS, language_code="en")
    await bot.store.cards.set_label(403, 1, "Mette")
    await bot.store.cards.set_label(403, 2, "Jonas")
    [first] = await command(bot, 403, "/loans")
    assert first.text.startswith("📚 Your loans (66)")
    labels = buttons(first)
    pages = int(labels[0].split("/")[1])
    assert labels[:2] == [f"1/{pages}", "▶"] and pages > 1
    assert labels[2:] == ["Mette", "Jonas", "· All cards ·", "📚 Overview"]
    assert "👤 Mette" in first.text and "Jonas" not in first.text
    shown = first
    for _ in range(pages - 1):
        edited = await bot.tap(403, shown, "▶")
        assert edited is not None and edited.message_id == first.message_id
        assert len(edited.text) <= 4096
        shown = edited
        if "👤 Jonas" not in shown.text:
            assert "👤 Mette (continued)" in shown.text
    assert "👤 Jonas" in shown.text and jonas_title(bot) in shown.text
    # Mette's card alone pages on its own.
    only = await bot.tap(403, shown, "Mette")
    assert only is not None and only.text.startswith("📚 Your loans (65)")
    assert "Jonas" not in only.text and buttons(only)[0].startswith("1/")


async def test_renew_a_loan_of_card_two_uses_its_token(bot: BotHarness) -> None:
    await two_cards(bot, 404)
    title = jonas_title(bot)
    before_jonas = due(bot, JONAS, title)
    before_karen = due(bot, KAREN, KAREN_TITLE)
    [listing] = await command(bot, 404, "/renew")
    labels = buttons(listing)
    assert labels[:2] == [
        "🔄 Renew those due within 3 days: Karen",
        "🔄 Renew those due within 3 days: Jonas",
    ]
    assert labels[-3:] == ["Karen", "Jonas", "· All cards ·"]
    assert "👤 Karen" in listing.text and "👤 Jonas" in listing.text
    [label] = [text for text in labels if text.startswith("Jonas · ")]
    edited = await bot.tap(404, listing, label)
    assert edited is not None and edited.message_id == listing.message_id
    assert due(bot, JONAS, title) > before_jonas
    assert due(bot, KAREN, KAREN_TITLE) == before_karen
    # The button keeps the card's name it was shown with.
    assert any(text.startswith("Jonas · ✅") and title[:10] in text for text in buttons(edited))


async def test_renew_all_of_one_card_renews_only_that_card(bot: BotHarness) -> None:
    await two_cards(bot, 405)
    title = jonas_title(bot)
    before_jonas = due(bot, JONAS, title)
    karen_before = {
        loan["loanId"]: loan["dueDate"] for loan in bot.sandbox.patron_data(KAREN).loans
    }
    [listing] = await command(bot, 405, "/renew")
    sent = len(bot.telegram.sent(405))
    await bot.tap(405, listing, "🔄 Renew those due within 3 days: Jonas")
    result = await bot.next_message(405, sent)
    assert "👤 Jonas" in result.text and "1 renewed" in result.text
    assert due(bot, JONAS, title) > before_jonas
    karen_after = {loan["loanId"]: loan["dueDate"] for loan in bot.sandbox.patron_data(KAREN).loans}
    assert karen_after == karen_before


async def test_away_renews_on_every_card(bot: BotHarness) -> None:
    await two_cards(bot, 406)
    title = jonas_title(bot)
    before_jonas = due(bot, JONAS, title)
    [reply] = await command(bot, 406, "/away 5")
    assert reply.text.index("👤 Karen") < reply.text.index("👤 Jonas")
    assert due(bot, JONAS, title) > before_jonas
    assert "renewed" in reply.text.split("👤 Jonas")[1]


def logins(message: SentMessage) -> list[str]:
    """The cards a message offers to log in again: its buttons' labels, or (a local set-up,
    where Telegram refuses URL buttons) its text links' lines."""
    found = [b.text for row in message.buttons for b in row if b.url and "Log in" in b.text]
    found += [line for line in message.text.splitlines() if line.startswith("🔑 Log in again")]
    return found


async def test_a_refused_token_lapses_only_that_card_and_the_list_names_it(
    bot: BotHarness,
) -> None:
    await two_cards(bot, 407)
    second = await bot.store.cards.get(407, 2)
    assert second is not None
    bot.sandbox.expire_token(second.token)
    # One message: the list, with Jonas's section saying his login lapsed, and his login.
    [listing] = await command(bot, 407, "/loans")
    assert listing.text.startswith("📚 Your loans (7)")
    assert KAREN_TITLE in listing.text
    assert "🔑 Jonas's library login has lapsed." in listing.text
    assert "the other cards are unchanged" not in listing.text
    assert len(logins(listing)) == 1 and "Jonas" in logins(listing)[0]
    # The card stays, with its name, and without its token.
    lapsed = await bot.store.cards.get(407, 2, lapsed=True)
    assert lapsed is not None and lapsed.is_lapsed and lapsed.label == "Jonas"
    assert lapsed.token == "" and lapsed.card_id == second.card_id
    assert await bot.store.cards.get(407, 2) is None  # never handed to the library
    # Every list shows it, each time, with its login.
    [holds] = await command(bot, 407, "/holds")
    assert "🔑 Jonas's library login has lapsed." in holds.text and len(logins(holds)) == 1
    [cards] = await command(bot, 407, "/cards")
    assert "2. 👤 Jonas · 🔑 login lapsed" in cards.text and len(logins(cards)) == 1
    [renewals] = await command(bot, 407, "/renew")
    assert "🔑 Jonas's library login has lapsed." in renewals.text and len(logins(renewals)) == 1


def login_links(message: SentMessage) -> list[str]:
    """The addresses of a message's login buttons, or of its text links."""
    found = [b.url for row in message.buttons for b in row if b.url and "Log in" in b.text]
    return found + re.findall(r"https?://\S+/oauth/authorize\?\S+", message.text)


async def test_a_login_page_is_asked_for_where_the_browser_may_be_another_holders(
    bot: BotHarness,
) -> None:
    """The access service logs a signed-on browser in again as its last patron, without a
    page: in a chat of several cards, adding one or logging a lapsed one in again asks for
    the page (`force_login`); a card alone keeps single sign-on."""
    await bot.connect(413, KAREN, language_code="en")
    assert "force_login=1" in await bot.login_url(413)  # adding a card
    alone = await bot.store.cards.get(413, 1)
    assert alone is not None
    bot.sandbox.expire_token(alone.token)
    [listing] = await command(bot, 413, "/loans")
    [link] = login_links(listing)
    assert "force_login" not in link
    assert "force_login" not in await bot.login_url(413)  # its login again
    await two_cards(bot, 414)
    second = await bot.store.cards.get(414, 2)
    assert second is not None
    bot.sandbox.expire_token(second.token)
    [listing] = await command(bot, 414, "/loans")
    [link] = login_links(listing)
    assert "force_login=1" in link
    # Every card of the family lapsed: /login asks for the page too.
    first = await bot.store.cards.get(414, 1)
    assert first is not None
    bot.sandbox.expire_token(first.token)
    await command(bot, 414, "/loans")
    assert "force_login=1" in await bot.login_url(414)


async def test_logging_in_again_brings_a_lapsed_card_back_as_it_was(bot: BotHarness) -> None:
    await two_cards(bot, 412)
    await bot.store.cards.set_label(412, 2, "Lillebror")
    second = await bot.store.cards.get(412, 2)
    assert second is not None
    await bot.store.cards.set_pickup_branch(412, "DK-710104", number=2)
    bot.sandbox.expire_token(second.token)
    await command(bot, 412, "/loans")
    assert (await bot.store.cards.get(412, 2, lapsed=True) or second).is_lapsed
    # The same person logs in again: the same card, number, name and settings; no new card.
    await bot.connect(412, JONAS, language_code="en")
    back = await bot.store.cards.get(412, 2)
    assert back is not None and not back.is_lapsed and back.token
    assert (back.label, back.card_id, back.pickup_branch) == (
        "Lillebror",
        second.card_id,
        "DK-710104",
    )
    assert [card.number for card in await bot.store.cards.of_chat(412, lapsed=True)] == [1, 2]
    assert "back, with its name, calendar and settings" in bot.telegram.sent(412)[-1].text
    [listing] = await command(bot, 412, "/loans")
    assert listing.text.startswith("📚 Your loans (8)") and "lapsed" not in listing.text


async def three_cards(bot: BotHarness, chat_id: int) -> None:
    """Karen (1), Jonas (2) and Ole (3)."""
    await two_cards(bot, chat_id)
    await bot.connect(chat_id, OLE, language_code="en")
    await bot.store.cards.set_label(chat_id, 3, "Ole")


async def test_cards_whose_logins_lapse_together_are_named_in_one_message(
    bot: BotHarness,
) -> None:
    """Two of three cards refused in one /loans: the one message, the list, names both (never
    one that calls the others "unchanged" beside another that lapsed), each with its login,
    and shows the third."""
    await three_cards(bot, 410)
    for number in (2, 3):
        card = await bot.store.cards.get(410, number)
        assert card is not None
        bot.sandbox.expire_token(card.token)
    [listing] = await command(bot, 410, "/loans")
    assert KAREN_TITLE in listing.text
    assert "🔑 Jonas's library login has lapsed." in listing.text
    assert "🔑 Ole's library login has lapsed." in listing.text
    assert "unchanged" not in listing.text
    assert [("Jonas" in one, "Ole" in one) for one in logins(listing)] == [
        (True, False),
        (False, True),
    ]
    cards = await bot.store.cards.of_chat(410, lapsed=True)
    assert [(card.number, card.label, card.is_lapsed) for card in cards] == [
        (1, "Karen", False),
        (2, "Jonas", True),
        (3, "Ole", True),
    ]


async def test_every_card_lapsing_at_once_is_one_message(bot: BotHarness) -> None:
    await three_cards(bot, 411)
    for card in await bot.store.cards.of_chat(411):
        bot.sandbox.expire_token(card.token)
    messages = await send(bot, 411, "/loans")
    assert len(messages) == 1
    assert messages[0].text.startswith(
        "🔑 The library logins of Karen, Jonas and Ole have lapsed. The cards stay here with "
        "their names and settings"
    )
    assert len(logins(messages[0])) == 3
    cards = await bot.store.cards.of_chat(411, lapsed=True)
    assert [(card.label, card.is_lapsed) for card in cards] == [
        ("Karen", True),
        ("Jonas", True),
        ("Ole", True),
    ]
    # Asked again, the same one message: no card is forgotten, none is asked of the library.
    again = await send(bot, 411, "/holds")
    assert len(again) == 1 and again[0].text.startswith("🔑 The library logins of Karen, Jonas")


async def test_an_old_button_of_a_lapsed_card_names_that_card_alone(bot: BotHarness) -> None:
    """Every old button of a family's lapsed cards would repeat the family's message; a tap
    names the card its button was for, with that card's login."""
    await three_cards(bot, 412)
    [listing] = await command(bot, 412, "/renew")
    for card in await bot.store.cards.of_chat(412):
        bot.sandbox.expire_token(card.token)
    await send(bot, 412, "/loans")  # the family's one message
    label = next(text for text in buttons(listing) if text.startswith("Karen · 🔄 "))
    [told] = await tap(bot, 412, listing, label)
    assert told.text.startswith("🔑 Karen's library login has lapsed."), told.text
    assert [("Karen" in one, "Jonas" in one) for one in logins(told)] == [(True, False)]


async def test_a_platform_failure_on_one_card_shows_the_others(bot: BotHarness) -> None:
    await two_cards(bot, 408)
    bot.sandbox.refuse_patron(JONAS)
    [reply] = await command(bot, 408, "/loans")
    assert KAREN_TITLE in reply.text
    assert "⚠️ Jonas's card could not be read just now." in reply.text
    assert await bot.store.cards.get(408, 2) is not None


async def test_events_of_cards_at_one_library_are_one_message(bot: BotHarness) -> None:
    await bot.connect(409, KAREN, language_code="en")
    [alone] = await command(bot, 409, "/events")
    await bot.connect(409, JONAS, language_code="en")
    sent = len(bot.telegram.sent(409))
    [reply] = await command(bot, 409, "/events")
    assert reply.text == alone.text  # both cards are at Københavns Biblioteker
    await asyncio.sleep(0.3)
    assert len(bot.telegram.sent(409)) == sent + 1


async def test_events_and_news_of_cards_at_two_libraries(bot: BotHarness) -> None:
    await two_cards(bot, 415)
    # Jonas moves to Aarhus (the family data of the sandbox has no second library yet).
    record = bot.sandbox._state.record(JONAS)
    record.patron = dataclasses.replace(record.patron, agency="751000")
    events = await command(bot, 415, "/events", until=lambda found: len(found) >= 2)
    karen, jonas = events
    assert karen.text.startswith("👤 Karen\n📅 What's on at your library")
    assert jonas.text.startswith("👤 Jonas\n📅 What's on at your library")
    # Each library's own events: the places are its branches.
    assert "Københavns Hovedbibliotek" in karen.text and "Dokk1" not in karen.text
    assert "Dokk1" in jonas.text and "Københavns Hovedbibliotek" not in jonas.text
    news = await command(bot, 415, "/news", until=lambda found: len(found) >= 2)
    assert [m.text.split("\n")[0] for m in news] == ["👤 Karen", "👤 Jonas"]


async def test_cancel_a_hold_of_card_two_uses_its_token(bot: BotHarness) -> None:
    await two_cards(bot, 411)
    [holds] = await command(bot, 411, "/holds")
    assert "Karen · ✖ Cancel: Dune" in buttons(holds)
    confirm = await bot.tap(411, holds, "Jonas · ✖ Cancel: Klara og solen")
    assert (
        confirm is not None
        and confirm.text
        == "Do you want to cancel your hold on Klara og solen, for pick-up at Københavns "
        "Hovedbibliotek?"
    )
    done = await bot.tap(411, confirm, "✖ Yes, cancel it")
    # Whose hold it was: a family's answer is headed by the card's name.
    assert (
        done is not None and done.text == "👤 Jonas\n✅ Your hold on Klara og solen is cancelled."
    )
    assert bot.sandbox.patron_data(JONAS).orders == []
    assert len(bot.sandbox.patron_data(KAREN).orders) == 4


async def test_a_chat_left_with_card_two_alone_renews_with_it(bot: BotHarness) -> None:
    await two_cards(bot, 412)
    await bot.store.remove_card(412, 1, logout=True)
    title = jonas_title(bot)
    before = due(bot, JONAS, title)
    [listing] = await command(bot, 412, "/renew")
    assert "👤" not in listing.text  # one card: the list as it always was
    [label] = [text for text in buttons(listing) if title in text]
    edited = await bot.tap(412, listing, label)
    assert edited is not None and any(text.startswith("✅") for text in buttons(edited))
    assert due(bot, JONAS, title) > before


async def test_a_suggestion_orders_with_the_card_it_was_made_for(bot: BotHarness) -> None:
    await two_cards(bot, 413)
    # Jonas's card picks up at Vesterbro; Karen's has no branch saved (her library's main one).
    await bot.store.cards.set_pickup_branch(413, "DK-710104", number=2)
    [ask] = await command(bot, 413, "/recommend")
    assert ask.text == "💡 Suggestions from whose loans?"
    assert buttons(ask) == ["Karen", "Jonas"]
    shown = await bot.tap(413, ask, "Jonas")
    assert shown is not None and shown.message_id == ask.message_id
    assert shown.text.startswith("💡 Suggestions based on your loans")
    label = buttons(shown)[0]
    assert label.startswith("📥 Order 1: ")
    confirm = await bot.tap(413, shown, label)
    assert confirm is not None
    # The confirmation of `/order` for Jonas's card: his pick-up branch, no "which card?".
    assert "Pick-up at Vesterbro Bibliotek." in confirm.text


async def test_renew_shows_one_card_with_its_own_buttons(bot: BotHarness) -> None:
    await two_cards(bot, 416)
    [listing] = await command(bot, 416, "/renew")
    only = await bot.tap(416, listing, "Jonas")
    assert only is not None and only.message_id == listing.message_id
    assert "👤 Jonas" in only.text and "👤 Karen" not in only.text
    title = jonas_title(bot)
    labels = buttons(only)
    assert labels[0] == "🔄 Renew those due within 3 days"
    assert [text for text in labels if title in text] and not [
        text for text in labels if KAREN_TITLE in text
    ]
    assert labels[-3:] == ["Karen", "· Jonas ·", "All cards"]
    before = due(bot, JONAS, title)
    sent = len(bot.telegram.sent(416))
    await bot.tap(416, only, "🔄 Renew those due within 3 days")
    result = await bot.next_message(416, sent)
    assert "1 renewed" in result.text
    assert due(bot, JONAS, title) > before


def test_a_button_stored_before_cards_means_card_one() -> None:
    assert decode({"loan_id": "L1", "title": "T", "due": "2026-01-01"}, RenewLoan) == RenewLoan(
        "L1", "T", "2026-01-01", number=1
    )
    assert decode({"loans": ["L1"]}, RenewAll) == RenewAll(("L1",), number=1)
    stored = decode({"order_id": "O1", "title": "T", "confirm": True}, CancelHold)
    assert stored is not None and stored.number == 1
    assert decode({"kind": "loans"}, ListPage) == ListPage("loans")  # one card: as before
    assert decode({"pid": "870970-basis:1"}, OrderFound) == OrderFound("870970-basis:1")


async def test_renew_all_is_offered_only_for_a_card_with_a_loan_due_within_the_window(
    bot: BotHarness,
) -> None:
    await two_cards(bot, 417)
    await command(bot, 417, "/reminders 1")  # the window: 1 day; Jonas's loan is due in 3
    [listing] = await command(bot, 417, "/renew")
    assert "nothing due within 1 day" in listing.text
    renew_all = [label for label in buttons(listing) if label.startswith("🔄 Renew those due")]
    assert renew_all == ["🔄 Renew those due within 1 day: Karen"]


async def test_which_card_says_why_a_lapsed_card_is_not_offered(bot: BotHarness) -> None:
    await three_cards(bot, 413)
    ole = await bot.store.cards.get(413, 3)
    assert ole is not None
    bot.sandbox.expire_token(ole.token)
    await send(bot, 413, "/loans")  # Ole's card lapses, kept by its name
    which = await bot.send(413, f"/order {LITTLE_PRINCE}")
    assert which.text == (
        "Which card do you want to order Den lille prins with?\n"
        "🔑 Ole's library login has lapsed, so that card is not offered: /login logs it in again."
    )
    assert buttons(which) == ["👤 Karen", "👤 Jonas"]
