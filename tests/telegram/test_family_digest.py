"""A family's reminder digest in the chat: each card's "renew all" renews that card's loans with
that card's token, and no one else's."""

from __future__ import annotations

from tests.fixtures.bot import BotHarness
from tests.fixtures.jobs import sweeper
from tests.fixtures.patrons import JONAS, KAREN

CHAT = 8301


async def test_a_cards_renew_all_in_the_digest_renews_only_that_card(bot: BotHarness) -> None:
    await bot.connect(CHAT, KAREN, language_code="en")
    await bot.connect(CHAT, JONAS, language_code="en")
    await bot.store.cards.set_label(CHAT, 1, "Karen")
    await bot.store.cards.set_label(CHAT, 2, "Jonas")
    before = len(bot.telegram.sent(CHAT))
    async with sweeper(bot) as sweep:
        await sweep()
    digest = await bot.next_message(CHAT, before)
    assert "👤 <b>Karen</b>" in digest.html and "👤 <b>Jonas</b>" in digest.html
    karen = dict(bot.sandbox.patron_data(KAREN).renewals)
    done = await bot.tap(CHAT, digest, "Renew these: Jonas")
    assert done is not None
    assert bot.sandbox.patron_data(JONAS).renewals  # Jonas's loan, with his token
    assert bot.sandbox.patron_data(KAREN).renewals == karen  # none of Karen's
