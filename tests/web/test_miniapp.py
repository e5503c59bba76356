"""The Mini App's API: Telegram's signed init data is the only way in, each user sees only
their own private chat's cards, and a renewal from the page is tried at most once."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from typing import Any

import httpx
import pytest
from sqlalchemy import text as sql

from bot.library.models import DEFAULT_TZ
from bot.texts.formatting import format_date
from bot.web.app import RENEW_ACTION, renew_id, verify_init_data
from bot.web.limits import PATRON_BURST, PATRON_IN_FLIGHT
from sandbox.library.data import has_cover
from storage.tables import CARD
from tests.fixtures.bot import BotFactory, BotHarness
from tests.fixtures.chat import buttons, command, wait_answer
from tests.fixtures.library import RENEW_CALLS
from tests.fixtures.patrons import JONAS, KAREN, SOFIE
from tests.fixtures.telegram import TEST_BOT_TOKEN, forged_tap, init_data

WORK_CALLS = "platform GET /v3/work"
WEBHOOK_SECRET = "miniapp-webhook-secret"
HEADER = "X-Telegram-Bot-Api-Secret-Token"


async def overview(bot: BotHarness, data: str | None) -> httpx.Response:
    headers = {} if data is None else {"Authorization": f"tma {data}"}
    return await bot.http.get(f"{bot.info.web_url}/app/api/overview", headers=headers)


async def renew(bot: BotHarness, user_id: int, button: str) -> dict[str, Any]:
    response = await bot.http.post(
        f"{bot.info.web_url}/app/api/renew",
        json={"id": button},
        headers={"Authorization": f"tma {init_data(user_id)}"},
    )
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def test_the_signature_is_telegrams() -> None:
    data = init_data(5)
    assert verify_init_data(data, TEST_BOT_TOKEN) == 5
    assert verify_init_data(data, "654321:other-token") is None
    forged = data.replace("%22id%22%3A5", "%22id%22%3A6")
    assert forged != data and verify_init_data(forged, TEST_BOT_TOKEN) is None
    assert verify_init_data(init_data(5, age=3601), TEST_BOT_TOKEN) is None
    assert verify_init_data(init_data(5, age=3500), TEST_BOT_TOKEN) == 5
    assert verify_init_data(f"{data}&hash=00", TEST_BOT_TOKEN) is None
    assert verify_init_data("", TEST_BOT_TOKEN) is None


async def test_the_family_overview_shows_the_cards_and_no_secret(bot: BotHarness) -> None:
    await bot.connect(80, JONAS, language_code="en")
    page = await bot.http.get(f"{bot.info.web_url}/app/")
    assert page.status_code == 200 and "miniapp.js" in page.text
    response = await overview(bot, init_data(80))
    assert response.status_code == 200
    data = response.json()
    assert data["lang"] == "en" and data["texts"]["loans"] == "Loans"
    [shown] = data["cards"]
    titles = {loan["title"] for loan in shown["loans"]}
    expected = {loan["title"] for loan in bot.sandbox.patron_data(JONAS).loans}
    assert titles == expected
    assert all(loan["renew"] for loan in shown["loans"])
    [ready] = [hold for hold in shown["holds"] if hold["ready"]]
    assert ready["status"] == "Ready for pick-up"
    branch, pickup = ready["lines"]
    assert branch.startswith("Pick up at ") and "DK-" not in branch  # a name, not an id
    assert pickup.startswith("Pick-up no. ") and "collect by " in pickup
    card = await bot.store.cards.get(80)
    assert card is not None
    for secret in (card.token, card.unique_id, card.card_id, JONAS):
        assert secret and secret not in response.text


async def test_danish_texts_for_a_danish_patron(bot: BotHarness) -> None:
    await bot.connect(84, JONAS)
    data = (await overview(bot, init_data(84))).json()
    assert data["lang"] == "da" and data["texts"]["renew"] == "Forny"


async def test_the_page_shows_each_cards_shelf_watches_as_the_chat_lists_them(
    bot: BotHarness,
) -> None:
    await bot.connect(85, JONAS, language_code="en")
    [where] = await command(bot, 85, "/where 870970-basis:27247164")
    await bot.tap(85, where, "🔔 Tell me when it is back at Nørrebro Bibliotek")
    await bot.telegram.wait_for(85, "🔔 I will tell you", after=where.message_id)
    [listed] = await command(bot, 85, "/watches")
    data = (await overview(bot, init_data(85))).json()
    assert data["texts"]["watches"] == "🔔 What you are waiting for"
    [card] = data["cards"]
    [line] = card["watches"]
    assert line.startswith("• Den afrikanske farm at Nørrebro Bibliotek, since ")
    assert line in listed.text


async def test_unsigned_forged_or_old_init_data_is_refused(bot: BotHarness) -> None:
    await bot.connect(81, JONAS, language_code="en")
    good = init_data(81)
    forged = good.replace("%22id%22%3A81", "%22id%22%3A82")
    for data in (
        None,
        "x",
        forged,
        init_data(81, age=2 * 3600),
        init_data(81, token="654321:another-bot"),
        good.rsplit("&hash=", 1)[0],
    ):
        response = await overview(bot, data)
        assert response.status_code == 401, data
        assert "Loan" not in response.text and "title" not in response.text
    headers = {"Authorization": f"Bearer {good}"}
    refused = await bot.http.get(f"{bot.info.web_url}/app/api/overview", headers=headers)
    assert refused.status_code == 401
    # The refusal tells the page what to say, in the language the init data claims.
    claimed = forged.replace("%7D", "%2C%22language_code%22%3A%22uk%22%7D", 1)
    response = await overview(bot, claimed)
    assert response.status_code == 401
    assert response.json()["text"] == "Цю сторінку треба відкривати з бота в Telegram."


async def test_a_patron_past_the_page_bound_is_told_to_wait_in_their_language(
    bot: BotHarness,
) -> None:
    await bot.connect(83, JONAS, language_code="da")
    await command(bot, 83, "/language uk")
    for _ in range(PATRON_BURST):
        await overview(bot, init_data(83))
    response = await overview(bot, init_data(83))
    assert response.status_code == 429 and response.headers["Retry-After"]
    assert response.json()["text"] == "Хвилинку – спробуйте ще раз за кілька секунд."


async def test_another_user_sees_nothing_of_the_chat_and_cannot_renew_its_loans(
    bot: BotHarness,
) -> None:
    await bot.connect(82, JONAS, language_code="en")
    [card] = (await overview(bot, init_data(82))).json()["cards"]
    button = card["loans"][0]["renew"]
    stranger = (await overview(bot, init_data(83))).json()
    assert stranger["cards"] == []
    calls = bot.sandbox.calls[RENEW_CALLS]
    answer = await renew(bot, 83, button)
    assert answer["result"] == "already"
    assert bot.sandbox.calls[RENEW_CALLS] == calls
    # The owner's id still works: the stranger's attempt did not spend it.
    assert (await renew(bot, 82, button))["result"] == "renewed"


async def test_a_renewal_is_tried_once_and_the_page_reads_the_new_date(bot: BotHarness) -> None:
    await bot.connect(85, JONAS, language_code="en")
    [card] = (await overview(bot, init_data(85))).json()["cards"]
    [loan] = [loan for loan in card["loans"] if loan["renew"]][:1]
    calls = bot.sandbox.calls[RENEW_CALLS]
    first = await renew(bot, 85, loan["renew"])
    assert first["result"] == "renewed" and first["due"] and first["due"] != loan["due"]
    # The chat's line for it, with the date as the chat writes it.
    today = dt.datetime.now(DEFAULT_TZ).date()
    new_date = format_date(dt.date.fromisoformat(first["due"]), "en", today=today)
    assert first["text"] == f"✅ {loan['title']}: new due date {new_date}"
    assert first["due_text"].startswith(f"due {new_date} (")
    replay = await renew(bot, 85, loan["renew"])
    assert replay["result"] == "already"
    assert replay["text"] == "Already renewed or tried today."  # the page has no /loans
    assert bot.sandbox.calls[RENEW_CALLS] == calls + 1
    [again] = (await overview(bot, init_data(85))).json()["cards"]
    moved = [row for row in again["loans"] if row["title"] == loan["title"]]
    assert moved[0]["due"] == first["due"]
    # Renewed today: no button a renewal today could use, as again it would give that date.
    assert moved[0]["renew"] is None and moved[0]["tried"] is True


async def test_a_refusal_is_remembered_and_offers_no_button_again(bot: BotHarness) -> None:
    await bot.connect(86, SOFIE, language_code="en")
    [card] = (await overview(bot, init_data(86))).json()["cards"]
    answers = [await renew(bot, 86, loan["renew"]) for loan in card["loans"] if loan["renew"]]
    refused = [answer for answer in answers if answer["result"] == "refused"]
    assert refused and refused[0]["refused"].startswith("⛔ can't be renewed: ")
    assert ": can't be renewed – " in refused[0]["text"]
    [again] = (await overview(bot, init_data(86))).json()["cards"]
    marked = [loan for loan in again["loans"] if loan["refused"]]
    assert len(marked) == len(refused)
    assert all(loan["renew"] is None for loan in marked)


async def test_covers_come_from_one_batched_work_call_and_are_cached(bot: BotHarness) -> None:
    await bot.connect(87, KAREN, language_code="en")
    before = bot.sandbox.calls[WORK_CALLS]
    [card] = (await overview(bot, init_data(87))).json()["cards"]
    assert bot.sandbox.calls[WORK_CALLS] == before + 1
    by_title = {loan["title"]: loan for loan in card["loans"] + card["holds"]}
    for loan in bot.sandbox.patron_data(KAREN).loans:
        shown = by_title[loan["title"]]
        if has_cover(loan["titleId"]):
            assert shown["cover"].startswith("http://") and shown["cover"].endswith(".svg")
        else:
            assert shown["cover"] is None  # the page draws a placeholder
    covered = [row["cover"] for row in by_title.values() if row["cover"]]
    assert covered
    image = await bot.http.get(covered[0])
    assert image.status_code == 200 and image.headers["content-type"].startswith("image/svg+xml")
    await overview(bot, init_data(87))
    assert bot.sandbox.calls[WORK_CALLS] == before + 1  # cached, never per loan per view


async def test_a_renewal_without_an_answer_is_told_honestly_and_not_retried(
    bot: BotHarness,
) -> None:
    await bot.connect(88, JONAS, language_code="en")
    [card] = (await overview(bot, init_data(88))).json()["cards"]
    [loan] = [loan for loan in card["loans"] if loan["renew"]][:1]
    calls = bot.sandbox.calls[RENEW_CALLS]
    renewals = sum(bot.sandbox.patron_data(JONAS).renewals.values())
    bot.sandbox.faults.lose_next.append("/v3/renew")  # renewed, and the answer lost
    answer = await renew(bot, 88, loan["renew"])
    assert answer["result"] == "unknown"
    assert answer["text"].startswith(f"⚠️ {loan['title']}: no answer from the library")
    assert bot.sandbox.calls[RENEW_CALLS] == calls + 1  # sent once, never again
    assert (await renew(bot, 88, loan["renew"]))["result"] == "already"
    assert bot.sandbox.calls[RENEW_CALLS] == calls + 1
    # The renewal went through: a new view shows the new date, and no renewal again today
    # (one more would spend a renewal for the same date).
    [again] = (await overview(bot, init_data(88))).json()["cards"]
    [shown] = [row for row in again["loans"] if row["title"] == loan["title"]]
    assert shown["due"] != loan["due"] and shown["renew"] is None and shown["tried"]
    assert sum(bot.sandbox.patron_data(JONAS).renewals.values()) == renewals + 1


async def test_start_offers_the_overview_once_a_card_is_connected(bot: BotHarness) -> None:
    bot.add_chat(89, language_code="uk")
    [before] = await command(bot, 89, "/start")
    assert "📚 Огляд" not in buttons(before)  # nothing to show yet
    await bot.connect(89, JONAS, language_code="uk")
    [after] = await command(bot, 89, "/start")
    [[overview_button]] = after.buttons
    assert overview_button.text == "📚 Огляд"
    assert overview_button.web_app == f"{bot.info.public_url}/app/"


async def test_each_patron_gets_the_overview_in_their_own_language(bot: BotHarness) -> None:
    # The button is made once per language and address: a second patron's must be their own.
    await bot.connect(87, KAREN, language_code="uk")
    await bot.connect(88, SOFIE, language_code="en")
    for chat_id, label in ((87, "📚 Огляд"), (88, "📚 Overview"), (87, "📚 Огляд")):
        [loans] = await command(bot, chat_id, "/loans")
        [*_, [overview_button]] = loans.buttons
        assert overview_button.text == label
        assert overview_button.web_app == f"{bot.info.public_url}/app/"


async def test_a_ready_hold_gives_its_branch_hours_today(bot: BotHarness) -> None:
    today = dt.datetime.now(DEFAULT_TZ).date()
    # The library changes today's hours: the page shows them, not the weekly free text.
    for pages in bot.sandbox.content.items["library"].values():
        for page in pages:
            page["opening_hours"] = [
                {**entry, "start_time": "12:00", "end_time": "15:30"}
                if entry["date"] == today.isoformat()
                else entry
                for entry in page["opening_hours"]
            ]
    await bot.connect(86, JONAS, language_code="en")
    [card] = (await overview(bot, init_data(86))).json()["cards"]
    [ready] = [hold for hold in card["holds"] if hold["ready"]]
    assert ready["hours"] == f"🕘 Open {format_date(today, 'en', today=today)}: 12:00–15:30"


async def test_bytes_that_are_not_utf8_or_not_the_shape_asked_for_get_a_400(
    bot: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    await bot.connect(90, JONAS, language_code="en")
    url = f"{bot.info.web_url}/app/api"
    with caplog.at_level(logging.WARNING):
        for header in (
            b"tma \xff\xfe\x80",
            b"\xc3(",
            b"tma " + init_data(90).encode()[:-1] + b"\xff",
        ):
            refused = await bot.http.get(f"{url}/overview", headers={"Authorization": header})
            assert refused.status_code == 400, header
            assert refused.json() == {"error": "malformed request"}
        signed = {"Authorization": f"tma {init_data(90)}", "Content-Type": "application/json"}
        for body in (
            b"\xff\xfe",
            b'{"id": "\\ud800"}',  # valid JSON, a lone surrogate: no stored id has one
            b"[" * 2000 + b"]" * 2000,  # deeper than the parser follows
            b'{"id": 5}',
            b'{"id": "' + b"A" * 65 + b'"}',
            b'["id"]',
        ):
            refused = await bot.http.post(f"{url}/renew", content=body, headers=signed)
            assert refused.status_code == 400, body[:20]
    assert bot.sandbox.calls[RENEW_CALLS] == 0
    problems = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not problems, [r.getMessage() for r in problems]


async def test_a_stored_button_acts_only_for_the_action_that_made_it(
    bot_factory: BotFactory,
) -> None:
    bot = await bot_factory(WEBHOOK_SECRET=WEBHOOK_SECRET)
    await bot.connect(91, JONAS, language_code="en")
    [card] = (await overview(bot, init_data(91))).json()["cards"]
    page_id = next(loan["renew"] for loan in card["loans"] if loan["renew"])
    [listing] = await command(bot, 91, "/renew")
    chat_data = next(
        button.callback_data
        for row in listing.buttons
        for button in row
        if str(button.callback_data).startswith("renew:")
    )
    chat_id = chat_data.partition(":")[2]
    # The page's id under the chat's prefixes, as a modified client could send it.
    webhook = f"{bot.info.web_url}/telegram/webhook"
    for number, data in enumerate(
        (f"renew:{page_id}", f"renewall:{page_id}", f"page:{page_id}:0"), start=910_000
    ):
        update = forged_tap(number, 91, data, listing.message_id)
        response = await bot.http.post(webhook, json=update, headers={HEADER: WEBHOOK_SECRET})
        assert response.status_code == 200
    # The chat's button sent to the page's endpoint.
    assert (await renew(bot, 91, chat_id))["result"] == "already"
    await bot.settled(1.0)
    assert bot.sandbox.calls[RENEW_CALLS] == 0
    # Neither was spent: each is still unused where it was given, and the page's renews.
    for button in (page_id, chat_id):
        stored = await bot.store.callbacks.callback(button, 91)
        assert stored is not None and stored.used_at is None
    assert (await renew(bot, 91, page_id))["result"] == "renewed"
    assert bot.sandbox.calls[RENEW_CALLS] == 1


def _chat_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line]


@pytest.mark.parametrize(
    ("lang", "heading"), [("da", "💰 Det skylder du biblioteket"), ("uk", "💰 Штрафи до сплати")]
)
async def test_the_page_says_what_the_chat_says_of_holds_and_fees(
    bot: BotHarness, lang: str, heading: str
) -> None:
    await bot.connect(92, KAREN, language_code=lang)
    data = (await overview(bot, init_data(92))).json()
    assert data["lang"] == lang
    [card] = data["cards"]
    [holds] = await command(bot, 92, "/holds")
    chat_holds = _chat_lines(holds.text)
    assert len(card["holds"]) >= 4
    for hold in card["holds"]:
        # The hold's status line in the chat ("creator · status") has the page's words.
        assert any(line.endswith(hold["status"]) for line in chat_holds), hold["status"]
        for line in hold["lines"]:
            assert line in chat_holds, line
    queued = [hold["status"] for hold in card["holds"] if "4" in hold["status"]]
    assert queued and all(status in holds.text for status in queued)
    debt = await command(bot, 92, "/debt")
    chat_debt = "\n".join(message.text for message in debt)
    assert data["texts"]["fees"] == heading == _chat_lines(chat_debt)[0]
    assert card["fees"]
    lines = _chat_lines(chat_debt)
    for fee in card["fees"]:
        # The chat's entry, line by line: what for, then when and how much.
        assert [fee["title"], fee["amount"]] == lines[lines.index(fee["title"]) :][:2], fee
        assert "DKK" not in fee["amount"] or lang != "da"
    assert card["fees_total"] in lines
    if lang == "da":
        assert any(fee["amount"].endswith("kr.") for fee in card["fees"])


async def _rows(bot: BotHarness, table: str) -> int:
    rows = await bot.store.database.run(
        lambda conn: conn.execute(sql(f"SELECT count(*) FROM {table}")).scalar()  # noqa: S608
    )
    return int(rows or 0)


async def _callback_rows(bot: BotHarness) -> int:
    return await _rows(bot, "callback_ref")


async def test_many_views_store_no_new_rows_and_hand_out_the_same_ids(bot: BotHarness) -> None:
    await bot.connect(93, KAREN, language_code="en")
    [first] = (await overview(bot, init_data(93))).json()["cards"]
    ids = [loan["renew"] for loan in first["loans"] if loan["renew"]]
    assert ids
    stored = await _callback_rows(bot)
    for _ in range(25):  # within the patron's burst (`bot.web.limits.PATRON_BURST`)
        [card] = (await overview(bot, init_data(93))).json()["cards"]
        assert [loan["renew"] for loan in card["loans"] if loan["renew"]] == ids
    assert await _callback_rows(bot) == stored


async def test_presses_from_many_views_and_twice_send_one_renewal(bot: BotHarness) -> None:
    await bot.connect(94, JONAS, language_code="en")
    seen: set[str] = set()
    for _ in range(12):
        [card] = (await overview(bot, init_data(94))).json()["cards"]
        seen.update(loan["renew"] for loan in card["loans"] if loan["renew"])
    [button] = seen  # Jonas has one renewable loan: every view named it alike
    calls = bot.sandbox.calls[RENEW_CALLS]
    answers = await asyncio.gather(*(renew(bot, 94, button) for _ in range(PATRON_IN_FLIGHT)))
    results = sorted(answer["result"] for answer in answers)
    assert results == ["already"] * (PATRON_IN_FLIGHT - 1) + ["renewed"]
    assert bot.sandbox.calls[RENEW_CALLS] == calls + 1
    again = await renew(bot, 94, button)
    assert again == {"result": "already", "text": "Already renewed or tried today."}
    assert bot.sandbox.calls[RENEW_CALLS] == calls + 1


async def test_an_answer_retires_the_ids_of_the_loan_from_older_views(bot: BotHarness) -> None:
    await bot.connect(95, SOFIE, language_code="en")
    [shown] = (await overview(bot, init_data(95))).json()["cards"]
    card = await bot.store.cards.get(95)
    assert card is not None and card.card_id
    loan = next(loan for loan in shown["loans"] if loan["renew"])
    [row] = [
        ref
        for ref in await bot.store.callbacks.callbacks_many([loan["renew"]], 95)
        if ref.id == loan["renew"]
    ]
    # An id a view gave before the loan's due date moved (as after a renewal in the chat).
    older = renew_id(95, card.card_id, row.payload["loan_id"], "2020-01-01")
    await bot.store.callbacks.keep_callbacks(
        95, [(older, RENEW_ACTION, {**row.payload, "due": "2020-01-01"})]
    )
    calls = bot.sandbox.calls[RENEW_CALLS]
    answer = await renew(bot, 95, loan["renew"])
    assert answer["result"] in {"renewed", "refused"}
    assert (await renew(bot, 95, older))["result"] == "already"
    assert bot.sandbox.calls[RENEW_CALLS] == calls + 1


async def test_a_renewal_finds_its_card_by_identity_and_checks_its_login(
    bot: BotHarness,
) -> None:
    await bot.connect(96, JONAS, language_code="en")
    [shown] = (await overview(bot, init_data(96))).json()["cards"]
    button = next(loan["renew"] for loan in shown["loans"] if loan["renew"])
    card = await bot.store.cards.get(96)
    assert card is not None
    calls = bot.sandbox.calls[RENEW_CALLS]
    # The login has run out: not sent, and the id is not spent.
    lapsed = CARD.update().where(CARD.c.chat_id == 96)
    await bot.store.database.run(
        lambda conn: conn.execute(
            lapsed.values(token_expires_at=dt.datetime(2020, 1, 1, tzinfo=dt.UTC))
        )
    )
    answer = await renew(bot, 96, button)
    assert answer["result"] == "login" and "/login" in answer["text"]
    assert bot.sandbox.calls[RENEW_CALLS] == calls
    # Another card now holds the number: the id names the old card's identity, not number 1.
    await bot.store.database.run(
        lambda conn: conn.execute(
            lapsed.values(token_expires_at=card.token_expires_at, card_id="someone-else")
        )
    )
    answer = await renew(bot, 96, button)
    assert answer["result"] == "gone"
    assert (
        answer["text"] == "That card is no longer in this chat. Send /cards to see the cards here."
    )
    assert bot.sandbox.calls[RENEW_CALLS] == calls


@pytest.mark.parametrize(
    ("status", "result", "again"), [(503, "failed", "renewed"), (502, "unknown", "already")]
)
async def test_a_failed_renewal_is_asked_again_only_when_it_was_turned_away_unread(
    bot: BotHarness, status: int, result: str, again: str
) -> None:
    """A 503 was not handled, so the page's id (one per loan and due date) renews when pressed
    again; a gateway's 502 may have gone through, so the page says so and the id stays spent,
    as a chat button does."""
    await bot.connect(97, JONAS, language_code="en")
    [card] = (await overview(bot, init_data(97))).json()["cards"]
    button, title = next((loan["renew"], loan["title"]) for loan in card["loans"] if loan["renew"])
    calls = bot.sandbox.calls[RENEW_CALLS]
    bot.sandbox.faults.fail_next["/v3/renew"] = [status]
    answer = await renew(bot, 97, button)
    assert answer == {
        "result": result,
        "text": "The library could not renew it now. Try again later."
        if result == "failed"
        else f"⚠️ {title}: no answer from the library, so it may or may not be renewed – check "
        "/loans, and renew it again only if its due date has not moved",
    }
    assert (await renew(bot, 97, button))["result"] == again
    assert bot.sandbox.calls[RENEW_CALLS] == calls + (2 if again == "renewed" else 1)


async def test_a_lapsed_card_is_shown_by_name_with_its_own_login(bot: BotHarness) -> None:
    """The page reads the cards by the chat's action: a card whose login lapsed stays, by its
    name, with a login link of its own, and is not asked of the library again."""
    await bot.connect(90, KAREN, language_code="en")
    await bot.connect(90, JONAS, language_code="en")
    jonas = await bot.store.cards.get(90, 2)
    assert jonas is not None and jonas.label == "Jonas"
    bot.sandbox.expire_token(jonas.token)
    data = (await overview(bot, init_data(90))).json()
    karen, lapsed = data["cards"]
    assert karen["error"] is None and karen["loans"]
    assert lapsed["name"] == "Jonas"
    assert lapsed["error"].startswith("🔑 Jonas's library login has lapsed.")
    # "Log in again" opens the chat, which names the lapsed card with its login button.
    assert lapsed["login"].endswith("?start=relogin")
    assert data["texts"]["login"] == "🔑 Log in again"
    # The due-date strip counts Karen's loans only, and says so when none is due.
    assert data["texts"]["nothing_due"] == "Karen: nothing is due in the next 30 days."
    kept = await bot.store.cards.get(90, 2, lapsed=True)
    assert kept is not None and kept.is_lapsed and kept.label == "Jonas"
    # Seen again: the same, from the store alone, and no login state made by a view.
    states = await _rows(bot, "login_state")
    again = (await overview(bot, init_data(90))).json()
    assert again["cards"][1]["name"] == "Jonas" and again["cards"][1]["login"]
    assert await _rows(bot, "login_state") == states
    [told] = await command(bot, 90, "/start relogin")
    assert "Jonas" in told.text and buttons(told) == ["🔑 Log in again: Jonas"]
    # A name reads as the patron wrote it, "<" and "&" too: on a button and on the page.
    assert await bot.store.cards.set_label(90, 2, "<b>Mor</b> & Far")
    [told] = await command(bot, 90, "/start relogin")
    assert buttons(told) == ["🔑 Log in again: <b>Mor</b> & Far"]
    again = (await overview(bot, init_data(90))).json()
    assert again["cards"][1]["name"] == "<b>Mor</b> & Far"


async def test_a_loan_renewed_on_one_face_is_not_renewed_again_from_the_other(
    bot: BotHarness,
) -> None:
    """The page's renewal retires the chat's button of that loan, and the chat's renewal the
    page's id: one loan, one renewal, whichever face it is asked from first."""
    await bot.connect(99, KAREN, language_code="en")
    [listing] = await command(bot, 99, "/renew")
    [card] = (await overview(bot, init_data(99))).json()["cards"]
    first, second = [loan for loan in card["loans"] if loan["renew"]][:2]

    def data(loan: dict[str, Any]) -> str:
        label = next(text for text in buttons(listing) if loan["title"].split()[0] in text)
        return str(listing.button(label).callback_data)

    assert (await renew(bot, 99, first["renew"]))["result"] == "renewed"
    calls = bot.sandbox.calls[RENEW_CALLS]
    query = await bot.telegram.tap(99, listing.message_id, data(first))
    told = await wait_answer(bot, query)
    assert (
        told["text"]
        == "That loan has already been renewed or tried today. /loans shows its due date."
    )
    assert bot.sandbox.calls[RENEW_CALLS] == calls
    # The other way round: the chat renews, and the page's id shown before is spent.
    await bot.tap(99, listing, next(t for t in buttons(listing) if second["title"].split()[0] in t))
    assert bot.sandbox.calls[RENEW_CALLS] == calls + 1
    assert (await renew(bot, 99, second["renew"]))["result"] == "already"
    assert bot.sandbox.calls[RENEW_CALLS] == calls + 1
