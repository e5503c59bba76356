"""The notices nobody else sends (issue 17, part 3), from the sweep against the sandbox and the
Telegram stand-in: each when due, exactly once (or once a day), not when turned off, in the
patron's language; and their toggles in /reminders."""

from __future__ import annotations

from bot.rules.renewals import due_key
from bot.services.checks import watch_order
from bot.texts.formatting import format_date
from tests.fixtures.bot import BotHarness
from tests.fixtures.cards import card_of
from tests.fixtures.patrons import BABETTE, JONAS, KAREN, LITTLE_PRINCE, OLE
from tests.jobs.conftest import Rig

KAREN_CHAT = 801
JONAS_CHAT = 802
OLE_CHAT = 803
SNAK = "Snak_om_*stjerner*"  # Karen's loan due today, renewed as often as allowed


async def _refuse(rig: Rig, token: str, title: str) -> None:
    """The bot remembers that the library refused to renew this loan (as /renew records it)."""
    [loan] = [loan for loan in (await rig.library.user(token)).loans if loan.title == title]
    await rig.store.renewal_refusals.record_refusal(
        KAREN_CHAT, loan.loan_id, due_key(loan), "maxRenewalsReached"
    )


async def test_a_refused_loan_is_reminded_daily_from_its_due_day(rig: Rig) -> None:
    token = await rig.connect(KAREN_CHAT, KAREN)
    await _refuse(rig, token, SNAK)

    await rig.sweep()
    [first] = rig.telegram.sent(KAREN_CHAT)
    assert f"🟡 {SNAK}" in first.text
    assert "⛔ kan ikke fornyes" in first.text
    assert f"Forny: {SNAK}" not in [b.text for row in first.buttons for b in row]

    await rig.sweep()  # the same day: nothing more
    assert len(rig.telegram.sent(KAREN_CHAT)) == 1

    for days in (1, 2):  # overdue: once a day
        await rig.sweep(today=rig.day(days))
        await rig.sweep(today=rig.day(days))
        assert len(rig.telegram.sent(KAREN_CHAT)) == 1 + days
        latest = rig.telegram.sent(KAREN_CHAT)[-1]
        assert "⛔" in latest.text and SNAK in latest.text and "Overskredet" in latest.text

    # Turned off: the loan is reminded as any overdue loan is (once), no longer daily.
    await rig.store.chats.set_notices(KAREN_CHAT, frozenset({"fees"}))
    for days in (3, 4, 5):
        await rig.sweep(today=rig.day(days))
    assert len([text for text in rig.texts(KAREN_CHAT)[3:] if SNAK in text]) == 1


async def test_the_polling_plan_keeps_a_refused_loan_daily(rig: Rig) -> None:
    token = await rig.connect(KAREN_CHAT, KAREN)
    await _refuse(rig, token, SNAK)
    await rig.sweep()
    card = await rig.store.cards.get(KAREN_CHAT)
    assert card is not None and card.next_check == rig.day(1)
    # Past its first overdue day the plan alone would wait; the daily reminder keeps it daily.
    # Without holds (a waiting one is checked daily anyway); Karen's other loans are due within
    # 3 days, so from day 5 only the refused one can keep the card daily.
    rig.sandbox.patron_data(KAREN).orders.clear()
    for days in range(1, 8):
        await rig.sweep(today=rig.day(days))
        card = await rig.store.cards.get(KAREN_CHAT)
        assert card is not None and card.next_check == rig.day(days + 1), days


