"""/loans, /holds (and cancelling a hold) and /debt: the real handlers against the sandbox."""

from __future__ import annotations

import datetime as dt
import re
import time

import pytest

from bot.library.models import parse_library_date
from bot.texts.catalog import borrower as catalogue
from tests.fixtures.bot import BotFactory, BotHarness
from tests.fixtures.chat import buttons, command, wait_answer
from tests.fixtures.patrons import JONAS, KAREN, METTE, OLE

# --- /loans ---------------------------------------------------------------------------------


@pytest.mark.bot_api_over_http  # the whole path once over HTTP
async def test_loans_are_sorted_marked_and_escaped_in_danish(bot: BotHarness) -> None:
    await bot.connect(1, KAREN)
    [reply] = await command(bot, 1, "/loans")
    text = reply.text
    assert "Dine lån (7)" in text
    # Soonest first: overdue, today, tomorrow, in 3 days, then the later ones.
    order = [
        text.index(title)
        for title in (
            "Rødt & sort <2. udgave>",
            "Snak_om_*stjerner*",
            "Æbler, øl og ålegræs",
            "Kongens fald",
            "Den afrikanske farm",
        )
    ]
    assert order == sorted(order)
    assert "overskredet med 2 dage" in text
    assert "(i dag)" in text and "(i morgen)" in text and "(om 3 dage)" in text
    assert "🔴 Rødt & sort" in text
    assert "Ærø Østergård" in text
    # Danish dates as a Danish reader writes them ("24. nov.").
    assert re.search(r"afleveres \d{1,2}\. [a-zæøå]{3}\.", text)
    assert "<b>Rødt &amp; sort &lt;2. udgave&gt;</b>" in reply.html


async def test_loans_in_english(bot: BotHarness) -> None:
    await bot.connect(2, KAREN, language_code="en")
    [reply] = await command(bot, 2, "/loans")
    assert "Your loans (7)" in reply.text
    assert "2 days overdue" in reply.text
    assert "(tomorrow)" in reply.text
    assert re.search(r"due \d{1,2} [A-Z][a-z]{2}", reply.text)


async def test_sixty_five_loans_page_through_one_message(bot: BotHarness) -> None:
    await bot.connect(3, METTE)
    [first] = await command(bot, 3, "/loans")
    lines = first.text.splitlines()
    assert lines[0] == "📚 Dine lån (65)"
    today = bot.sandbox.today
    dues = [parse_library_date(loan["dueDate"]) for loan in bot.sandbox.patron_data(METTE).loans]
    days = [(due - today).days for due in dues if isinstance(due, dt.date)]
    assert len(days) == 65
    overdue = sum(d < 0 for d in days)
    soon = sum(0 <= d <= 3 for d in days)
    assert lines[1] == f"{overdue} overskredet · {soon} skal afleveres inden for 3 dage"
    labels = buttons(first)
    pages = int(labels[0].split("/")[1])
    assert labels == ["1/" + str(pages), "▶", "📚 Overblik"] and pages > 1
    seen: list[str] = []
    shown = first
    for page in range(1, pages + 1):
        assert shown.message_id == first.message_id
        assert len(shown.text) <= 4096
        assert all(len(b.callback_data.encode()) <= 64 for row in shown.buttons[:-1] for b in row)
        # Every entry is whole: a bold title followed by its due line.
        entries = shown.html.split("\n\n")[1:]
        assert 0 < len(entries) <= 10
        for entry in entries:
            assert entry.count("<b>") == entry.count("</b>") == 1, entry
            assert "afleveres" in entry, entry
        seen.extend(entries)
        expected = ([] if page == 1 else ["◀"]) + [f"{page}/{pages}"]
        expected += ([] if page == pages else ["▶"]) + ["📚 Overblik"]
        assert buttons(shown) == expected
        if page < pages:
            edited = await bot.tap(3, shown, "▶")
            assert edited is not None
            shown = edited
    assert len(seen) == 65
    # No new message: every page was the same one, edited.
    assert [m.message_id for m in bot.telegram.sent(3)][-1] == first.message_id
    # The Danish day-first date (dd/mm/yyyy) is read: shown, sorted and counted like the rest.
    everything = "\n".join(seen)
    assert not re.search(r"\d{2}/\d{2}/\d{4}", everything)
    assert everything.count(" (") == 65  # every entry's days left
    back = await bot.tap(3, shown, "◀")
    assert back is not None and back.text.startswith("📚 Dine lån (65)")
    assert buttons(back)[-3:] == [f"{pages - 1}/{pages}", "▶", "📚 Overblik"]


