"""A card's buttons name the card, never only its number: card numbers are reused, so after
Jonas logs out and Mette logs in (and gets his number), Jonas's old buttons answer that his
card is gone and act on nobody (SECURITY.md, threat 33). And a refusal that races a new login
forgets nothing fresh."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import update

from storage.tables import CALLBACK_REF
from tests.fixtures.bot import BotHarness
from tests.fixtures.cards import due, jonas_title, log_in, two_cards
from tests.fixtures.chat import buttons, command
from tests.fixtures.patrons import JONAS, KAREN, LITTLE_PRINCE, METTE

CHAT = 8301
GONE = "That card is no longer in this chat."
USER_CALLS = "platform GET /v3/user"


async def tap_stale(bot: BotHarness, message: Any, label: str) -> Any:
    """Tap `label` under an old message; the bot's next new or edited message."""
    answer = await bot.tap(CHAT, message, label)
    assert answer is not None, label
    return answer


async def as_stored_before_identities(bot: BotHarness, data: str) -> None:
    """Make the stored payload of the button `data` as it was before card identities."""
    ref_id = data.partition(":")[2]
    stored = await bot.store.callbacks.callback(ref_id, CHAT, user_id=CHAT)
    assert stored is not None
    payload = dict(stored.payload)
    del payload["cid"]
    statement = update(CALLBACK_REF).where(CALLBACK_REF.c.id == ref_id).values(payload=payload)
    await bot.store.database.run(lambda conn: conn.execute(statement))


async def jonas_replaced_by_mette(bot: BotHarness) -> None:
    """Jonas (card 2) logs out; Mette logs in and gets number 2."""
    which = await bot.send(CHAT, "/logout")
    done = await bot.tap(CHAT, which, "🚪 Jonas")
    assert done is not None and done.text.startswith("👋 Jonas's card is logged out here")
    await bot.connect(CHAT, METTE, language_code="en")
    await bot.store.cards.set_label(CHAT, 2, "Mette")
    cards = await bot.store.cards.of_chat(CHAT)
    assert [(card.number, card.label) for card in cards] == [(1, "Karen"), (2, "Mette")]


async def test_a_stale_order_confirmation_orders_nothing_for_the_next_holder(
    bot: BotHarness,
) -> None:
    await two_cards(bot, CHAT)
    which = await bot.send(CHAT, f"/order {LITTLE_PRINCE}")
    ask = await bot.tap(CHAT, which, "👤 Jonas")
    assert ask is not None and "Den lille prins" in ask.text
    await jonas_replaced_by_mette(bot)
    mette_orders = len(bot.sandbox.patron_data(METTE).orders)
    karen_orders = len(bot.sandbox.patron_data(KAREN).orders)

    gone = await tap_stale(bot, ask, "📥 Yes, order it")
    assert gone.text.startswith(GONE)
    assert len(bot.sandbox.patron_data(METTE).orders) == mette_orders
    assert len(bot.sandbox.patron_data(KAREN).orders) == karen_orders


async def test_stale_card_buttons_act_on_nobody(bot: BotHarness) -> None:
    """Log out, rename, renew all, renew one, cancel and "All cards", all shown while Jonas
    was card 2, tapped once Mette is."""
    await two_cards(bot, CHAT)
    listed = await bot.send(CHAT, "/cards")
    listed_again = await bot.send(CHAT, "/cards")
    logouts = await bot.send(CHAT, "/logout")
    [renewals] = await command(bot, CHAT, "/renew")
    [holds] = await command(bot, CHAT, "/holds")
    confirm = await bot.tap(CHAT, holds, "Jonas · ✖ Cancel: Klara og solen")
    assert confirm is not None and "Klara og solen" in confirm.text
    title = jonas_title(bot)
    [renew_one] = [label for label in buttons(renewals) if label.startswith("Jonas · ")]
    await jonas_replaced_by_mette(bot)
    mette_loans = [loan["dueDate"] for loan in bot.sandbox.patron_data(METTE).loans]
    mette_orders = list(bot.sandbox.patron_data(METTE).orders)
    [mette_token] = bot.sandbox.live_tokens(METTE)

    for message, label in (
        (listed, "🚪 Log out Jonas"),
        (listed_again, "✏️ Rename Jonas"),
        (renewals, "🔄 Renew those due within 3 days: Jonas"),
        (renewals, renew_one),
        (confirm, "✖ Yes, cancel it"),
    ):
        answer = await tap_stale(bot, message, label)
        assert answer.text.startswith(GONE), (label, answer.text)
    # The /cards lists tapped for a log-out and a rename are left as they were, with the
    # other cards' buttons.
    for listing, left in ((listed, "🚪 Log out Karen"), (listed_again, "✏️ Rename Karen")):
        [kept] = [m for m in bot.telegram.sent(CHAT) if m.message_id == listing.message_id]
        assert kept.text == listing.text and left in buttons(kept)

    # "All cards" logs out the cards there were: Karen's, never Mette's.
    done = await tap_stale(bot, logouts, "🚪 All cards")
    assert "👋 Karen's card is logged out here" in done.text
    cards = await bot.store.cards.of_chat(CHAT)
    assert [(card.number, card.label) for card in cards] == [(2, "Mette")]
    assert bot.sandbox.live_tokens(METTE) == [mette_token]
    assert [loan["dueDate"] for loan in bot.sandbox.patron_data(METTE).loans] == mette_loans
    assert bot.sandbox.patron_data(METTE).orders == mette_orders
    assert due(bot, JONAS, title) is not None  # Jonas's own loan is his, untouched too


