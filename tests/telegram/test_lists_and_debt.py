"""Issue 25's list items: /debt paged for one card, a family total and what each fee is for;
`/loans <name>` (and /holds, /debt) showing that card only; /cards numbered 1..n after a logout
and naming each card's library."""

from __future__ import annotations

from tests.fixtures.bot import BotHarness
from tests.fixtures.cards import labels, log_in, two_cards
from tests.fixtures.chat import buttons, command
from tests.fixtures.patrons import ANNA, JONAS, KAREN, OLE


async def test_debt_of_one_card_pages_instead_of_a_burst_of_messages(bot: BotHarness) -> None:
    await bot.connect(2501, KAREN, language_code="en")
    fees = bot.sandbox.patron_data(KAREN).debt
    fees += [dict(fees[0], title=f"Bog nummer {n}") for n in range(19)]  # 21 fees in all
    replies = await command(bot, 2501, "/debt")
    [first] = replies
    assert first.text.startswith("💰 What you owe the library\nTotal: DKK\u00a0")
    assert first.text.count("\n\nFee") == 15  # one page's worth, not all 21
    more = await bot.tap(2501, first, next(b for b in buttons(first) if "▶" in b))
    assert more is not None and more.message_id == first.message_id
    assert "Bog nummer 18" in more.text


async def test_each_fee_says_what_it_is_for(bot: BotHarness) -> None:
    await bot.connect(2502, KAREN, language_code="en")
    [reply] = await command(bot, 2502, "/debt")
    assert "Fee for Rødt & sort <2. udgave>" in reply.text
    assert "<b>Rødt &amp; sort &lt;2. udgave&gt;</b>" in reply.html
    # The untitled fee: the data gives no reason, and the bot says so rather than guessing.
    assert "Fee (the library gives no reason)" in reply.text


async def test_a_family_sees_its_total(bot: BotHarness) -> None:
    await bot.connect(2504, KAREN, language_code="en")
    await bot.connect(2504, ANNA, language_code="en")
    [reply] = await command(bot, 2504, "/debt")
    anna = sum(float(d["amount"]) for d in bot.sandbox.patron_data(ANNA).debt)
    total = f"{65.50 + anna:.2f}"
    assert f"Total for all cards: DKK\u00a0{total}" in reply.text
    assert reply.text.index("Total for all cards") < reply.text.index("👤")


async def test_a_list_of_one_named_card(bot: BotHarness) -> None:
    await two_cards(bot, 2505)  # Karen (1) and Jonas (2)
    [loans] = await command(bot, 2505, "/loans jonas")
    assert loans.text.startswith("📚 Your loans (1)")
    assert "👤 Jonas" in loans.text and "👤 Karen" not in loans.text
    [holds] = await command(bot, 2505, "/holds Karen")
    assert "👤 Karen" in holds.text and "👤 Jonas" not in holds.text
    [debt] = await command(bot, 2505, "/debt 2")
    assert "👤 Jonas" in debt.text and "👤 Karen" not in debt.text
    [unknown] = await command(bot, 2505, "/loans Bo")
    assert unknown.text == "No card is called “Bo”. Your cards: Karen, Jonas."
    # /renew takes a card the same way, and its other views keep their buttons.
    [renewals] = await command(bot, 2505, "/renew jonas")
    assert "👤 Jonas" in renewals.text and "👤 Karen" not in renewals.text
    assert "🔄 Lykke-Per · " in " ".join(buttons(renewals))  # Jonas's loan, in his view
    assert buttons(renewals)[-3:] == ["Karen", "· Jonas ·", "All cards"]
    every = await bot.tap(2505, renewals, "All cards")
    assert every is not None and "👤 Karen" in every.text
    assert any(label.startswith("Karen · 🔄 ") for label in buttons(every))
    [nobody] = await command(bot, 2505, "/renew Bo")
    assert nobody.text == unknown.text


async def test_cards_are_numbered_without_gaps_and_name_their_library(bot: BotHarness) -> None:
    chat = 2506
    await log_in(bot, chat, KAREN)
    await log_in(bot, chat, OLE)
    await log_in(bot, chat, JONAS)
    which = await bot.send(chat, "/logout")
    done = await bot.tap(chat, which, "🚪 Ole")
    assert done is not None
    assert [card for card, _ in await labels(bot, chat)] == [1, 3]
    listed = await bot.send(chat, "/cards")
    lines = listed.text.splitlines()
    assert lines[1] == "1. 👤 Karen (Københavns Biblioteker)"
    assert lines[2].startswith("2. 👤 Jonas (")
    assert "Hovedbibliotek" not in listed.text
