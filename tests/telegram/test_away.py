"""/away <days>: before a trip, renew everything due within that many days, each loan at most
once, and say what could not be renewed and why."""

from __future__ import annotations

import datetime as dt

from bot.texts.formatting import format_date
from tests.fixtures.bot import BotHarness
from tests.fixtures.cards import two_cards
from tests.fixtures.chat import buttons, command
from tests.fixtures.library import RENEW_CALLS, due_of
from tests.fixtures.patrons import JONAS, KAREN, OLE


async def test_away_renews_what_is_due_within_the_days_and_says_what_could_not(
    bot: BotHarness,
) -> None:
    await bot.connect(70, KAREN, language_code="en")
    later = due_of(bot.sandbox, KAREN, "Den afrikanske farm")  # due in 20 days
    before = due_of(bot.sandbox, KAREN, "Æbler, øl og ålegræs")  # due tomorrow
    [result] = await command(bot, 70, "/away 5")
    assert result.text.startswith("🧳 Before your trip: the loans due within 5 days")
    lines = result.text.splitlines()
    # Four loans are due within 5 days: each tried once.
    assert bot.sandbox.calls[RENEW_CALLS] == 4
    # The counts, the renewed loans with their new date, the refused with the date they are due.
    assert lines[1].startswith("✅ 2 renewed · ⛔ 2 refused"), lines
    after = due_of(bot.sandbox, KAREN, "Æbler, øl og ålegræs")
    assert after > before
    today = bot.sandbox.today
    assert f"✅ Æbler, øl og ålegræs: new due date {format_date(after, 'en', today=today)}" in lines
    kongens = format_date(due_of(bot.sandbox, KAREN, "Kongens fald"), "en", today=today)
    assert f"⛔ Kongens fald, due {kongens}: can't be renewed – reserved by another patron" in lines
    assert any(line.startswith("⛔ Snak_om_*stjerner*, due ") for line in lines)
    assert any("Den afrikanske farm" in line for line in lines)  # named as left alone
    assert due_of(bot.sandbox, KAREN, "Den afrikanske farm") == later

    # Again: the refusals are remembered (not tried again), the renewed loans are now later.
    [again] = await command(bot, 70, "/away 5")
    assert bot.sandbox.calls[RENEW_CALLS] == 4  # the renewed ones are due later now
    # Nothing tried, yet the count line agrees with the ⛔ lines remembered.
    assert again.text.splitlines()[1] == "⛔ 2 refused"
    assert "can't be renewed – reserved by another patron" in again.text


async def test_a_loan_renewed_today_is_not_renewed_again_the_same_day(bot: BotHarness) -> None:
    """A renewal counts from today: a second /away the same day would spend a renewal of each
    loan for the date it has already."""
    await bot.connect(74, KAREN, language_code="en")
    [first] = await command(bot, 74, "/away 30")
    renewed = bot.sandbox.calls[RENEW_CALLS]
    assert first.text.splitlines()[1] == "✅ 5 renewed · ⛔ 2 refused"
    [again] = await command(bot, 74, "/away 30")
    assert bot.sandbox.calls[RENEW_CALLS] == renewed
    [line] = [line for line in again.text.splitlines() if line.startswith("↩️")]
    assert line.startswith("↩️ 5 loans were renewed earlier today, so they are not renewed again: ")
    assert "Æbler, øl og ålegræs" in line


async def test_away_one_day_leaves_a_refusal_due_later_out(bot: BotHarness) -> None:
    """A refusal remembered of a loan due in 3 days is no answer to "due within 1 day"."""
    await bot.connect(72, KAREN, language_code="en")
    [listing] = await command(bot, 72, "/renew")
    label = next(text for text in buttons(listing) if "Kongens fald" in text)
    await bot.tap(72, listing, label)  # refused: reserved by another patron, remembered
    [result] = await command(bot, 72, "/away 1")
    lines = result.text.splitlines()
    assert not [line for line in lines if line.startswith("⛔ Kongens fald")], lines
    assert lines[1] == "✅ 2 renewed · ⛔ 1 refused", lines
    assert len([line for line in lines if line.startswith("⛔ ")]) == 1
    assert "Kongens fald" in lines[-1] and lines[-1].startswith("⏭ ")


async def test_away_warns_of_ready_holds_that_lapse_during_the_trip(bot: BotHarness) -> None:
    await bot.connect(73, KAREN, language_code="en")
    [short] = await command(bot, 73, "/away 1")
    assert "📦" not in short.text  # both ready holds can still be picked up on return
    [trip] = await command(bot, 73, "/away 14")
    today = bot.sandbox.today
    smilla = format_date(today + dt.timedelta(days=5), "en", today=today)
    kvinden = format_date(today + dt.timedelta(days=2), "en", today=today)
    assert (
        f"📦 Frøken Smillas fornemmelse for sne waits for you at Københavns Hovedbibliotek only "
        f"until {smilla}, before you are back: pick it up before you leave."
    ) in trip.text
    assert f"📦 Kvinden i buret waits for you at Vesterbro Bibliotek only until {kvinden}" in (
        trip.text
    )
    assert trip.text.splitlines()[1].startswith("⛔ 2 refused")


async def test_away_in_danish_wrong_days_and_no_loans(bot: BotHarness) -> None:
    await bot.connect(71, OLE)
    for wrong in ("/away", "/away 0", "/away 61", "/away x", "/away Ole 3"):
        [answer] = await command(bot, 71, wrong)
        assert "/away 14" in answer.text and "fra 1 til 60" in answer.text
    [unknown] = await command(bot, 71, "/away 3 Bo")  # the card, as the lists take it
    assert "»Bo«" in unknown.text and "Ole" in unknown.text
    [empty] = await command(bot, 71, "/away 7")
    assert "lån" in empty.text.lower()
    assert bot.sandbox.calls[RENEW_CALLS] == 0


async def test_a_login_refused_partway_through_away_tells_what_was_renewed(
    bot: BotHarness,
) -> None:
    """The token refused after other loans were renewed: the trip's message tells them, and the
    refused loan's line and the login come after, not "log in again" alone."""
    await bot.connect(75, KAREN, language_code="en")
    bot.sandbox.faults.fail_next["/v3/renew"] = [401]
    before = len(bot.telegram.sent(75))
    await bot.telegram.send_text(75, "/away 5")
    trip = await bot.telegram.wait_for(75, "🧳 Before your trip", after=before)
    assert bot.sandbox.calls[RENEW_CALLS] == 4
    assert trip.text.splitlines()[1].endswith(" · ⚠️ 1 not renewed now"), trip.text
    assert "not renewed – the login expired partway through; log in again to renew it" in trip.text
    await bot.telegram.wait_for(75, "Log in again", after=trip.message_id)
    assert await bot.store.cards.get(75) is None


async def test_away_of_one_named_card_renews_only_that_card(bot: BotHarness) -> None:
    await two_cards(bot, 172)
    before = {loan["loanId"]: loan["dueDate"] for loan in bot.sandbox.patron_data(KAREN).loans}
    [trip] = await command(bot, 172, "/away 5 Jonas")
    assert "renewed" in trip.text and "👤 Karen" not in trip.text
    after = {loan["loanId"]: loan["dueDate"] for loan in bot.sandbox.patron_data(KAREN).loans}
    assert after == before
    assert bot.sandbox.patron_data(JONAS).renewals
