"""/renew: a button per loan and "renew all", each result reported."""

from __future__ import annotations

import datetime as dt
import re

from bot.formatting import format_date
from bot.library.models import parse_library_date
from tests.bot.test_borrower import KAREN, METTE, OLE, buttons, command, wait_answer
from tests.fixtures.bot import BotHarness

RENEW_CALLS = "platform GET /v3/renew"


def due_of(bot: BotHarness, user_id: str, title: str) -> dt.date:
    [loan] = [x for x in bot.sandbox.patron_data(user_id).loans if x["title"] == title]
    due = parse_library_date(loan["dueDate"])
    assert isinstance(due, dt.date)
    return due


async def test_renew_lists_every_loan_with_a_button(bot: BotHarness) -> None:
    await bot.connect(60, KAREN)
    [reply] = await command(bot, 60, "/renew")
    assert reply.text.startswith("🔄 Forny lån (7)")
    labels = buttons(reply)
    assert labels[0] == "🔄 Forny alle"
    assert len(labels) == 8
    # Soonest due first, with the due date; markup characters stay as they are in a button.
    assert re.fullmatch(r"🔄 Rødt & sort <2\. udgave> · \d{1,2}\. [a-zæøå]{3}\.", labels[1])
    assert labels[2].startswith("🔄 Snak_om_*stjerner* · ")
    assert all(len(b.callback_data or "") <= 64 for row in reply.buttons for b in row)


async def test_renew_one_loan_reports_the_new_due_date(bot: BotHarness) -> None:
    await bot.connect(61, KAREN, language_code="en")
    [listing] = await command(bot, 61, "/renew")
    before = due_of(bot, KAREN, "Den afrikanske farm")
    label = next(text for text in buttons(listing) if "Den afrikanske farm" in text)
    result = await bot.tap(61, listing, label)
    assert result is not None
    after = due_of(bot, KAREN, "Den afrikanske farm")
    assert after > before
    expected = format_date(after, "en", today=bot.sandbox.today)
    assert result.text == f"✅ Den afrikanske farm: new due date {expected}"
    # The list stays, so the other loans can still be renewed.
    [again] = [m for m in bot.telegram.sent(61) if m.message_id == listing.message_id]
    assert again.buttons == listing.buttons
    # The same button a second time renews nothing more.
    query = await bot.telegram.tap(61, listing.message_id, listing.button(label).callback_data)
    answer = await wait_answer(bot, query)
    assert "already been tried" in (answer.get("text") or "")
    assert bot.sandbox.calls[RENEW_CALLS] == 1


async def test_a_refused_renewal_says_why(bot: BotHarness) -> None:
    await bot.connect(62, KAREN)
    [listing] = await command(bot, 62, "/renew")
    label = next(text for text in buttons(listing) if "Kongens fald" in text)
    result = await bot.tap(62, listing, label)
    assert result is not None
    assert result.text == "❌ Kongens fald: ikke fornyet – en anden har reserveret det"


async def test_renew_all(bot: BotHarness) -> None:
    await bot.connect(63, KAREN, language_code="en")
    [listing] = await command(bot, 63, "/renew")
    result = await bot.tap(63, listing, "🔄 Renew all")
    assert result is not None
    lines = result.text.splitlines()
    assert lines[0] == "🔄 Renewal"
    assert len(lines) == 8
    assert sum(line.startswith("✅ ") for line in lines) == 6
    assert "❌ Kongens fald: not renewed – someone else has reserved it" in lines
    assert "✅ Rødt & sort <2. udgave>: new due date" in result.text
    assert bot.sandbox.calls[RENEW_CALLS] == 7


async def test_renew_all_sixty_five_loans(bot: BotHarness) -> None:
    await bot.connect(64, METTE)
    [listing] = await command(bot, 64, "/renew")
    assert "Forny lån (65)" in listing.text
    assert len(buttons(listing)) == 66
    before = len(bot.telegram.sent(64))
    await bot.tap(64, listing, "🔄 Forny alle", timeout=10)

    def renewed() -> int:
        return sum(m.text.count("✅ ") for m in bot.telegram.sent(64)[before:])

    await bot.telegram.wait_for(64, lambda _: renewed() >= 65, after=listing.message_id)
    assert renewed() == 65
    assert bot.sandbox.calls[RENEW_CALLS] == 65
    assert all(len(m.text) <= 4096 for m in bot.telegram.sent(64))


async def test_nothing_to_renew(bot: BotHarness) -> None:
    await bot.connect(65, OLE)
    [reply] = await command(bot, 65, "/renew")
    assert reply.text == "🔄 Du har ingen lån at forny."
    assert reply.buttons == []


async def test_renewing_while_the_platform_is_down_keeps_the_list(bot: BotHarness) -> None:
    await bot.connect(66, KAREN)
    [listing] = await command(bot, 66, "/renew")
    bot.sandbox.faults.down.add("platform")
    result = await bot.tap(66, listing, "🔄 Forny alle")
    assert result is not None and "svarer ikke" in result.text
    [again] = [m for m in bot.telegram.sent(66) if m.message_id == listing.message_id]
    assert again.text == listing.text


async def test_renewing_with_an_expired_token(bot: BotHarness) -> None:
    await bot.connect(67, KAREN, language_code="en")
    [listing] = await command(bot, 67, "/renew")
    account = await bot.store.account(67)
    assert account is not None
    bot.sandbox.expire_token(account.token)
    label = next(text for text in buttons(listing) if "Lykke" in text or "farm" in text)
    await bot.tap(67, listing, label)
    await bot.telegram.wait_for(67, "Log in again", after=listing.message_id)
    assert await bot.store.account(67) is None