@pytest.mark.parametrize("test_environment", [True, False])
async def test_the_overview_button_only_where_telegram_opens_it(
    bot_factory: BotFactory, test_environment: bool
) -> None:
    """The Mini App's button at the bot's plain-http address: in Telegram's test environment
    (the demo's), not in production, where Telegram would refuse the whole message."""
    bot = await bot_factory(TELEGRAM_TEST_ENVIRONMENT=test_environment)
    assert bot.info.public_url.startswith("http://")
    await bot.connect(3, KAREN)
    [reply] = await command(bot, 3, "/loans")
    assert reply.text.startswith("📚 Dine lån (")
    assert ("📚 Overblik" in buttons(reply)) is test_environment


async def test_no_loans(bot: BotHarness) -> None:
    await bot.connect(4, OLE, language_code="en")
    [reply] = await command(bot, 4, "/loans")
    assert reply.text == "📚 You have no loans right now."


# --- /holds and cancelling ------------------------------------------------------------------


async def test_holds_ready_first_with_branch_names(bot: BotHarness) -> None:
    await bot.connect(5, KAREN)
    [reply] = await command(bot, 5, "/holds")
    text = reply.text
    assert "Dine reserveringer (4)" in text
    ready = text.index("Klar til afhentning")
    waiting = text.index("Venter")
    assert ready < text.index("Kvinden i buret") < text.index("Frøken Smillas") < waiting
    assert waiting < text.index("Hundrede års ensomhed") and waiting < text.index("Dune")
    assert "Afhentningsnr. 4" in text and "Afhentningsnr. 17" in text
    assert "hentes senest" in text
    assert "I kø · nr. 4\n" in text and "i køen" not in text
    assert "Behandles" in text
    assert "Afhentes på Vesterbro Bibliotek" in text
    assert "Afhentes på Københavns Hovedbibliotek" in text
    assert buttons(reply) == [
        "✖ Annullér: Kvinden i buret",
        "✖ Annullér: Frøken Smillas fornemmelse for sne",
        "✖ Annullér: Hundrede års ensomhed",
        "✖ Annullér: Dune",
    ]
    # Branch names are public data, fetched with the anonymous token and then cached.
    calls = bot.sandbox.calls["platform GET /v3/libraries"]
    assert calls == 1
    await command(bot, 5, "/holds")
    assert bot.sandbox.calls["platform GET /v3/libraries"] == calls


async def test_many_holds_page_with_their_cancel_buttons(bot: BotHarness) -> None:
    await bot.connect(10, KAREN, language_code="en")
    orders = bot.sandbox.patron_data(KAREN).orders
    waiting = orders[3]
    for number in range(16):
        extra = dict(waiting, orderId=f"extra-{number}", title=f"Extra {number:02d}")
        extra["holdQueuePosition"] = str(10 + number)
        orders.append(extra)
    [first] = await command(bot, 10, "/holds")
    lines = first.text.splitlines()
    assert lines[0] == "📌 Your holds (20)"
    assert lines[1] == "2 ready for pick-up · 18 waiting"
    assert first.text.endswith("Tap a button to cancel a hold.")
    labels = buttons(first)
    assert labels[-2:] == ["1/3", "▶"]
    cancels = [text for text in labels if text.startswith("✖ Cancel: ")]
    assert len(cancels) == 8 and cancels[0] == "✖ Cancel: Kvinden i buret"
    assert "Extra 15" not in first.text
    last = await bot.tap(10, first, "▶")
    assert last is not None
    last = await bot.tap(10, last, "▶")
    assert last is not None and last.message_id == first.message_id
    assert buttons(last)[-2:] == ["◀", "3/3"]
    assert "Extra 15" in last.text and "Kvinden i buret" not in last.text
    assert len(last.text) <= 4096
    # A cancel button of a later page works like any other.
    confirm = await bot.tap(10, last, "✖ Cancel: Extra 15")
    assert confirm is not None and confirm.text == (
        "Do you want to cancel your hold on Extra 15, for pick-up at Københavns Hovedbibliotek?"
    )


async def test_holds_show_the_isil_id_when_branch_names_fail(bot: BotHarness) -> None:
    await bot.connect(6, JONAS, language_code="en")
    bot.sandbox.faults.fail_next["/v3/libraries"] = [500, 500]
    [reply] = await command(bot, 6, "/holds")
    assert "Pick up at DK-710100" in reply.text
    assert "Klara og solen" in reply.text
    assert "Pick-up no. 23" in reply.text


async def test_no_holds(bot: BotHarness) -> None:
    await bot.connect(7, OLE)
    [reply] = await command(bot, 7, "/holds")
    assert reply.text == "📌 Du har ingen reserveringer lige nu."
    assert reply.buttons == []


