"""At most once, through the running bot: the platform or the access service reads a request
that changes state and then drops the connection (`refuse_connections` in the sandbox).

Each state change reaches the service exactly once, although the bot's library client holds
kept-alive connections from the reads before it, and the patron is told honestly that the
library did not answer and where to see whether it went through.
(`tests/library/test_at_most_once.py` does the same on fresh and reused connections alone.)
"""

from __future__ import annotations

from tests.fixtures.bot import BotHarness
from tests.fixtures.chat import answers, says, send, tap
from tests.fixtures.patrons import JONAS, KAREN, OLE, PID

YES_ORDER = {"da": "Ja, bestil", "en": "Yes, order it"}


def drop_after_reading(bot: BotHarness, service: str) -> None:
    bot.sandbox.faults.refuse_connections.add(service)


async def test_order_confirmed_while_the_platform_drops_the_connection(bot: BotHarness) -> None:
    chat, lang = 301, "en"
    await bot.connect(chat, OLE, language_code=lang)
    [prompt] = await send(bot, chat, f"/order {PID} DK-710100")
    assert says(prompt, lang, "borrower.order.confirm"), prompt.text
    drop_after_reading(bot, "platform")

    [maybe] = await tap(bot, chat, prompt, YES_ORDER[lang])

    assert bot.sandbox.calls["platform GET /v3/order"] == 1
    # One message, saying what to check and when, and no "try again" beside it.
    assert maybe.text == (
        "⚠️ The library did not answer, so I cannot tell whether Rødt & sort <2. udgave> was "
        "ordered. A new order can take a while to show up, so check /holds tomorrow, and order "
        "it again only if it is not there."
    )
    # (Before, a "try again in a little while" came first, and this one after it.)


async def test_renew_button_while_the_platform_drops_the_connection(bot: BotHarness) -> None:
    chat, lang = 302, "da"
    await bot.connect(chat, JONAS, language_code=lang)
    [listing] = await send(bot, chat, "/renew")
    loan_button = listing.buttons[1][0]
    drop_after_reading(bot, "platform")

    # The list's keyboard is edited in place, and the answer comes as a message of its own.
    told = await tap(bot, chat, listing, loan_button.text, count=2)

    assert bot.sandbox.calls["platform GET /v3/renew"] == 1
    [reply] = [message for message in told if says(message, lang, "borrower.renew.no_answer")]
    assert "intet svar fra biblioteket" in reply.text
    assert "se /loans, og forny det kun igen, hvis afleveringsdatoen ikke er rykket" in reply.text


async def test_cancel_while_the_platform_drops_the_connection(bot: BotHarness) -> None:
    chat, lang = 303, "en"
    await bot.connect(chat, KAREN, language_code=lang)
    [holds] = await send(bot, chat, "/holds")
    [confirm] = await tap(bot, chat, holds, "✖ Cancel: Dune")
    drop_after_reading(bot, "platform")

    [reply] = await tap(bot, chat, confirm, "✖ Yes, cancel it")

    assert bot.sandbox.calls["platform GET /v3/order"] == 1
    assert reply.text == (
        "⚠️ The library did not answer, so I cannot tell whether the hold on Dune was "
        "cancelled. Check /holds, and cancel it again only if the hold is still there."
    )


async def test_code_exchange_while_the_access_service_drops_the_connection(
    bot: BotHarness,
) -> None:
    chat = 304
    bot.add_chat(chat)
    redirect = await bot.log_in_at_library(await bot.login_url(chat))
    drop_after_reading(bot, "oauth")

    page = await bot.follow(redirect)

    assert page.status_code == 502  # "the login could not be completed": log in again
    assert bot.sandbox.calls["oauth POST /oauth/token"] == 1
    assert await bot.store.cards.get(chat) is None


async def test_logout_while_the_access_service_drops_the_connection(bot: BotHarness) -> None:
    chat, lang = 305, "en"
    await bot.connect(chat, KAREN, language_code=lang)
    drop_after_reading(bot, "oauth")

    [reply] = await answers(bot, chat, lambda: bot.telegram.send_text(chat, "/logout"))

    assert bot.sandbox.calls["oauth DELETE /oauth/revoke"] == 1
    assert says(reply, lang, "connect.logged_out_unrevoked"), reply.text
    assert await bot.store.cards.get(chat) is None