async def test_a_hold_moving_up_the_queue_is_told_once_in_english_when_turned_on(
    rig: Rig,
) -> None:
    await rig.connect(KAREN_CHAT, KAREN, language="en")
    await rig.connect(JONAS_CHAT, JONAS)
    data = rig.sandbox.patron_data(KAREN)
    [dune] = [order for order in data.orders if order["title"] == "Dune"]

    # Off by default: a move is not told.
    await rig.sweep()
    dune["holdQueuePosition"] = "3"
    await rig.sweep(today=rig.day(1))
    assert not any("in the queue" in text for text in rig.texts(KAREN_CHAT))

    await rig.store.chats.set_notices(KAREN_CHAT, frozenset({"queue", "fees", "refused"}))
    await rig.sweep(today=rig.day(2))  # the first status seen: positions are recorded
    assert not any("in the queue" in text for text in rig.texts(KAREN_CHAT))
    dune["holdQueuePosition"] = "1"
    await rig.sweep(today=rig.day(3))
    told = [text for text in rig.texts(KAREN_CHAT) if "in the queue" in text]
    assert len(told) == 1
    assert "Nearer the front of the queue" in told[0]
    assert "Dune: now number 1 in the queue" in told[0]

    await rig.sweep(today=rig.day(4))  # unchanged: nothing more
    dune["holdQueuePosition"] = "2"  # moving back is no news
    await rig.sweep(today=rig.day(5))
    assert len([text for text in rig.texts(KAREN_CHAT) if "in the queue" in text]) == 1
    assert not any("køen" in text for text in rig.texts(JONAS_CHAT))


async def test_a_new_fee_is_told_once_and_the_fees_first_seen_never(rig: Rig) -> None:
    await rig.connect(KAREN_CHAT, KAREN)
    data = rig.sandbox.patron_data(KAREN)

    await rig.sweep()  # Karen's two fees are recorded silently
    assert not any("Nyt gebyr" in text for text in rig.texts(KAREN_CHAT))

    fee = dict(data.debt[0], amount="30.00", title="Erstatning: Dune")
    data.debt.append(fee)
    await rig.sweep(today=rig.day(1))
    told = [text for text in rig.texts(KAREN_CHAT) if "Nyt gebyr" in text]
    assert len(told) == 1 and "Erstatning: Dune" in told[0] and "30,00" in told[0]
    assert "Rødt & sort" not in told[0].split("Nyt gebyr")[1]

    await rig.sweep(today=rig.day(2))
    assert len([text for text in rig.texts(KAREN_CHAT) if "Nyt gebyr" in text]) == 1

    # Off: a fee is not told; on again: the fees of that day are recorded, not told.
    await rig.store.chats.set_notices(KAREN_CHAT, frozenset({"refused"}))
    data.debt.append(dict(fee, title="Gebyr for sen aflevering"))
    await rig.sweep(today=rig.day(3))
    await rig.store.chats.set_notices(KAREN_CHAT, frozenset({"refused", "fees"}))
    await rig.sweep(today=rig.day(4))
    assert len([text for text in rig.texts(KAREN_CHAT) if "Nyt gebyr" in text]) == 1


async def test_notices_are_toggled_with_buttons_in_reminders(bot: BotHarness) -> None:
    bot.add_chat(KAREN_CHAT, language_code="da")
    status = await bot.send(KAREN_CHAT, "/reminders")
    assert "Meddelelser" in status.text
    labels = [button.text for row in status.buttons for button in row]
    assert "✅ Kan ikke fornyes ⛔" in labels and "⬜ Køen rykker frem" in labels
    assert "✅ Nye gebyrer" in labels

    on = await bot.tap(KAREN_CHAT, status, "⬜ Køen rykker frem")
    assert on is not None and "Gemt" in on.text
    assert "queue" in (await bot.store.chats.chat(KAREN_CHAT)).notices
    off = await bot.tap(KAREN_CHAT, on, "✅ Nye gebyrer")
    assert off is not None
    assert "⬜ Nye gebyrer" in [button.text for row in off.buttons for button in row]
    expected = frozenset({"refused", "queue", "pickup", "orders"})
    assert (await bot.store.chats.chat(KAREN_CHAT)).notices == expected