async def test_a_button_stored_before_card_identities_acts_on_no_card(bot: BotHarness) -> None:
    """The safe behaviour for payloads stored before the upgrade (a number, no identity)."""
    await two_cards(bot, CHAT)
    which = await bot.send(CHAT, f"/order {LITTLE_PRINCE}")
    ask = await bot.tap(CHAT, which, "👤 Jonas")
    assert ask is not None
    logouts = await bot.send(CHAT, "/logout")
    for message, label in ((ask, "📥 Yes, order it"), (logouts, "🚪 Jonas")):
        await as_stored_before_identities(bot, message.button(label).callback_data)
        answer = await tap_stale(bot, message, label)
        assert answer.text.startswith(GONE), label
    assert len(await bot.store.cards.of_chat(CHAT)) == 2
    assert len(bot.sandbox.patron_data(JONAS).orders) == 1  # his ready hold alone


async def test_a_refusal_racing_a_new_login_keeps_the_fresh_card(bot: BotHarness) -> None:
    """Jonas's /loans is in flight when his card logs in again: the refresh replaces the token
    and the old one is refused, so the held call gets 401. The fresh card stays with its token
    live; the patron is told to send the command again, not that the login expired."""
    await log_in(bot, CHAT, JONAS)
    old = await bot.store.cards.get(CHAT)
    assert old is not None
    gate = asyncio.Event()
    bot.sandbox.faults.hold_next["/v3/user"] = gate
    before = len(bot.telegram.sent(CHAT))
    await bot.telegram.send_text(CHAT, "/loans")
    async with asyncio.timeout(10):
        while "/v3/user" in bot.sandbox.faults.hold_next:  # noqa: ASYNC110 - until it is held
            await asyncio.sleep(0.01)
    # The login completing (what `/start <code>` does), and the old token refused from now.
    fresh = bot.sandbox.issue_token(JONAS)
    code = await bot.store.create_pending_link(CHAT, fresh, None, {"uniqueId": old.unique_id})
    linked = await bot.store.complete_link(CHAT, code)
    assert linked is not None and linked.outcome == "refreshed"
    bot.sandbox.expire_token(old.token)
    gate.set()
    told = await bot.next_message(CHAT, before)
    assert told.text.startswith("🔄 The card was logged in again while I asked the library")
    card = await bot.store.cards.get(CHAT)
    assert card is not None and card.token == fresh and card.card_id == old.card_id
    assert bot.sandbox.token_is_live(fresh)
    texts = [message.text for message in bot.telegram.sent(CHAT)[before:]]
    assert not any("expired" in text for text in texts)


async def test_a_stale_view_of_one_card_shows_every_card_not_the_next_holder(
    bot: BotHarness,
) -> None:
    """Jonas's "show only Jonas" button under an old /loans, tapped once Mette has his number,
    shows every card (as for a card that is gone), never Mette's card as if it were his."""
    await two_cards(bot, CHAT)
    [loans] = await command(bot, CHAT, "/loans")
    assert "Jonas" in buttons(loans)
    await jonas_replaced_by_mette(bot)
    shown = await bot.tap(CHAT, loans, "Jonas")
    assert shown is not None
    assert "👤 Karen" in shown.text and "👤 Mette" in shown.text


async def test_an_old_cancel_button_says_the_card_is_gone_at_the_first_tap(
    bot: BotHarness,
) -> None:
    """The hold's own "Cancel" (not only the "yes" under its question): no question first."""
    await two_cards(bot, CHAT)
    [holds] = await command(bot, CHAT, "/holds")
    await jonas_replaced_by_mette(bot)
    answer = await tap_stale(bot, holds, "Jonas · ✖ Cancel: Klara og solen")
    assert answer.text.startswith(GONE)
    assert answer.buttons == []  # no "Yes, cancel it" to tap
    assert "Klara og solen" not in answer.text