async def test_cancel_a_hold_after_confirmation(bot: BotHarness) -> None:
    await bot.connect(8, KAREN, language_code="en")
    [holds] = await command(bot, 8, "/holds")
    confirm = await bot.tap(8, holds, "✖ Cancel: Dune")
    assert confirm is not None
    assert confirm.text == (
        "Do you want to cancel your hold on Dune, for pick-up at Københavns Hovedbibliotek?"
    )
    # The confirming button comes first.
    assert buttons(confirm) == ["✖ Yes, cancel it", "No, keep it"]
    assert len(bot.sandbox.patron_data(KAREN).orders) == 4
    done = await bot.tap(8, confirm, "✖ Yes, cancel it")
    assert done is not None
    assert done.text == "✅ Your hold on Dune is cancelled."
    assert done.buttons == []
    titles = [order["title"] for order in bot.sandbox.patron_data(KAREN).orders]
    assert "Dune" not in titles and len(titles) == 3
    # The list's old button of the cancelled hold says so at the first tap, with no question.
    query = await bot.telegram.tap(
        8, holds.message_id, holds.button("✖ Cancel: Dune").callback_data
    )
    told = await wait_answer(bot, query)
    assert told["text"] == "That hold has already been dealt with. See /holds."


async def test_a_double_tap_on_a_holds_cancel_asks_once(bot: BotHarness) -> None:
    """Two taps of "Cancel" in a row are one double tap: one question, and the second tap is
    told where its answer is. The question works as ever."""
    await bot.connect(8, KAREN, language_code="en")
    [holds] = await command(bot, 8, "/holds")
    data = holds.button("✖ Cancel: Dune").callback_data
    before = len(bot.telegram.sent(8))
    first = await bot.telegram.tap(8, holds.message_id, data)
    second = await bot.telegram.tap(8, holds.message_id, data)
    assert (await wait_answer(bot, second)).get("text") == "Answered a moment ago – see below."
    assert not (await wait_answer(bot, first)).get("text")
    await bot.settled(1.0)
    question = "Do you want to cancel your hold on Dune, for pick-up at Københavns Hovedbibliotek?"
    [asked] = bot.telegram.sent(8)[before:]
    assert asked.text == question
    kept = await bot.tap(8, asked, "No, keep it")
    assert kept is not None and kept.text == "👍 Your hold on Dune is kept."


async def test_two_holds_of_one_title_are_told_apart_by_branch(bot: BotHarness) -> None:
    await bot.connect(12, KAREN, language_code="en")
    orders = bot.sandbox.patron_data(KAREN).orders
    second = {**orders[3], "orderId": "4199999", "pickUpAgency": "DK-710104"}
    orders.append(second)
    [holds] = await command(bot, 12, "/holds")
    # The buttons name the branch, so the patron knows which one each cancels.
    dune = [label for label in buttons(holds) if "Dune" in label]
    assert sorted(dune) == [
        "✖ Cancel: Dune (Københavns Hovedbibliotek)",
        "✖ Cancel: Dune (Vesterbro Bibliotek)",
    ]
    asked = []
    for label in dune:
        answer = await bot.tap(12, holds, label)
        assert answer is not None
        asked.append((label, answer.text))
    assert sorted(asked) == [
        (
            "✖ Cancel: Dune (Københavns Hovedbibliotek)",
            "Do you want to cancel your hold on Dune, for pick-up at Københavns Hovedbibliotek?",
        ),
        (
            "✖ Cancel: Dune (Vesterbro Bibliotek)",
            "Do you want to cancel your hold on Dune, for pick-up at Vesterbro Bibliotek?",
        ),
    ]


async def test_keep_a_hold(bot: BotHarness) -> None:
    await bot.connect(9, KAREN)
    [holds] = await command(bot, 9, "/holds")
    confirm = await bot.tap(9, holds, "✖ Annullér: Kvinden i buret")
    assert confirm is not None
    kept = await bot.tap(9, confirm, "Nej, behold den")
    assert kept is not None
    assert kept.text == "👍 Du beholder din reservering af Kvinden i buret."
    assert len(bot.sandbox.patron_data(KAREN).orders) == 4
    assert bot.sandbox.calls["platform GET /v3/order"] == 0


async def test_cancelling_a_hold_that_is_gone_says_why(bot: BotHarness) -> None:
    await bot.connect(10, KAREN)
    [holds] = await command(bot, 10, "/holds")
    confirm = await bot.tap(10, holds, "✖ Annullér: Dune")
    assert confirm is not None
    bot.sandbox.patron_data(KAREN).orders.clear()
    refused = await bot.tap(10, confirm, "✖ Ja, annullér den")
    assert refused is not None
    assert refused.text.startswith("Reserveringen af Dune findes ikke længere")


# --- /debt ----------------------------------------------------------------------------------


