"""/order: the id's form, the confirmation, exactly one order, and the refusals in words."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.fixtures.bot import BotFactory, BotHarness
from tests.fixtures.cards import card_of, karen_and_ole, two_cards
from tests.fixtures.chat import buttons, command, wait_answer
from tests.fixtures.patrons import JONAS, KAREN, LITTLE_PRINCE, OLE

ORDER_CALLS = "platform GET /v3/order"
KVINDEN_I_BURET = "870970-basis:27015794"  # on the shelf at DK-710100, orderable elsewhere
NET_AUDIOBOOK = "870970-basis:51371213"  # net only: owned_wrong_mediumType everywhere


async def confirmation(bot: BotHarness, chat_id: int, text: str) -> Any:
    [reply] = await command(bot, chat_id, text)
    return reply


async def told_already(
    bot: BotHarness, chat_id: int, answers: list[dict[str, Any]], needle: str, *, after: int
) -> None:
    """A losing tap is told it was tried or ordered "already": in its answer, or in a message
    if it lost a race."""
    if any(needle in (answer.get("text") or "") for answer in answers):
        return
    await bot.telegram.wait_for(chat_id, needle, after=after, timeout=3)


async def test_order_with_the_patrons_own_library(bot: BotHarness) -> None:
    await bot.connect(30, KAREN)
    ask = await confirmation(bot, 30, f"/order {LITTLE_PRINCE}")
    assert "Vil du bestille Den lille prins af Antoine de Saint-Exupéry?" in ask.text
    # No branch given or saved: the patron's agency from /v3/user, by its name.
    assert "Afhentes på Københavns Hovedbibliotek." in ask.text
    # /v3/availability for the card: when it would be ready, told before "Yes".
    assert "📦 Forventes klar til afhentning omkring" in ask.text
    assert buttons(ask) == ["📥 Ja, bestil", "Nej", "📍 Skift afhentningssted", "🗺 Hvor står den?"]
    done = await bot.tap(30, ask, "📥 Ja, bestil")
    assert done is not None
    orders = bot.sandbox.patron_data(KAREN).orders
    placed = orders[-1]
    assert placed["title"] == "Den lille prins"
    assert placed["pickUpAgency"] == "DK-710100"
    # The order's number is the order system's `orsId`; its hold has an NCIP id of its own.
    assert "Bestillingsnummer: " in done.text
    assert placed["orderId"] not in done.text
    assert "Den lille prins er bestilt" in done.text
    assert done.buttons == []
    assert bot.sandbox.calls[ORDER_CALLS] == 1
    # Watched until it shows up in /v3/user (the "orders" notice): its pid and when, no more.
    seen = await bot.store.notices.seen(30)
    [(item, placed_at)] = [(key, value) for key, value in seen.items() if key.startswith("order:")]
    assert item == f"order:{LITTLE_PRINCE}" and placed_at is not None and len(placed_at) == 12
    # The title is kept as ordered by this card: its record number, no more.
    assert seen["placed:22677608"] == placed_at
    assert (await card_of(bot.store, 30)).order_check is not None


async def test_a_given_branch_is_normalised_saved_and_reused(bot: BotHarness) -> None:
    await bot.connect(31, JONAS, language_code="en")
    ask = await confirmation(bot, 31, f"/order {LITTLE_PRINCE} 751011")
    assert "Pick-up at Viby Bibliotek." in ask.text
    assert (await card_of(bot.store, 31)).pickup_branch == "DK-751011"
    ask = await confirmation(bot, 31, "/order 870970-basis:06442885")
    assert "Do you want to order The Hobbit by J.R.R. Tolkien?" in ask.text
    assert "Pick-up at Viby Bibliotek." in ask.text
    done = await bot.tap(31, ask, "📥 Yes, order it")
    assert done is not None and "The Hobbit is ordered for pick-up at Viby Bibliotek" in done.text
    assert bot.sandbox.patron_data(JONAS).orders[-1]["pickUpAgency"] == "DK-751011"


async def test_saying_no_orders_nothing(bot: BotHarness) -> None:
    await bot.connect(32, KAREN, language_code="en")
    ask = await confirmation(bot, 32, f"/order {LITTLE_PRINCE}")
    answer = await bot.tap(32, ask, "No")
    assert answer is not None and answer.text == "👍 Nothing ordered."
    assert bot.sandbox.calls[ORDER_CALLS] == 0


async def test_a_double_tap_places_one_order(bot: BotHarness) -> None:
    await bot.connect(33, KAREN)
    ask = await confirmation(bot, 33, f"/order {LITTLE_PRINCE}")
    data = ask.button("Ja, bestil").callback_data
    first = await bot.telegram.tap(33, ask.message_id, data)
    second = await bot.telegram.tap(33, ask.message_id, data)
    await bot.telegram.wait_for(33, "er bestilt")
    answers = [await wait_answer(bot, first), await wait_answer(bot, second)]
    await told_already(bot, 33, answers, "allerede", after=ask.message_id)
    assert bot.sandbox.calls[ORDER_CALLS] == 1
    assert [o["title"] for o in bot.sandbox.patron_data(KAREN).orders].count("Den lille prins") == 1


async def test_racing_updates_place_one_order(bot: BotHarness) -> None:
    await bot.connect(34, KAREN, language_code="en")
    ask = await confirmation(bot, 34, f"/order {LITTLE_PRINCE}")
    data = ask.button("Yes, order it").callback_data
    # Slow the platform a little so both updates are in flight at once.
    bot.sandbox.faults.latency["platform"] = 0.2
    queries = await asyncio.gather(*(bot.telegram.tap(34, ask.message_id, data) for _ in range(3)))
    answers = [await wait_answer(bot, query) for query in queries]
    await bot.telegram.wait_for(34, "is ordered")
    await told_already(bot, 34, answers, "already", after=ask.message_id)
    assert bot.sandbox.calls[ORDER_CALLS] == 1


async def test_two_confirmations_of_one_title_place_one_order(bot: BotHarness) -> None:
    """An old confirmation and a new one of the same title, both tapped: one order."""
    await bot.connect(37, OLE, language_code="en")
    old = await confirmation(bot, 37, f"/order {LITTLE_PRINCE}")
    new = await confirmation(bot, 37, f"/order {LITTLE_PRINCE} vesterbro")
    done = await bot.tap(37, new, "📥 Yes, order it")
    assert done is not None and "is ordered" in done.text
    again = await bot.tap(37, old, "📥 Yes, order it")
    assert again is not None
    assert "Den lille prins has already been ordered on this card through the bot" in again.text
    assert bot.sandbox.calls[ORDER_CALLS] == 1
    assert [o["title"] for o in bot.sandbox.patron_data(OLE).orders] == ["Den lille prins"]
    # A fresh /order says so at once, and offers no "Yes".
    [fresh] = await command(bot, 37, f"/order {LITTLE_PRINCE}")
    assert fresh.text.splitlines()[1:] == ["📥 So it is not ordered again."]
    assert fresh.text.startswith(
        "ℹ️ This card already has Den lille prins on hold, for pick-up at Vesterbro"
    )
    assert fresh.text.count("Den lille prins") == 1  # the title is told once
    assert fresh.buttons == []


async def test_a_refused_order_can_be_tried_again(bot: BotHarness) -> None:
    await bot.connect(38, OLE, language_code="en")
    bot.sandbox.faults.refuse_orders.append("ors_error")
    ask = await confirmation(bot, 38, f"/order {LITTLE_PRINCE}")
    refused = await bot.tap(38, ask, "📥 Yes, order it")
    assert refused is not None and "is ordered" not in refused.text
    ask = await confirmation(bot, 38, f"/order {LITTLE_PRINCE}")
    assert "Yes, order it" in buttons(ask)[0]
    done = await bot.tap(38, ask, "📥 Yes, order it")
    assert done is not None and "Den lille prins is ordered" in done.text
    assert bot.sandbox.calls[ORDER_CALLS] == 2


async def test_an_order_of_a_title_on_the_card_says_so_first(bot: BotHarness) -> None:
    await bot.connect(39, KAREN, language_code="en")
    on_loan = await confirmation(bot, 39, "/order 870970-basis:29318871")
    assert on_loan.text.startswith("ℹ️ This card already has Rødt & sort <2. udgave> on loan, due ")
    assert "Do you want to order Rødt & sort <2. udgave>" in on_loan.text
    ready = await confirmation(bot, 39, "/order 870970-basis:21464391")
    assert ready.text.startswith(
        "ℹ️ Frøken Smillas fornemmelse for sne is already waiting for this card at "
        "Københavns Hovedbibliotek, ready for pick-up."
    )
    waiting = await confirmation(bot, 39, "/order 870970-basis:24203999")
    assert waiting.text.startswith(
        "ℹ️ This card already has Hundrede års ensomhed on hold, for pick-up at "
        "Københavns Hovedbibliotek."
    )
    assert buttons(waiting)[0] == "📥 Yes, order it"
    assert bot.sandbox.calls[ORDER_CALLS] == 0


async def test_the_id_and_branch_are_checked(bot: BotHarness) -> None:
    await bot.connect(35, KAREN, language_code="en")
    [usage] = await command(bot, 35, "/order")
    assert "870970-basis:12345678" in usage.text
    [bad] = await command(bot, 35, "/order <b>x</b>")
    assert "“<b>x</b>” does not look like a material id" in bad.text
    [bad_branch] = await command(bot, 35, f"/order {LITTLE_PRINCE} 12345")
    assert "“12345” does not look like a library" in bad_branch.text
    [unknown] = await command(bot, 35, "/order 870970-basis:99999999")
    assert "I cannot find the material 870970-basis:99999999" in unknown.text
    assert bot.sandbox.calls[ORDER_CALLS] == 0
    assert (await card_of(bot.store, 35)).pickup_branch is None


COPENHAGEN_PICKUP = [
    "Islands Brygge Bibliotek",
    "Københavns Hovedbibliotek",
    "Nørrebro Bibliotek",
    "Vesterbro Bibliotek",
]


async def test_a_branch_by_name_is_found_and_saved(bot: BotHarness) -> None:
    await bot.connect(43, KAREN, language_code="en")
    # Case and accents ignored, a unique prefix is enough.
    ask = await confirmation(bot, 43, f"/order {LITTLE_PRINCE} norrebro")
    assert "Pick-up at Nørrebro Bibliotek." in ask.text
    assert (await card_of(bot.store, 43)).pickup_branch == "DK-710117"
    ask = await confirmation(bot, 43, f"/order {LITTLE_PRINCE} islands brygge")
    assert "Pick-up at Islands Brygge Bibliotek." in ask.text
    ask = await confirmation(bot, 43, f"/order {LITTLE_PRINCE} Vesterbro")
    assert "Pick-up at Vesterbro Bibliotek." in ask.text
    done = await bot.tap(43, ask, "📥 Yes, order it")
    assert done is not None and "ordered for pick-up at Vesterbro Bibliotek" in done.text
    assert bot.sandbox.patron_data(KAREN).orders[-1]["pickUpAgency"] == "DK-710104"
    # Saved: the next order goes there without asking.
    ask = await confirmation(bot, 43, "/order 870970-basis:06442885")
    assert "Pick-up at Vesterbro Bibliotek." in ask.text


async def test_an_unknown_or_unclear_name_offers_the_branches(bot: BotHarness) -> None:
    await bot.connect(44, KAREN, language_code="en")
    [picker] = await command(bot, 44, f"/order {LITTLE_PRINCE} Aarhus")
    assert picker.text.startswith("Your library has no pick-up branch called “Aarhus”.")
    assert "Where do you want to pick up Den lille prins?" in picker.text
    assert buttons(picker) == COPENHAGEN_PICKUP
    [several] = await command(bot, 44, f"/order {LITTLE_PRINCE} bibliotek")
    assert several.text.startswith("“bibliotek” fits several branches.")
    assert buttons(several) == [
        "Islands Brygge Bibliotek",
        "Nørrebro Bibliotek",
        "Vesterbro Bibliotek",
    ]
    assert (await card_of(bot.store, 44)).pickup_branch is None
    # Picking one saves it and asks about the order in the same message.
    ask = await bot.tap(44, several, "Islands Brygge Bibliotek")
    assert ask is not None and ask.message_id == several.message_id
    assert "Pick-up at Islands Brygge Bibliotek." in ask.text
    assert (await card_of(bot.store, 44)).pickup_branch == "DK-710111"
    assert bot.sandbox.calls[ORDER_CALLS] == 0


async def test_change_the_pick_up_branch_with_buttons(bot: BotHarness) -> None:
    await bot.connect(45, KAREN, language_code="en")
    ask = await confirmation(bot, 45, f"/order {LITTLE_PRINCE}")
    assert "Pick-up at Københavns Hovedbibliotek." in ask.text
    picker = await bot.tap(45, ask, "📍 Change pick-up branch")
    assert picker is not None and picker.message_id == ask.message_id
    assert picker.text == "📍 Where do you want to pick up Den lille prins?"
    # Only the branches of the patron's library that take pick-ups, by name.
    assert buttons(picker) == COPENHAGEN_PICKUP
    assert all(len(b.callback_data.encode()) <= 64 for row in picker.buttons for b in row)
    again = await bot.tap(45, picker, "Vesterbro Bibliotek")
    assert again is not None and "Pick-up at Vesterbro Bibliotek." in again.text
    done = await bot.tap(45, again, "📥 Yes, order it")
    assert done is not None and "ordered for pick-up at Vesterbro Bibliotek" in done.text
    assert bot.sandbox.patron_data(KAREN).orders[-1]["pickUpAgency"] == "DK-710104"
    assert bot.sandbox.calls[ORDER_CALLS] == 1
    # The saved branch is marked in the picker next time.
    ask = await confirmation(bot, 45, "/order 870970-basis:06442885")
    picker = await bot.tap(45, ask, "📍 Change pick-up branch")
    assert picker is not None and "✓ Vesterbro Bibliotek" in buttons(picker)


async def test_a_branch_that_takes_no_pick_ups_is_not_offered(bot: BotHarness) -> None:
    await bot.connect(46, KAREN, language_code="en")
    bot.sandbox.no_pickup.add("DK-710111")
    [picker] = await command(bot, 46, f"/order {LITTLE_PRINCE} islands")
    assert "no pick-up branch called “islands”" in picker.text
    assert "Islands Brygge Bibliotek" not in buttons(picker)


async def test_owned_own_catalogue_means_reserve_it_at_that_library(bot: BotHarness) -> None:
    """/v3/availability announces it for the card's own library: told before any "Yes", with
    where it stands on the shelf there; a branch of another library can take the order."""
    await bot.connect(36, KAREN, language_code="en")
    for branch in ("DK-710100", "DK-710104"):
        [refused] = await command(bot, 36, f"/order {KVINDEN_I_BURET} {branch}")
        assert refused.buttons == []
        # Not "you already have it": the pick-up library has it on its own shelves.
        assert refused.text.startswith(
            "Københavns Biblioteker has Kvinden i buret on its own shelves, so it cannot be "
            "ordered through me. Reserve it in that library's own catalogue, or choose another "
            "pick-up branch"
        )
        assert "Where it stands now:" in refused.text and ": on the shelf · " in refused.text
        assert "The library's catalogue: http" in refused.text
        assert "already" not in refused.text
    assert bot.sandbox.calls[ORDER_CALLS] == 0
    # At a branch of another library the same material is orderable.
    ask = await confirmation(bot, 36, f"/order {KVINDEN_I_BURET} DK-751000")
    done = await bot.tap(36, ask, "📥 Yes, order it")
    assert done is not None and "Kvinden i buret is ordered for pick-up at" in done.text


async def test_a_net_only_material_is_refused_before_anything_is_asked(bot: BotHarness) -> None:
    """The work's type says "(net)": the order system would refuse it for pick-up everywhere
    (`owned_wrong_mediumType`), so no "Yes" (nor "which card?") is offered to be refused after."""
    await bot.connect(37, KAREN)
    [refused] = await command(bot, 37, f"/order {NET_AUDIOBOOK}")
    assert refused.buttons == []
    assert "er en type materiale, der ikke kan bestilles til afhentning" in refused.text
    # The type beside the title: a printed Kvinden i buret can be ordered.
    assert refused.text.startswith("Kvinden i buret · Lydbog (net) er en type materiale")
    assert "Kvinden i buret" in refused.text and "/search" in refused.text
    await karen_and_ole(bot, 137)
    [refused] = await command(bot, 137, f"/order {NET_AUDIOBOOK}")
    assert refused.buttons == [] and "cannot be ordered for pick-up" in refused.text
    assert bot.sandbox.calls[ORDER_CALLS] == 0
    # Nor does a search offer an "Order" under it: the book has one, the net audiobook none.
    [results] = await command(bot, 137, "/search Kvinden i buret")
    assert "2. Kvinden i buret\nJussi Adler-Olsen · 2013 · Audiobook (online)" in results.text
    assert buttons(results) == ["📥 Order 1: Kvinden i buret", "🗺 1"]


async def test_several_cards_are_asked_about_a_named_and_checked_material(
    bot: BotHarness,
) -> None:
    await karen_and_ole(bot, 138)
    [which] = await command(bot, 138, f"/order {LITTLE_PRINCE}")
    assert which.text == "Which card do you want to order Den lille prins with?"
    [missing] = await command(bot, 138, "/order 870970-basis:99999999")
    assert missing.text == "I cannot find the material 870970-basis:99999999."
    assert missing.buttons == []


async def test_order_system_down(bot: BotHarness) -> None:
    await bot.connect(38, KAREN, language_code="en")
    ask = await confirmation(bot, 38, f"/order {LITTLE_PRINCE}")
    bot.sandbox.faults.down.add("orders")
    refused = await bot.tap(38, ask, "📥 Yes, order it")
    assert refused is not None and "order system is down" in refused.text
    assert bot.sandbox.calls[ORDER_CALLS] == 1


async def test_unknown_branch_is_checked_before_confirming(bot: BotHarness) -> None:
    await bot.connect(39, OLE, language_code="en")
    ask = await confirmation(bot, 39, f"/order {LITTLE_PRINCE} DK-710104")
    assert "Pick-up at" in ask.text
    assert (await card_of(bot.store, 39)).pickup_branch == "DK-710104"
    [told] = await command(bot, 39, f"/order {LITTLE_PRINCE} DK-123456")
    # No "Yes" to tap: the branch is refused before the confirmation, and not saved.
    assert told.buttons == []
    assert told.text.startswith("I cannot find the pick-up branch DK-123456 at the libraries")
    assert (await card_of(bot.store, 39)).pickup_branch == "DK-710104"
    assert bot.sandbox.calls[ORDER_CALLS] == 0


async def test_an_unknown_branch_is_refused_before_asking_which_card(bot: BotHarness) -> None:
    """With several cards, a typed branch id no library knows is refused before "which card?":
    it depends on no card."""
    await two_cards(bot, 146)
    [told] = await command(bot, 146, f"/order {LITTLE_PRINCE} DK-123456")
    assert told.text.startswith("I cannot find the pick-up branch DK-123456 at the libraries")
    assert told.buttons == []
    [asked] = await command(bot, 146, f"/order {LITTLE_PRINCE} DK-710104")
    assert "Which card" in asked.text and len(asked.buttons) == 2


async def test_a_familys_unknown_order_names_its_card(bot: BotHarness) -> None:
    """In a family, the answer to an order whose outcome is unknown says whose card it was."""
    await two_cards(bot, 147)
    [which] = await command(bot, 147, f"/order {LITTLE_PRINCE}")
    ask = await bot.tap(147, which, "👤 Jonas")
    assert ask is not None
    bot.sandbox.faults.fail_next["/v3/order"] = [502]
    told = await bot.tap(147, ask, "📥 Yes, order it")
    assert told is not None
    assert told.text.startswith("👤 Jonas\n⚠️ The library did not answer, so I cannot tell")


async def test_order_not_placed_and_an_unknown_outcome(bot: BotHarness) -> None:
    await bot.connect(40, KAREN, language_code="en")
    ask = await confirmation(bot, 40, f"/order {LITTLE_PRINCE}")
    bot.sandbox.faults.fail_next["/v3/order"] = [500]
    refused = await bot.tap(40, ask, "📥 Yes, order it")
    assert refused is not None
    assert refused.text == (
        "The library could not order Den lille prins. Try again later, or ask your library."
    )
    # A gateway error says nothing about the order: the patron is told to check, not retry.
    ask = await confirmation(bot, 40, f"/order {LITTLE_PRINCE}")
    bot.sandbox.faults.fail_next["/v3/order"] = [502]
    told = await bot.tap(40, ask, "📥 Yes, order it")
    # One message: what to check and when, and no "try again" that would contradict it.
    assert told is not None and told.message_id == ask.message_id
    assert told.text == (
        "⚠️ The library did not answer, so I cannot tell whether Den lille prins was ordered. "
        "A new order can take a while to show up, so check /holds tomorrow, and order it again "
        "only if it is not there."
    )
    assert bot.sandbox.calls[ORDER_CALLS] == 2
    # It may be in: a new confirmation of it says why it is not ordered again, and sends nothing.
    [held] = await command(bot, 40, f"/order {LITTLE_PRINCE}")
    assert held.text == (
        "📥 Den lille prins was ordered on this card through the bot earlier, but the library's "
        "answer was lost. So that it is not ordered twice, it is not ordered again until it has "
        "had a day to show up under /holds."
    )
    assert held.buttons == []
    assert bot.sandbox.calls[ORDER_CALLS] == 2


async def test_expired_token_on_confirming(bot: BotHarness) -> None:
    await bot.connect(41, KAREN)
    ask = await confirmation(bot, 41, f"/order {LITTLE_PRINCE}")
    card = await bot.store.cards.get(41)
    assert card is not None
    bot.sandbox.expire_token(card.token)
    await bot.tap(41, ask, "📥 Ja, bestil")
    await bot.telegram.wait_for(41, "Log ind igen", after=ask.message_id)
    assert await bot.store.cards.get(41) is None


async def test_order_within_the_time_limit_when_the_work_service_hangs(
    bot_factory: BotFactory,
) -> None:
    bot = await bot_factory(LIBRARY_TIMEOUT=1.0)
    await bot.connect(42, KAREN, language_code="en")
    bot.sandbox.faults.latency["platform"] = 3.0
    [reply] = await command(bot, 42, f"/order {LITTLE_PRINCE}", timeout=5)
    assert "not answering" in reply.text


# Every reason of the order system (production-notes), as the patron reads it in English.
REASONS = {
    "owned_own_catalogue": "on its own shelves, so it cannot be ordered through me",
    "owned_wrong_mediumType": "is a kind of material that cannot be ordered for pick-up",
    "not_owned_wrong_ILL_mediumType": "is a kind of material that cannot be ordered for pick-up",
    "not_owned_no_ILL_loc": "No library can lend Den lille prins to you",
    "unknown_pickupAgency": "does not exist at the libraries, so nothing was ordered",
    "unknown_user": "The library does not know you as a patron for this order",
    "invalid_order": "The order system rejected the order of Den lille prins as invalid",
    "ORS_error": "The order system failed, so Den lille prins was not ordered",
    "service_unavailable": "order system is down right now, so Den lille prins was not ordered",
    "authentication_error": "could not confirm who you are, so Den lille prins was not ordered",
    "order not placed": "The library could not order Den lille prins",
    # An unknown code: a generic refusal that quotes it.
    "a_code_nobody_knows": "refused to order Den lille prins, saying “a_code_nobody_knows”",
}


async def test_every_order_system_reason_in_words(bot: BotHarness) -> None:
    await bot.connect(42, KAREN, language_code="en")
    for index, (code, words) in enumerate(REASONS.items()):
        ask = await confirmation(bot, 42, f"/order {LITTLE_PRINCE} DK-710104")
        bot.sandbox.faults.refuse_orders.append(code)
        told = await bot.tap(42, ask, "📥 Yes, order it")
        assert told is not None and words in told.text, (code, told.text)
        assert bot.sandbox.calls[ORDER_CALLS] == index + 1
    assert not [o for o in bot.sandbox.patron_data(KAREN).orders if o["title"] == "Den lille prins"]


async def test_a_name_when_the_branches_cannot_be_listed(bot: BotHarness) -> None:
    await bot.connect(47, KAREN, language_code="en")
    bot.sandbox.faults.fail_next["/v3/libraries"] = [500, 500, 500]
    [told] = await command(bot, 47, f"/order {LITTLE_PRINCE} Vesterbro")
    assert told.text.startswith("I cannot list your library's branches right now.")
    assert f"/order {LITTLE_PRINCE} DK-710100" in told.text
    assert (await card_of(bot.store, 47)).pickup_branch is None
    assert bot.sandbox.calls[ORDER_CALLS] == 0