async def test_an_old_suggestion_of_a_one_card_chat_orders_nothing_for_the_next_card(
    bot: BotHarness,
) -> None:
    """Karen's /recommend, then Karen logs out and Mette logs in: Mette is the chat's only card,
    yet the old "Order" was made for Karen's and says her card is gone."""
    await bot.connect(CHAT, KAREN, language_code="en")
    [suggested] = await command(bot, CHAT, "/recommend")
    order = next(label for label in buttons(suggested) if label.startswith("📥 Order 1:"))
    await command(bot, CHAT, "/logout")
    await bot.connect(CHAT, METTE, language_code="en")
    mette_orders = len(bot.sandbox.patron_data(METTE).orders)
    answer = await tap_stale(bot, suggested, order)
    assert answer.text.startswith(GONE)
    assert answer.buttons == []  # no "Yes, order it"
    assert len(bot.sandbox.patron_data(METTE).orders) == mette_orders


async def test_an_old_search_result_of_a_one_card_chat_orders_nothing_for_the_next_card(
    bot: BotHarness,
) -> None:
    """Karen's /search and /where, then Karen logs out and Mette logs in: the results were
    shown to Karen's chat, so their "Order" says the card is gone, with no question for
    Mette. A search shown before any card, or to a card still here, orders as ever."""
    await bot.connect(CHAT, KAREN, language_code="en")
    [results] = await command(bot, CHAT, "/search hobbit")
    [where] = await command(bot, CHAT, f"/where {LITTLE_PRINCE}")
    await command(bot, CHAT, "/logout")
    await bot.connect(CHAT, METTE, language_code="en")
    for message, label in ((results, "📥 Order 1: The Hobbit"), (where, "📥 Order it")):
        answer = await tap_stale(bot, message, label)
        assert answer.text.startswith(GONE), (label, answer.text)
        assert answer.buttons == [], label
    [fresh] = await command(bot, CHAT, "/search hobbit")
    ask = await tap_stale(bot, fresh, "📥 Order 1: The Hobbit")
    assert "Do you want to order The Hobbit" in ask.text


async def test_old_order_buttons_of_a_one_card_chat_stop_at_the_first_tap(
    bot: BotHarness,
) -> None:
    """Karen's order question and branch picker, then Karen logs out and Mette logs in: Mette is
    the chat's only card, yet each of those buttons was made for Karen's card and says it is
    gone at once, and a branch name typed for Karen's picker orders nothing for Mette."""
    await bot.connect(CHAT, KAREN, language_code="en")
    [ask] = await command(bot, CHAT, f"/order {LITTLE_PRINCE}")
    [asked] = await command(bot, CHAT, f"/order {LITTLE_PRINCE}")
    picker = await bot.tap(CHAT, asked, "📍 Change pick-up branch")
    assert picker is not None and "Vesterbro Bibliotek" in buttons(picker)
    await command(bot, CHAT, "/logout")
    await bot.connect(CHAT, METTE, language_code="en")
    mette_orders = len(bot.sandbox.patron_data(METTE).orders)

    for message, label in (
        (ask, "📥 Yes, order it"),
        (ask, "📍 Change pick-up branch"),
        (picker, "Vesterbro Bibliotek"),
    ):
        answer = await tap_stale(bot, message, label)
        assert answer.text.startswith(GONE), (label, answer.text)
        assert answer.buttons == [], label  # no question, picker or "Yes" for Mette
    typed = await command(bot, CHAT, "Vesterbro")
    assert not any("Pick-up at" in message.text for message in typed)
    mette = await bot.store.cards.get(CHAT)
    assert mette is not None and mette.pickup_branch is None
    assert len(bot.sandbox.patron_data(METTE).orders) == mette_orders


async def test_an_old_stop_button_of_watches_stops_nothing_of_the_next_card(
    bot: BotHarness,
) -> None:
    """/watches' "Stop" names its card by identity too: once Karen's card is gone, her old
    button says so and leaves Mette's watch of the same title and branch alone."""
    watch = (LITTLE_PRINCE, "Vesterbro Bibliotek", "DK-710100", "Den lille prins")
    await bot.connect(CHAT, KAREN, language_code="en")
    await bot.store.watches.add(CHAT, 1, *watch)
    [listed] = await command(bot, CHAT, "/watches")
    [stop] = [label for label in buttons(listed) if "Den lille prins" in label]
    await command(bot, CHAT, "/logout")
    await bot.connect(CHAT, METTE, language_code="en")
    mette = await bot.store.cards.get(CHAT)
    assert mette is not None
    await bot.store.watches.add(CHAT, mette.number, *watch)

    answer = await tap_stale(bot, listed, stop)
    assert answer.text.startswith(GONE)
    [kept] = await bot.store.watches.of_chat(CHAT)
    assert kept.number == mette.number