async def test_debt_lists_items_and_total(bot: BotHarness) -> None:
    await bot.connect(11, KAREN)
    [reply] = await command(bot, 11, "/debt")
    assert "Det skylder du biblioteket" in reply.text
    assert "Rødt & sort <2. udgave>" in reply.text
    # Babel's currency format keeps amount and unit together with a no-break space.
    assert "45,50\u00a0kr." in reply.text and "20,00\u00a0kr." in reply.text
    assert "I alt: 65,50\u00a0kr." in reply.text


async def test_debt_in_english(bot: BotHarness) -> None:
    await bot.connect(12, KAREN, language_code="en")
    [reply] = await command(bot, 12, "/debt")
    assert "What you owe the library" in reply.text
    assert "DKK\u00a045.50" in reply.text
    assert "Total: DKK\u00a065.50" in reply.text


async def test_zero_debt_means_owing_nothing(bot: BotHarness) -> None:
    await bot.connect(13, OLE)
    [reply] = await command(bot, 13, "/debt")
    assert reply.text == "💚 Du skylder ikke biblioteket noget."


async def test_jonas_owes_nothing_and_has_one_loan(bot: BotHarness) -> None:
    await bot.connect(14, JONAS, language_code="en")
    [debt] = await command(bot, 14, "/debt")
    assert debt.text == "💚 You owe the library nothing."
    [loans] = await command(bot, 14, "/loans")
    assert "Your loans (1)" in loans.text and "Lykke-Per" in loans.text
    assert "(in 3 days)" in loans.text


# --- not connected and failures -------------------------------------------------------------


async def test_not_connected_gets_the_login_button(bot: BotHarness) -> None:
    bot.add_chat(15, language_code="en")
    for text in ("/loans", "/holds", "/debt", "/renew", "/order 870970-basis:22677608"):
        [reply] = await command(bot, 15, text)
        assert "not logged in" in reply.text, text
        assert reply.buttons or "http" in reply.text, text
    assert sum(bot.sandbox.calls[f"platform GET /v3/{name}"] for name in ("user", "order")) == 0


async def test_platform_down(bot: BotHarness) -> None:
    await bot.connect(16, KAREN)
    bot.sandbox.faults.down.add("platform")
    for text in ("/loans", "/holds", "/debt"):
        [reply] = await command(bot, 16, text)
        assert "svarer ikke" in reply.text, text


async def test_platform_error_500_and_malformed(bot: BotHarness) -> None:
    await bot.connect(17, KAREN, language_code="en")
    bot.sandbox.faults.fail_next["/v3/user"] = [500]
    [reply] = await command(bot, 17, "/loans")
    assert "not answering" in reply.text
    bot.sandbox.faults.malformed.add("platform")
    [reply] = await command(bot, 17, "/holds")
    assert "not answering" in reply.text or "unexpected" in reply.text
    bot.sandbox.faults.malformed.clear()
    [reply] = await command(bot, 17, "/loans")
    assert "Your loans (7)" in reply.text


async def test_slow_platform_answers_within_the_time_limit(bot_factory: BotFactory) -> None:
    bot = await bot_factory(LIBRARY_TIMEOUT=1.0)
    await bot.connect(18, KAREN)
    bot.sandbox.faults.latency["platform"] = 4.0
    started = time.monotonic()
    [reply] = await command(bot, 18, "/holds", timeout=10)
    assert "svarer ikke" in reply.text
    assert time.monotonic() - started < 4.0


async def test_expired_token_leads_to_the_reconnect_prompt(bot: BotHarness) -> None:
    await bot.connect(19, KAREN)
    card = await bot.store.cards.get(19)
    assert card is not None
    bot.sandbox.expire_token(card.token)
    [reply] = await command(bot, 19, "/debt")
    assert "Log ind igen" in reply.text or "udløbet" in reply.text
    assert reply.buttons or "http" in reply.text
    assert await bot.store.cards.get(19) is None


def test_catalogue_keys_are_borrower_keys() -> None:
    # Placeholders and translations of every catalogue: tests/texts/test_messages.py.
    assert catalogue.MESSAGES
    for message in catalogue.MESSAGES:
        assert message.key.startswith("borrower."), message.key


async def test_user_authentication_failed_is_told_as_the_library_not_accepting_you(
    bot: BotHarness,
) -> None:
    await bot.connect(12, KAREN, language_code="en")
    bot.sandbox.refuse_patron(KAREN)  # /v3/user: 500 "User authentication failed", as recorded
    [reply] = await command(bot, 12, "/loans")
    assert reply.text.startswith("⚠️ Your library could not look you up as a patron right now")
    assert "(“User authentication failed”)" in reply.text
    assert await bot.store.cards.get(12) is not None  # not a reason to forget the login
    bot.sandbox.refuse_patron(KAREN, False)
    [holds] = await command(bot, 12, "/holds")
    # The recorded shapes: a hold "At reservation shelf" with its last day, an NCIP order id.
    assert "Ready for pick-up" in holds.text and "collect by" in holds.text
