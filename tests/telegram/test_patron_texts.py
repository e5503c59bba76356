"""What a patron reads (issue 25): /language with its argument, logging out, lost answers, a
login bringing another person, free text, English and Danish wording, names escaped once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.texts import t
from tests.fixtures.bot import BotHarness
from tests.fixtures.cards import log_in
from tests.fixtures.chat import answers, buttons, command
from tests.fixtures.groups import BOB, GROUP, group_with_karen
from tests.fixtures.jobs import run_expiry_job, set_expiry, sweeper
from tests.fixtures.patrons import JONAS, KAREN, LITTLE_PRINCE, OLE

CHAT = 7501


async def test_language_takes_its_argument(bot: BotHarness) -> None:
    bot.add_chat(CHAT)
    done = await bot.send(CHAT, "/language en")
    assert not done.buttons and "now English" in done.text
    assert (await bot.store.chats.chat(CHAT)).language == "en"
    done = await bot.send(CHAT, "/language da")
    assert (await bot.store.chats.chat(CHAT)).language == "da"
    done = await bot.send(CHAT, "/language uk")
    assert (await bot.store.chats.chat(CHAT)).language == "uk"
    # A code the bot does not speak: the picker, and nothing changes.
    picker = await bot.send(CHAT, "/language xx")
    labels = [button.text for row in picker.buttons for button in row]
    assert "English" in labels and "Dansk" in labels
    assert (await bot.store.chats.chat(CHAT)).language == "uk"


def over_escaped(text: str) -> bool:
    return "&amp;amp;" in text or "&amp;lt;" in text


async def test_a_card_name_is_escaped_exactly_once(bot: BotHarness) -> None:
    await bot.connect(CHAT, KAREN, language_code="en")
    await bot.connect(CHAT, JONAS, language_code="en")
    listed = await bot.send(CHAT, "/cards")
    asked = await bot.tap(CHAT, listed, "✏️ Rename Karen")
    assert asked is not None
    renamed = await bot.send(CHAT, "Tom & Jerry")
    assert renamed.text == "✅ Card 1 is now called Tom & Jerry."
    assert renamed.html == "✅ Card 1 is now called <b>Tom &amp; Jerry</b>."
    # /cards: the list and its buttons.
    listed = await bot.send(CHAT, "/cards")
    assert "Tom & Jerry" in listed.text and not over_escaped(listed.html)
    assert "✏️ Rename Tom & Jerry" in buttons(listed)
    assert "🚪 Log out Tom & Jerry" in buttons(listed)
    # /loans heads each card's part with its name.
    loans = await command(bot, CHAT, "/loans", until=lambda sent: len(sent) >= 1)
    shown = "\n".join(message.html for message in loans)
    assert "👤 <b>Tom &amp; Jerry</b>" in shown and not over_escaped(shown)
    # /order: which card, then the confirmation headed by the card's name.
    which = await bot.send(CHAT, f"/order {LITTLE_PRINCE}")
    assert "👤 Tom & Jerry" in buttons(which)
    ask = await bot.tap(CHAT, which, "👤 Tom & Jerry")
    assert ask is not None and ask.text.startswith("👤 Tom & Jerry\n")
    assert ask.html.startswith("👤 <b>Tom &amp; Jerry</b>\n")
    # The family digest: the card's heading and its "renew all" button.
    before = len(bot.telegram.sent(CHAT))
    async with sweeper(bot) as sweep:
        await sweep()
    digest = await bot.next_message(CHAT, before)
    assert "👤 <b>Tom &amp; Jerry</b>" in digest.html and not over_escaped(digest.html)
    assert "Renew these: Tom & Jerry" in buttons(digest)
    assert not any("&amp;" in label for label in buttons(digest))


async def test_english_reads_english_material_types_and_place_names(bot: BotHarness) -> None:
    bot.add_chat(CHAT, language_code="en")
    redirect = await bot.log_in_at_library(await bot.login_url(CHAT), KAREN)
    page = await bot.follow(redirect)
    code = page.text.split("?start=", 1)[1].split('"', 1)[0]
    connected = await bot.send(CHAT, f"/start {code}")
    assert "in Copenhagen!" in connected.text and "København" not in connected.text
    [results] = await command(bot, CHAT, "/search karen blixen")
    assert "Karen Blixen · 1937 · Book" in results.text and "· Bog" not in results.text


async def test_danish_reads_as_a_native_speaker_writes_it(bot: BotHarness) -> None:
    await bot.connect(CHAT, KAREN)
    notices = "\n".join(m.text for m in await command(bot, CHAT, "/reminders"))
    assert "du får besked hver dag fra afleveringsdatoen" in notices
    assert "husket" not in notices
    [usage] = await command(bot, CHAT, "/away")
    assert usage.text.startswith("Skriv, hvor mange dage du er væk")
    owned = t("da", "borrower.order.owned", branch="Viby Bibliotek", title="Sult", pid="1")
    assert "så den kan ikke bestilles gennem mig" in owned  # "så" takes main-clause order


async def test_log_out_in_cards_asks_first_and_says_plainly_what_happens(
    bot: BotHarness,
) -> None:
    await bot.connect(CHAT, KAREN, language_code="en")
    await bot.connect(CHAT, JONAS, language_code="en")
    listed = await bot.send(CHAT, "/cards")
    asked = await bot.tap(CHAT, listed, "🚪 Log out Jonas")
    assert asked is not None and asked.text.startswith("🚪 Log out of Jonas's card here?")
    assert buttons(asked) == ["🚪 Yes, log out", "No, keep it"]
    assert len(await bot.store.cards.of_chat(CHAT)) == 2  # one tap logs nobody out
    kept = await bot.tap(CHAT, asked, "No, keep it")
    assert kept is not None
    assert kept.text == "Nothing changed: Jonas's card is still logged in here."
    assert len(await bot.store.cards.of_chat(CHAT)) == 2
    asked = await bot.tap(CHAT, listed, "🚪 Log out Jonas")
    assert asked is not None
    done = await bot.tap(CHAT, asked, "🚪 Yes, log out")
    assert done is not None and done.text.startswith("👋 Jonas's card is logged out here")
    assert "the next /login here asks for a card number and PIN again" in done.text
    assert " you " not in done.text.split("\n\n", 1)[1]  # the browser may be someone else's
    assert [card.label for card in await bot.store.cards.of_chat(CHAT)] == ["Karen"]


async def test_a_login_again_that_brings_another_person_says_whose_card(bot: BotHarness) -> None:
    await log_in(bot, CHAT, KAREN)
    await set_expiry(bot, CHAT, datetime.now(UTC) + timedelta(days=2, hours=1))
    before = len(bot.telegram.sent(CHAT))
    await run_expiry_job(bot)
    warning = await bot.next_message(CHAT, before)
    assert warning.text.startswith("⏳ Your library login expires in 3 days")
    # The browser remembered Jonas: the login meant for Karen's card brings his.
    told = await log_in(bot, CHAT, JONAS)
    assert told.text.startswith(
        "👤 This login was Jonas's, so Jonas's card is connected here now. Karen's card is not "
        "logged in again: its login stops working on "
    )
    assert "If the login page did not ask for a card number, the browser remembered" in told.text
    assert next(b.url for row in told.buttons for b in row if b.url).startswith(
        f"{bot.info.public_url}/oauth/logout?"
    )
    assert [card.label for card in await bot.store.cards.of_chat(CHAT)] == ["Karen", "Jonas"]
    # Karen's own login again is a refresh, as before.
    again = await log_in(bot, CHAT, KAREN)
    assert again.text == "🔄 Karen's card is logged in again."


async def test_a_login_for_a_lapsed_card_that_brings_another_person_names_both(
    bot: BotHarness,
) -> None:
    chat = CHAT + 1
    await log_in(bot, chat, KAREN)
    card = await bot.store.cards.get(chat)
    assert card is not None
    bot.sandbox.expire_token(card.token)
    await command(bot, chat, "/loans")  # the token refused: the card lapses, kept by its name
    told = await log_in(bot, chat, JONAS)
    assert told.text.startswith(
        "👤 This login was Jonas's, so Jonas's card is connected here now. Karen's card is still "
        "logged out. If the login page did not ask for a card number, the browser remembered "
        "Jonas's library login"
    )
    kept = await bot.store.cards.get(chat, 1, lapsed=True)
    assert kept is not None and kept.is_lapsed and kept.label == "Karen"


async def test_a_login_of_another_person_while_two_cards_wait_names_each_once(
    bot: BotHarness,
) -> None:
    """Two lapsed cards, and a login that brings a third person: one text names both cards
    once (the login state names no card, so which button was used is not known)."""
    chat = CHAT + 2
    await log_in(bot, chat, KAREN)
    await log_in(bot, chat, JONAS)
    for card in await bot.store.cards.of_chat(chat):
        bot.sandbox.expire_token(card.token)
    await command(bot, chat, "/loans")
    told = await log_in(bot, chat, OLE)
    assert told.text.startswith(
        "👤 This login was Ole's, so Ole's card is connected here now. Not logged in again: "
        "Karen's card and Jonas's card. If the login page did not ask for a card number"
    )
    assert told.text.count("This login was") == 1


async def test_free_text_leads_to_commands_and_never_talks_in_a_group(bot: BotHarness) -> None:
    await bot.connect(CHAT, KAREN)
    # Fixed phrases point to their command, in Danish, English and Ukrainian.
    for typed, command_name in (
        ("forny mine lån", "/renew"),
        ("Forny mine lån!", "/renew"),
        ("/lån", "/loans"),
        ("renew my loans", "/renew"),
        ("мої видачі", "/loans"),
        ("мої позики", "/loans"),
    ):
        answer = await bot.send(CHAT, typed)
        assert answer.text == f"➡️ Til det skal du sende {command_name} (tryk på den).", typed
        assert not answer.buttons
    # Anything else is still offered as a search.
    offer = await bot.send(CHAT, "forny mine lån af Karen Blixen")
    assert buttons(offer) == ["🔎 Søg efter »forny mine lån af Karen Blixen«"]
    # An unknown command suggests the nearest one.
    near = await bot.send(CHAT, "/lons")
    assert near.text.startswith("Den kommando kender jeg ikke. Mente du /loans?")
    far = await bot.send(CHAT, "/xyzzy")
    assert "Mente du" not in far.text and "/help" in far.text
    # In a group, plain text gets no answer (a command still does).
    await group_with_karen(bot)

    async def post() -> None:
        await bot.telegram.send_text(GROUP, "hej alle sammen, ses vi torsdag?", user_id=BOB)
        await bot.telegram.send_text(GROUP, "/help", user_id=BOB)

    [help_reply] = await answers(bot, GROUP, post)
    assert "/loans" in help_reply.text


async def test_a_branch_typed_while_choosing_one_is_that_branch(bot: BotHarness) -> None:
    await bot.connect(CHAT, KAREN, language_code="en")
    ask = await bot.send(CHAT, f"/order {LITTLE_PRINCE}")
    picker = await bot.tap(CHAT, ask, "📍 Change pick-up branch")
    assert picker is not None and picker.text.startswith("📍 Where do you want to pick up")
    names = [label.removeprefix("✓ ") for label in buttons(picker)]
    wanted = next(name for name in names if not name.startswith("Københavns Hoved"))
    # Typed, not tapped: the order goes on at that branch, and it is no search.
    confirm = await bot.send(CHAT, wanted)
    assert f"Pick-up at {wanted}." in confirm.text, confirm.text
    assert "📥 Yes, order it" in buttons(confirm)
    # Once chosen, the next text is free text again.
    offer = await bot.send(CHAT, wanted)
    assert buttons(offer) == [f"🔎 Search for “{wanted}”"]


async def test_a_login_after_the_card_was_gone_names_whose_card_came(bot: BotHarness) -> None:
    await log_in(bot, CHAT, KAREN)
    await command(bot, CHAT, "/logout")
    # Whoever the browser's library login was: the answer says whose card this is now.
    told = await log_in(bot, CHAT, JONAS)
    assert told.text == "✅ Jonas's card is connected (Københavns Biblioteker)."
