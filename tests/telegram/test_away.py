"""/away <days>: before a trip, renew everything due within that many days, each loan at most
once, and say what could not be renewed and why."""

from __future__ import annotations

from tests.fixtures.bot import BotHarness
from tests.fixtures.chat import command
from tests.fixtures.library import RENEW_CALLS, due_of
from tests.fixtures.patrons import KAREN, OLE


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
    # The counts, then only what needs the patron: renewed loans are in /loans with new dates.
    assert lines[1].startswith("✅ 2 renewed · ⛔ 2 refused"), lines
    assert not any(line.startswith("✅ Æbler") for line in lines)
    assert due_of(bot.sandbox, KAREN, "Æbler, øl og ålegræs") > before
    assert "⛔ Kongens fald: can't be renewed – reserved by another patron" in lines
    assert any(line.startswith("⛔ Snak_om_*stjerner*: can't be renewed") for line in lines)
    assert any("Den afrikanske farm" in line for line in lines)  # named as left alone
    assert due_of(bot.sandbox, KAREN, "Den afrikanske farm") == later

    # Again: the refusals are remembered (not tried again), the renewed loans are now later.
    [again] = await command(bot, 70, "/away 5")
    assert bot.sandbox.calls[RENEW_CALLS] == 4  # the renewed ones are due later now
    assert "⛔ Kongens fald: can't be renewed – reserved by another patron" in again.text


async def test_away_in_danish_wrong_days_and_no_loans(bot: BotHarness) -> None:
    await bot.connect(71, OLE)
    for wrong in ("/away", "/away 0", "/away 61", "/away x", "/away 3 4"):
        [answer] = await command(bot, 71, wrong)
        assert "/away 14" in answer.text and "fra 1 til 60" in answer.text
    [empty] = await command(bot, 71, "/away 7")
    assert "lån" in empty.text.lower()
    assert bot.sandbox.calls[RENEW_CALLS] == 0