async def test_a_ready_holds_last_day_is_nudged_that_morning_with_opening_hours(
    rig: Rig,
) -> None:
    await rig.connect(KAREN_CHAT, KAREN, language="en")
    await rig.connect(JONAS_CHAT, JONAS)
    await rig.store.chats.set_notices(JONAS_CHAT, frozenset({"refused", "fees"}))
    data = rig.sandbox.patron_data(KAREN)
    [shelf] = [order for order in data.orders if order["status"] == "At reservation shelf"]
    await rig.sweep()
    await rig.sweep(today=rig.day(1))  # not its last day yet
    assert not any("Last day to pick up" in text for text in rig.texts(KAREN_CHAT))
    before = len(rig.telegram.sent(KAREN_CHAT))
    await rig.sweep(today=rig.day(2))
    await rig.sweep(today=rig.day(2))
    told = [text for text in rig.texts(KAREN_CHAT) if "Last day to pick up: today" in text]
    assert len(told) == 1 and len(rig.telegram.sent(KAREN_CHAT)) == before + 1
    assert shelf["title"] in told[0]
    # That day's hours from the library's dated hours (issue 25), not the weekly free text.
    hours = "10:00–16:00" if rig.day(2).weekday() >= 5 else "08:00–20:00"
    assert f"🕘 Open {format_date(rig.day(2), 'en', today=rig.day(2))}: {hours}" in told[0]
    # Turned off (Jonas): his ready hold's last day passes without a nudge.
    jonas = rig.sandbox.patron_data(JONAS)
    [ready] = [order for order in jonas.orders if "pickUpExpiryDate" in order]
    for days in range(0, 12):
        await rig.sweep(today=rig.day(days))
    assert not any("Sidste dag at hente" in text for text in rig.texts(JONAS_CHAT)), ready


async def _order(rig: Rig, chat_id: int, token: str, pid: str) -> None:
    """An order placed through the bot, as /order leaves it: placed, then watched."""
    result = await rig.library.order(token, [pid], "DK-710100")
    assert result.ok
    await watch_order(rig.store, rig.settings, chat_id, pid)


async def test_an_order_not_shown_after_a_day_is_told_once(rig: Rig) -> None:
    token = await rig.connect(OLE_CHAT, OLE)
    rig.sandbox.order_delay = 10**6  # it never reaches the library system
    await _order(rig, OLE_CHAT, token, LITTLE_PRINCE)
    assert (await card_of(rig.store, OLE_CHAT)).order_check == rig.day(1)

    await rig.sweep()
    await rig.sweep(today=rig.day(1))  # less than a day after it was placed
    assert rig.texts(OLE_CHAT) == []
    card = await rig.store.cards.get(OLE_CHAT)
    assert card is not None and card.next_check == rig.day(2)  # checked for it

    await rig.sweep(today=rig.day(2))
    [told] = rig.texts(OLE_CHAT)
    assert "En bestilling er ikke kommet frem" in told and "Den lille prins" in told
    for days in (2, 3, 4):
        await rig.sweep(today=rig.day(days))
    assert len(rig.texts(OLE_CHAT)) == 1
    assert (await card_of(rig.store, OLE_CHAT)).order_check is None


async def test_an_order_that_shows_up_or_is_not_watched_is_not_told(rig: Rig) -> None:
    token = await rig.connect(OLE_CHAT, OLE, language="en")
    await _order(rig, OLE_CHAT, token, LITTLE_PRINCE)  # shows up at once (no delay)
    jonas = await rig.connect(JONAS_CHAT, JONAS)
    await rig.store.chats.set_notices(JONAS_CHAT, frozenset({"fees"}))
    rig.sandbox.order_delay = 10**6
    await _order(rig, JONAS_CHAT, jonas, BABETTE)  # never shows; the notice is off
    for days in range(5):
        await rig.sweep(today=rig.day(days))
    assert not any("has not arrived" in text for text in rig.texts(OLE_CHAT))
    assert not any("ikke kommet frem" in text for text in rig.texts(JONAS_CHAT))
    assert (await card_of(rig.store, OLE_CHAT)).order_check is None
