"""Several library cards in one chat: adding and refreshing cards with /login, the limit of
six, /cards (rename, log out), /logout's "which card", and /order's "which card"."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import text
from telegram import Chat, Message, User

from bot.telegram.handlers.cards import renamed_card
from bot.texts import t
from tests.fixtures.bot import BotHarness
from tests.fixtures.cards import karen_and_ole, labels, log_in
from tests.fixtures.chat import buttons, command, wait_answer
from tests.fixtures.patrons import KAREN, LITTLE_PRINCE, OLE

CHAT = 8101
ORDER_CALLS = "platform GET /v3/order"
REVOKE = "oauth DELETE /oauth/revoke"
# A card's library as /cards names it: `agencyName` of /v3/libraries (issue 25: not a branch).
KBH = "Københavns Biblioteker"


async def test_two_patrons_make_two_cards_and_a_login_again_refreshes_one(
    bot: BotHarness,
) -> None:
    first = await log_in(bot, CHAT, KAREN)
    # One card: exactly as before there were several.
    assert first.text == "✅ Connected to your library in Copenhagen! Try /loans to see your loans."
    prompt = await bot.send(CHAT, "/login")
    assert "log in as the holder of the card you want to add (this chat has 1 of 6)" in prompt.text
    assert any(button.url for row in prompt.buttons for button in row)

    second = await log_in(bot, CHAT, OLE)
    assert second.text.startswith(f"✅ Ole's card is connected ({KBH}).")
    assert "<b>Cards in this chat</b> (2 of 6)" in second.html
    assert f"1. 👤 Karen ({KBH})\n2. 👤 Ole ({KBH})" in second.text
    assert await labels(bot, CHAT) == [(1, "Karen"), (2, "Ole")]
    # Only the first name is kept, never the rest of it.
    card = await bot.store.cards.get(CHAT, 1)
    assert card is not None and "Jensen" not in repr(card)

    [old] = bot.sandbox.live_tokens(KAREN)
    again = await log_in(bot, CHAT, KAREN)
    assert again.text == "🔄 Karen's card is logged in again."
    assert await labels(bot, CHAT) == [(1, "Karen"), (2, "Ole")]
    assert bot.sandbox.was_revoked(old)
    assert len(bot.sandbox.live_tokens(KAREN)) == 1 and len(bot.sandbox.live_tokens(OLE)) == 1


async def test_the_seventh_card_is_refused_and_its_token_revoked(bot: BotHarness) -> None:
    patrons = [patron.user_id for patron in bot.sandbox.add_patrons(6)]
    await log_in(bot, CHAT, KAREN)
    for user_id in patrons[:4]:
        await log_in(bot, CHAT, user_id)
    # Two prompts while there is room; the chat is full by the time the second is used.
    sixth, seventh = await bot.login_url(CHAT), await bot.login_url(CHAT)
    added = await log_in(bot, CHAT, patrons[4], url=sixth)
    assert added.text.startswith("✅ Testlåner's card is connected")
    assert "(6 of 6)" in added.text
    refused = await log_in(bot, CHAT, patrons[5], url=seventh)
    assert refused.text == (
        "This chat already has 6 cards; /logout one to add another. I did not keep this login."
    )
    assert [card for card, _ in await labels(bot, CHAT)] == [1, 2, 3, 4, 5, 6]
    assert bot.sandbox.live_tokens(patrons[5]) == []
    # Full: /login says so and offers no link.
    full = await bot.send(CHAT, "/login")
    assert full.text.startswith("This chat already has 6 cards, the most it can hold.")
    assert full.buttons == []


async def test_cards_lists_and_renames_and_the_name_is_no_search(bot: BotHarness) -> None:
    await karen_and_ole(bot, CHAT)
    listed = await bot.send(CHAT, "/cards")
    assert listed.text.startswith(f"Cards in this chat (2 of 6)\n1. 👤 Karen ({KBH})")
    assert buttons(listed) == [
        "✏️ Rename Karen",
        "🚪 Log out Karen",
        "✏️ Rename Ole",
        "🚪 Log out Ole",
        "📚 Overview",
    ]
    overview = listed.buttons[-1][0]
    assert overview.web_app == f"{bot.info.public_url}/app/"
    assert all(len(b.callback_data.encode()) <= 64 for row in listed.buttons[:-1] for b in row)
    asked = await bot.tap(CHAT, listed, "✏️ Rename Ole")
    assert asked is not None and asked.text == (
        "✏️ Send the new name for card 2 (Ole), 1 to 32 characters."
    )
    # The stand-in's user answers without replying: the fresh prompt still takes it.
    renamed = await bot.send(CHAT, "  Bedste<far>  ")
    assert renamed.text == "✅ Card 2 is now called Bedste<far>."
    assert renamed.html == "✅ Card 2 is now called <b>Bedste&lt;far&gt;</b>."
    assert await labels(bot, CHAT) == [(1, "Karen"), (2, "Bedste<far>")]
    # The prompt is answered: the next text is a search offer again.
    offer = await bot.send(CHAT, "kongens fald")
    assert "kongens fald" in buttons(offer)[0]
    # Too long: asked again, nothing changed.
    listed = await bot.send(CHAT, "/cards")
    await bot.tap(CHAT, listed, "✏️ Rename Karen")
    again = await bot.send(CHAT, "x" * 33)
    assert again.text == (
        "A card's name is 1 to 32 characters of plain text.\n"
        "✏️ Send the new name for card 1 (Karen), 1 to 32 characters."
    )
    assert await labels(bot, CHAT) == [(1, "Karen"), (2, "Bedste<far>")]
    assert bot.sandbox.calls["platform GET /v3/search"] == 0
    # Another card's name is refused: the buttons would read the same.
    listed = await bot.send(CHAT, "/cards")
    await bot.tap(CHAT, listed, "✏️ Rename Karen")
    taken = await bot.send(CHAT, "bedste<FAR>")
    assert taken.text.startswith("Another card here is already called bedste<FAR>.\n✏️ Send")
    assert await labels(bot, CHAT) == [(1, "Karen"), (2, "Bedste<far>")]
    # A command in between ends the prompt: the text after it is a search offer, no name.
    listed = await bot.send(CHAT, "/cards")
    await bot.tap(CHAT, listed, "✏️ Rename Karen")
    await bot.send(CHAT, "/help")
    offer = await bot.send(CHAT, "dune")
    assert "dune" in buttons(offer)[0]
    assert await labels(bot, CHAT) == [(1, "Karen"), (2, "Bedste<far>")]


def test_a_reply_to_the_rename_prompt_names_its_card_in_any_process() -> None:
    now = datetime.now(UTC)
    chat = Chat(CHAT, "private")
    patron = User(1, "Karen", is_bot=False)
    bot_user = User(2, "bot", is_bot=True)

    def answer(prompt: str | None, sender: User = bot_user) -> Message:
        replied = Message(1, now, chat, from_user=sender, text=prompt)
        return Message(2, now, chat, from_user=patron, text="Mormor", reply_to_message=replied)

    for lang, name in (("en", "Ole"), ("da", "Kort 3")):
        prompt = t(lang, "cards.rename_ask", number=3, name=name)
        assert renamed_card(answer(prompt)) == 3
        assert renamed_card(answer(f"{t(lang, 'cards.rename_bad')}\n{prompt}")) == 3
        assert renamed_card(answer(prompt, patron)) is None
    assert renamed_card(answer("Something else")) is None
    assert renamed_card(answer(None)) is None


async def test_logout_asks_which_card_then_all(bot: BotHarness) -> None:
    await karen_and_ole(bot, CHAT)
    [karen_token] = bot.sandbox.live_tokens(KAREN)
    which = await bot.send(CHAT, "/logout")
    assert which.text == "Which card do you want to log out of?"
    # The specific choices first, "all cards" last.
    assert buttons(which) == ["🚪 Karen", "🚪 Ole", "🚪 All cards"]
    # Tapped twice before the answer: one logout, one revocation.
    data = which.button("🚪 Karen").callback_data
    taps = [await bot.telegram.tap(CHAT, which.message_id, data) for _ in range(2)]
    answers = [await wait_answer(bot, tap) for tap in taps]
    done = await bot.telegram.wait_for(CHAT, lambda m: m.text.startswith("👋 Karen"))
    assert done.text.startswith(
        "👋 Karen's card is logged out here; the library has revoked its access.\n"
        "Still connected here: Ole."
    )
    assert bot.sandbox.was_revoked(karen_token) and bot.sandbox.live_tokens(OLE)
    assert await labels(bot, CHAT) == [(2, "Ole")]
    assert bot.sandbox.calls[REVOKE] == 1
    assert sum("no longer" in (answer.get("text") or "") for answer in answers) == 1
    # Card 2 alone is still a connected chat.
    assert (await bot.send(CHAT, "/start")).text.startswith("👋 Welcome back")
    # One card left: /logout is as it was before several cards.
    [reply] = await command(bot, CHAT, "/logout")
    assert reply.text.startswith("👋 You are logged out here. I deleted your access")
    assert await bot.store.cards.of_chat(CHAT) == [] and bot.sandbox.live_tokens(OLE) == []

    await karen_and_ole(bot, CHAT)
    which = await bot.send(CHAT, "/logout")
    done = await bot.tap(CHAT, which, "🚪 All cards")
    assert done is not None
    assert "👋 Karen's card is logged out here" in done.text
    assert "👋 Ole's card is logged out here" in done.text
    assert await bot.store.cards.of_chat(CHAT) == []
    assert bot.sandbox.live_tokens(KAREN) == [] and bot.sandbox.live_tokens(OLE) == []
    [told] = await command(bot, CHAT, "/loans")
    assert told.text.startswith("🔑 You logged out.")


async def test_log_out_one_card_from_cards(bot: BotHarness) -> None:
    await karen_and_ole(bot, CHAT)
    listed = await bot.send(CHAT, "/cards")
    asked = await bot.tap(CHAT, listed, "🚪 Log out Ole")
    assert asked is not None and asked.text.startswith("🚪 Log out of Ole's card here?")
    assert buttons(asked) == ["🚪 Yes, log out", "No, keep it"]  # the confirming one first
    assert await labels(bot, CHAT) == [(1, "Karen"), (2, "Ole")]  # nothing yet
    done = await bot.tap(CHAT, asked, "🚪 Yes, log out")
    assert done is not None and done.text.startswith("👋 Ole's card is logged out here")
    assert await labels(bot, CHAT) == [(1, "Karen")]
    assert bot.sandbox.live_tokens(OLE) == [] and bot.sandbox.live_tokens(KAREN)


async def test_order_asks_which_card_and_uses_its_token_and_branch(bot: BotHarness) -> None:
    await karen_and_ole(bot, CHAT)
    which = await bot.send(CHAT, f"/order {LITTLE_PRINCE} 751011")
    assert which.text == "Which card do you want to order Den lille prins with?"
    assert buttons(which) == ["👤 Karen", "👤 Ole"]
    ask = await bot.tap(CHAT, which, "👤 Ole")
    assert ask is not None and "Pick-up at Viby Bibliotek." in ask.text
    # The branch is Ole's card's, not Karen's.
    ole, karen = await bot.store.cards.get(CHAT, 2), await bot.store.cards.get(CHAT, 1)
    assert ole is not None and ole.pickup_branch == "DK-751011"
    assert karen is not None and karen.pickup_branch is None
    karen_orders = len(bot.sandbox.patron_data(KAREN).orders)
    done = await bot.tap(CHAT, ask, "📥 Yes, order it")
    assert done is not None and "Den lille prins is ordered" in done.text
    assert bot.sandbox.calls[ORDER_CALLS] == 1
    assert bot.sandbox.patron_data(OLE).orders[-1]["pickUpAgency"] == "DK-751011"
    assert len(bot.sandbox.patron_data(KAREN).orders) == karen_orders
    # Karen's card still goes to her own library: its branch was not touched.
    which = await bot.send(CHAT, f"/order {LITTLE_PRINCE}")
    ask = await bot.tap(CHAT, which, "👤 Karen")
    assert ask is not None and "Pick-up at Københavns Hovedbibliotek." in ask.text


async def test_a_search_result_asks_which_card_to_order_with(bot: BotHarness) -> None:
    await karen_and_ole(bot, CHAT)
    [results] = await command(bot, CHAT, "/search karen blixen")
    which = await bot.tap(CHAT, results, "📥 Order 2: Babettes gæstebud")
    assert (
        which is not None
        and which.text == "Which card do you want to order Babettes gæstebud with?"
    )
    ask = await bot.tap(CHAT, which, "👤 Ole")
    # Whose order it is, at the top of the confirmation and of the answer.
    assert ask is not None and ask.text.startswith("👤 Ole\nDo you want to order Babettes gæstebud")
    done = await bot.tap(CHAT, ask, "📥 Yes, order it")
    assert done is not None and done.html.startswith("👤 <b>Ole</b>\n")
    assert bot.sandbox.calls[ORDER_CALLS] == 1
    assert bot.sandbox.patron_data(OLE).orders[-1]["title"] == "Babettes gæstebud"


async def test_one_card_orders_without_asking(bot: BotHarness) -> None:
    await log_in(bot, CHAT, OLE)
    ask = await bot.send(CHAT, f"/order {LITTLE_PRINCE}")
    assert ask.text.startswith("Do you want to order Den lille prins")


async def test_a_card_without_a_name_is_called_by_its_number(bot: BotHarness) -> None:
    await log_in(bot, CHAT, KAREN)
    bot.sandbox.faults.fail_next["/v3/user"] = [500]
    added = await log_in(bot, CHAT, OLE)
    assert added.text.startswith("✅ Card 2 is connected (Copenhagen).")
    assert await labels(bot, CHAT) == [(1, "Karen"), (2, None)]
    # Logging in again with it names it.
    again = await log_in(bot, CHAT, OLE)
    assert again.text == "🔄 Ole's card is logged in again."
    assert await labels(bot, CHAT) == [(1, "Karen"), (2, "Ole")]


async def test_a_card_logged_out_meanwhile_orders_nothing(bot: BotHarness) -> None:
    await karen_and_ole(bot, CHAT)
    which = await bot.send(CHAT, f"/order {LITTLE_PRINCE}")
    ask = await bot.tap(CHAT, which, "👤 Ole")
    assert ask is not None
    logout = await bot.send(CHAT, "/logout")
    await bot.tap(CHAT, logout, "🚪 Ole")
    before = len(bot.telegram.sent(CHAT))
    await bot.telegram.tap(CHAT, ask.message_id, ask.button("📥 Yes, order it").callback_data)
    gone = await bot.next_message(CHAT, before)
    assert gone.text.startswith("That card is no longer in this chat.")
    assert bot.sandbox.calls[ORDER_CALLS] == 0


async def test_cards_in_danish_and_before_any_login(bot: BotHarness) -> None:
    bot.add_chat(CHAT + 1, language_code="da")
    prompt = await bot.send(CHAT + 1, "/cards")
    assert any(button.url for row in prompt.buttons for button in row)  # the login
    bot.add_chat(CHAT, language_code="da")
    await bot.connect(CHAT, KAREN)
    await bot.connect(CHAT, OLE)
    assert bot.telegram.sent(CHAT)[-1].text.startswith(f"✅ Oles kort er forbundet ({KBH}).")
    listed = await bot.send(CHAT, "/cards")
    assert listed.text.startswith(f"Kort i denne chat (2 af 6)\n1. 👤 Karen ({KBH})")
    await bot.tap(CHAT, listed, "✏️ Omdøb Ole")
    assert (await bot.send(CHAT, "Lars")).text == "✅ Kort 2 hedder nu Lars."
    which = await bot.send(CHAT, "/logout")
    assert buttons(which) == ["🚪 Karen", "🚪 Lars", "🚪 Alle kort"]
    done = await bot.tap(CHAT, which, "🚪 Lars")
    assert done is not None and done.text.startswith("👋 Lars' kort er logget ud her")


async def test_forget_revokes_every_card(bot: BotHarness) -> None:
    await karen_and_ole(bot, CHAT)
    asked = await bot.send(CHAT, "/forget")
    done = await bot.tap(CHAT, asked, "🗑 Yes, delete everything")
    assert done is not None and done.text.startswith("🗑 Everything is deleted: your login (the")
    assert bot.sandbox.live_tokens(KAREN) == [] and bot.sandbox.live_tokens(OLE) == []
    assert bot.sandbox.calls[REVOKE] == 2
    assert await bot.store.cards.of_chat(CHAT) == []


async def test_a_card_back_after_a_logout_is_named_at_its_library_as_cards_names_it(
    bot: BotHarness,
) -> None:
    await karen_and_ole(bot, CHAT)
    logout = await bot.send(CHAT, "/logout")
    await bot.tap(CHAT, logout, "🚪 All cards")
    back = await log_in(bot, CHAT, OLE)
    assert back.text.startswith(f"✅ Ole's card is connected ({KBH}).")
    listed = await bot.send(CHAT, "/cards")
    assert f"1. 👤 Ole ({KBH})" in listed.text


async def test_an_order_names_its_card_while_another_card_of_the_chat_has_lapsed(
    bot: BotHarness,
) -> None:
    await karen_and_ole(bot, CHAT)
    ole = await bot.store.cards.get(CHAT, 2)
    assert ole is not None
    bot.sandbox.expire_token(ole.token)
    await bot.send(CHAT, "/loans")  # Ole's card lapses, and stays in the chat
    ask = await bot.send(CHAT, f"/order {LITTLE_PRINCE}")
    assert ask.text.startswith("👤 Karen\nDo you want to order Den lille prins")


async def test_a_typed_branch_name_is_sealed_in_the_card_buttons(bot: BotHarness) -> None:
    """What follows the material id is whatever the patron typed (a CPR number by mistake):
    the "which card?" buttons keep it sealed, as a search's words, and the tap still uses it."""
    await karen_and_ole(bot, CHAT)
    which = await bot.send(CHAT, f"/order {LITTLE_PRINCE} Nørrebro Bibliotek")
    assert buttons(which) == ["👤 Karen", "👤 Ole"]
    payloads = await bot.store.database.run(
        lambda conn: [row[0] for row in conn.execute(text("SELECT payload FROM callback_ref"))]
    )
    assert payloads and not [p for p in payloads if "rrebro" in str(p)]
    ask = await bot.tap(CHAT, which, "👤 Ole")
    assert ask is not None and "Pick-up at Nørrebro Bibliotek." in ask.text
