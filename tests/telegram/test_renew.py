"""/renew: a button per loan and "renew all", each result reported."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from sqlalchemy import text

from bot.actions.renewing import UNANSWERED_SETTLED
from bot.library.models import parse_library_date
from bot.texts.formatting import format_date
from tests.fixtures.bot import BotHarness
from tests.fixtures.cards import two_cards
from tests.fixtures.chat import buttons, command, wait_answer
from tests.fixtures.library import RENEW_CALLS, due_of
from tests.fixtures.patrons import KAREN, METTE, OLE
from tests.fixtures.storage import rows


async def test_renew_lists_every_loan_with_a_button(bot: BotHarness) -> None:
    await bot.connect(60, KAREN)
    [reply] = await command(bot, 60, "/renew")
    assert reply.text.startswith("🔄 Forny lån (7)")
    labels = buttons(reply)
    assert labels[0] == "🔄 Forny dem, der skal afleveres inden for 3 dage"
    assert len(labels) == 8
    # Soonest due first, with the due date; markup characters stay as they are in a button.
    assert re.fullmatch(r"🔄 Rødt & sort <2\. udgave> · \d{1,2}\. [a-zæøå]{3}\.", labels[1])
    assert labels[2].startswith("🔄 Snak_om_*stjerner* · ")
    assert all(len(b.callback_data or "") <= 64 for row in reply.buttons for b in row)


def message(bot: BotHarness, chat_id: int, message_id: int) -> Any:
    [found] = [m for m in bot.telegram.sent(chat_id) if m.message_id == message_id]
    return found


async def test_renew_one_loan_edits_its_button(bot: BotHarness) -> None:
    await bot.connect(61, KAREN, language_code="en")
    [listing] = await command(bot, 61, "/renew")
    before = due_of(bot.sandbox, KAREN, "Den afrikanske farm")
    label = next(text for text in buttons(listing) if "Den afrikanske farm" in text)
    sent = len(bot.telegram.sent(61))
    edited = await bot.tap(61, listing, label)
    assert edited is not None and edited.message_id == listing.message_id
    after = due_of(bot.sandbox, KAREN, "Den afrikanske farm")
    assert after > before
    expected = format_date(after, "en", today=bot.sandbox.today)
    # The keyboard is edited in place: ✅ and the new date; no new message.
    assert f"✅ Den afrikanske farm · {expected}" in buttons(edited)
    assert label not in buttons(edited)
    assert len(bot.telegram.sent(61)) == sent
    assert edited.text == listing.text
    # The same button a second time renews nothing more.
    data = message(bot, 61, listing.message_id).button(f"✅ Den afrikanske farm · {expected}")
    query = await bot.telegram.tap(61, listing.message_id, data.callback_data)
    answer = await wait_answer(bot, query)
    assert "already been renewed or tried today" in (answer.get("text") or "")
    assert bot.sandbox.calls[RENEW_CALLS] == 1


async def test_a_refused_renewal_is_marked_and_remembered(bot: BotHarness) -> None:
    await bot.connect(62, KAREN)
    [listing] = await command(bot, 62, "/renew")
    label = next(text for text in buttons(listing) if "Kongens fald" in text)
    edited = await bot.tap(62, listing, label)
    assert edited is not None
    assert "⛔ Kongens fald: reserveret af en anden låner" in buttons(edited)
    # Remembered: /renew marks it and offers no button for it; /loans marks it too.
    [again] = await command(bot, 62, "/renew")
    assert "⛔ Kongens fald: kan ikke fornyes – reserveret af en anden låner" in again.text
    assert not [text for text in buttons(again) if "Kongens fald" in text]
    [loans] = await command(bot, 62, "/loans")
    entry = next(part for part in loans.text.split("\n\n") if "Kongens fald" in part)
    assert entry.endswith("⛔ kan ikke fornyes: reserveret af en anden låner")
    # "Renew all" from the new list leaves it alone, saying why.
    result = await bot.tap(62, again, "🔄 Forny dem, der skal afleveres inden for 3 dage")
    assert result is not None
    assert bot.sandbox.calls[RENEW_CALLS] == 1 + 3  # Kongens fald is not tried again
    told = await bot.telegram.wait_for(62, "🔄 Fornyelse", after=again.message_id)
    lines = told.text.splitlines()
    # Counted with the refusals now: as many ⛔ in the count as ⛔ lines, each with its date.
    assert lines[1] == "✅ 2 fornyet · ⛔ 2 afvist", lines
    assert len([line for line in lines if line.startswith("⛔ ")]) == 2
    kongens = format_date(due_of(bot.sandbox, KAREN, "Kongens fald"), "da", today=bot.sandbox.today)
    assert (
        f"⛔ Kongens fald, skal afleveres {kongens}: kan ikke fornyes – reserveret af en anden "
        "låner" in lines
    )


async def test_renew_all_renews_the_loans_due_soon_and_says_what_it_left(
    bot: BotHarness,
) -> None:
    await bot.connect(63, KAREN, language_code="en")
    [listing] = await command(bot, 63, "/renew")
    await bot.tap(63, listing, "🔄 Renew those due within 3 days")
    result = await bot.telegram.wait_for(63, "🔄 Renewal", after=listing.message_id)
    lines = result.text.splitlines()
    # Within the largest reminder threshold (3 days by default): four loans, tried once each.
    assert bot.sandbox.calls[RENEW_CALLS] == 4
    # The counts first, then each renewed loan with its new due date, then the refusals with
    # the dates they are still due.
    today = bot.sandbox.today
    assert lines[1] == "✅ 2 renewed · ⛔ 2 refused"
    new_date = format_date(due_of(bot.sandbox, KAREN, "Rødt & sort <2. udgave>"), "en", today=today)
    assert lines[2:4] == [
        f"✅ Rødt & sort <2. udgave>: new due date {new_date}",
        f"✅ Æbler, øl og ålegræs: new due date {new_date}",
    ]
    kongens = format_date(due_of(bot.sandbox, KAREN, "Kongens fald"), "en", today=today)
    assert f"⛔ Kongens fald, due {kongens}: can't be renewed – reserved by another patron" in lines
    snak = format_date(due_of(bot.sandbox, KAREN, "Snak_om_*stjerner*"), "en", today=today)
    assert any(
        line.startswith(f"⛔ Snak_om_*stjerner*, due {snak}: can't be renewed – it has been")
        for line in lines
    )
    assert lines[-1].startswith("⏭ 3 loans were left alone, as they are not due within 3 days: ")
    assert "Den afrikanske farm" in lines[-1]
    # The loans' buttons in the list are edited in place.
    labels = buttons(message(bot, 63, listing.message_id))
    assert any(text.startswith("✅ Rødt & sort") for text in labels)
    assert any(text.startswith("⛔ Kongens fald") for text in labels)
    assert any(text.startswith("🔄 Den afrikanske farm") for text in labels)


async def test_each_loan_is_tried_at_most_once_per_message(bot: BotHarness) -> None:
    await bot.connect(68, KAREN, language_code="en")
    [older] = await command(bot, 68, "/renew")
    [listing] = await command(bot, 68, "/renew")
    label = next(text for text in buttons(listing) if "Æbler" in text)
    # The answer is lost: the outcome is unknown, so the loan must not be renewed again.
    bot.sandbox.faults.fail_next["/v3/renew"] = [502]
    await bot.tap(68, listing, label)
    await bot.telegram.wait_for(68, "may or may not be renewed", after=listing.message_id)
    assert bot.sandbox.calls[RENEW_CALLS] == 1
    await bot.tap(68, listing, "🔄 Renew those due within 3 days")
    result = await bot.telegram.wait_for(68, "🔄 Renewal", after=listing.message_id)
    # The single tap's loan is not renewed again by "renew all" of the same message.
    assert "↩️ Æbler, øl og ålegræs: already tried from this message" in result.text
    assert bot.sandbox.calls[RENEW_CALLS] == 1 + 3
    # An older message's "renew all" renews nothing again: the renewed loan is not due soon
    # any more, the refused ones are remembered, and the loan whose outcome was unknown may
    # still be under way at the library (`UNANSWERED_SETTLED`).
    await bot.tap(68, older, "🔄 Renew those due within 3 days")
    later = await bot.telegram.wait_for(
        68, lambda m: m.text.startswith("🔄 Renewal") and m.message_id > result.message_id
    )
    assert bot.sandbox.calls[RENEW_CALLS] == 1 + 3
    assert "Æbler, øl og ålegræs" in later.text and "✅ 1 renewed" not in later.text
    assert "can't be renewed – reserved by another patron" in later.text
    # Once it has surely settled, and a read shows its old due date, it is tried once more.
    await settle_unanswered(bot, 68)
    [fresh] = await command(bot, 68, "/renew")
    await bot.tap(68, fresh, "🔄 Renew those due within 3 days")
    last = await bot.telegram.wait_for(
        68, lambda m: m.text.startswith("🔄 Renewal") and m.message_id > fresh.message_id
    )
    assert bot.sandbox.calls[RENEW_CALLS] == 1 + 3 + 1
    assert [line for line in last.text.splitlines() if line.startswith("✅ Æbler")]


def current(bot: BotHarness, chat_id: int, listing: Any) -> Any:
    return message(bot, chat_id, listing.message_id)


async def test_renew_sixty_five_loans_pages_and_renews_each_once(bot: BotHarness) -> None:
    await bot.connect(64, METTE)
    await command(bot, 64, "/reminders 30")  # the renewal window follows the largest threshold
    [listing] = await command(bot, 64, "/renew")
    assert listing.text.startswith("🔄 Forny lån (65)")
    today = bot.sandbox.today
    dues = [parse_library_date(loan["dueDate"]) for loan in bot.sandbox.patron_data(METTE).loans]
    assert all(isinstance(due, dt.date) for due in dues)
    overdue = sum((due - today).days < 0 for due in dues)  # type: ignore[operator]
    soon = sum(0 <= (due - today).days <= 30 for due in dues)  # type: ignore[operator]
    assert 30 < overdue + soon < 65
    # A summary, and one page of ten loans: "renew all" on top, ◀ n/7 ▶ below.
    assert listing.text.splitlines()[2] == (
        f"{overdue} overskredet · {soon} skal afleveres inden for 30 dage"
    )
    labels = buttons(listing)
    assert labels[0] == "🔄 Forny dem, der skal afleveres inden for 30 dage"
    assert labels[-2:] == ["1/7", "▶"]
    assert len(labels) == 1 + 10 + 2
    assert all(len(b.callback_data.encode()) <= 64 for row in listing.buttons for b in row)
    # Page 2 is the same message, edited; one of its loans is renewed from there.
    page2 = await bot.tap(64, listing, "▶")
    assert page2 is not None and page2.message_id == listing.message_id
    assert buttons(page2)[-3:] == ["◀", "2/7", "▶"]
    loan = buttons(page2)[1]
    assert loan not in labels
    await bot.tap(64, page2, loan)
    assert bot.sandbox.calls[RENEW_CALLS] == 1
    # Paging shows the loans fresh (the renewed one has moved on), each with the same button:
    # the renewed loan's is marked as tried.
    title = loan.removeprefix("🔄 ").split(" · ")[0]
    shown = await bot.tap(64, current(bot, 64, listing), "◀")
    found: list[str] = []
    while True:
        assert shown is not None and shown.message_id == listing.message_id
        found += [text for text in buttons(shown) if title in text]
        if "▶" not in buttons(shown):
            break
        shown = await bot.tap(64, shown, "▶")
    assert len([text for text in found if text.startswith("↩️ ")]) == 1, found
    again = current(bot, 64, listing)
    before = len(bot.telegram.sent(64))
    await bot.tap(64, again, "🔄 Forny dem, der skal afleveres inden for 30 dage", timeout=10)
    result = await bot.telegram.wait_for(64, "🔄 Fornyelse", after=listing.message_id, timeout=20)
    # Every loan due within the window once, the one renewed from page 2 not again.
    assert bot.sandbox.calls[RENEW_CALLS] == overdue + soon
    assert f"↩️ {title}: allerede forsøgt fra denne besked" in result.text
    # The counts, then the renewed loans by their new date: one line for many, one message.
    renewed = overdue + soon - 1
    assert result.text.splitlines()[1].startswith(f"✅ {renewed} fornyet")
    new_date = format_date(today + dt.timedelta(days=30), "da", today=today)
    # One loan was due as far out as a renewal reaches: it keeps its date, and says so.
    assert f"✅ {renewed - 1} lån har fået ny afleveringsdato {new_date}: " in result.text
    assert f": fornyet, men skal stadig afleveres {new_date} – " in result.text
    assert len([m for m in bot.telegram.sent(64)[before:] if "Fornyelse" in m.text]) == 1
    assert all(len(m.text) <= 4096 for m in bot.telegram.sent(64))
    assert f"⏭ {65 - overdue - soon} lån blev ikke fornyet" in result.text


async def test_nothing_to_renew(bot: BotHarness) -> None:
    await bot.connect(65, OLE)
    [reply] = await command(bot, 65, "/renew")
    assert reply.text == "🔄 Du har ingen lån at forny."
    assert reply.buttons == []


async def test_renewing_while_the_platform_is_down_keeps_the_list(bot: BotHarness) -> None:
    await bot.connect(66, KAREN)
    [listing] = await command(bot, 66, "/renew")
    bot.sandbox.faults.down.add("platform")
    result = await bot.tap(66, listing, "🔄 Forny dem, der skal afleveres inden for 3 dage")
    assert result is not None and "svarer ikke" in result.text
    [again] = [m for m in bot.telegram.sent(66) if m.message_id == listing.message_id]
    assert again.text == listing.text


async def test_renewing_with_an_expired_token(bot: BotHarness) -> None:
    await bot.connect(67, KAREN, language_code="en")
    [listing] = await command(bot, 67, "/renew")
    card = await bot.store.cards.get(67)
    assert card is not None
    bot.sandbox.expire_token(card.token)
    label = next(text for text in buttons(listing) if "Lykke" in text or "farm" in text)
    await bot.tap(67, listing, label)
    await bot.telegram.wait_for(67, "Log in again", after=listing.message_id)
    assert await bot.store.cards.get(67) is None


async def test_a_login_refused_partway_keeps_what_was_renewed(bot: BotHarness) -> None:
    """ "Renew all" whose token the library refuses after renewing other loans: the renewals
    done are told and kept (not renewed again today), the refused loan says to log in again,
    and the card lapses with its login button."""
    await bot.connect(68, KAREN, language_code="en")
    [listing] = await command(bot, 68, "/renew")
    bot.sandbox.faults.fail_next["/v3/renew"] = [401]
    await bot.tap(68, listing, "🔄 Renew those due within 3 days")
    told = await bot.telegram.wait_for(68, "🔄 Renewal", after=listing.message_id)
    assert bot.sandbox.calls[RENEW_CALLS] == 4
    # Which loan meets the refused token depends on the order the calls arrive in.
    counts = re.fullmatch(
        r"✅ (\d) renewed · ⛔ (\d) refused · ⚠️ 1 not renewed now", told.text.splitlines()[1]
    )
    assert counts is not None, told.text
    assert int(counts[1]) + int(counts[2]) == 3
    assert "not renewed – the login expired partway through; log in again to renew it" in told.text
    login = await bot.telegram.wait_for(68, "Log in again", after=told.message_id)
    assert login.message_id > told.message_id
    assert await bot.store.cards.get(68) is None  # lapsed: no token to use
    renewed = await bot.store.notices.renewed(68, bot.sandbox.today, 1)
    assert len(renewed) == int(counts[1])  # claimed for today: not renewed again after a login


@pytest.mark.parametrize(("fault", "done"), [("drop_next", False), ("lose_next", True)])
async def test_a_renewal_whose_answer_was_lost_is_sent_again_only_if_surely_not_done(
    bot: BotHarness, fault: str, done: bool
) -> None:
    """No answer to a loan's renewal: it may have been done, or still be under way at the
    library. Until `UNANSWERED_SETTLED` has passed, a new list's button sends nothing; after
    it, only a read showing the due date it was sent at (the library never handled it) lets
    it go again; once the date has moved, the tap says the loan was tried."""
    await bot.connect(73, KAREN, language_code="en")
    [listing] = await command(bot, 73, "/renew")
    label = next(text for text in buttons(listing) if "Den afrikanske farm" in text)
    calls = bot.sandbox.calls[RENEW_CALLS]
    renewals = sum(bot.sandbox.patron_data(KAREN).renewals.values())
    getattr(bot.sandbox.faults, fault).append("/v3/renew")  # dropped unread, or done and lost
    await bot.tap(73, listing, label)
    await bot.telegram.wait_for(73, "no answer from the library", after=listing.message_id)
    tried = "That loan has already been renewed or tried today. /loans shows its due date."
    [soon] = await command(bot, 73, "/renew")
    label = next(text for text in buttons(soon) if "Den afrikanske farm" in text)
    await bot.tap(73, soon, label)
    told = await bot.telegram.wait_for(73, "already been renewed or tried", after=soon.message_id)
    assert told.text == tried  # too soon, whatever a read would show
    assert bot.sandbox.calls[RENEW_CALLS] == calls + 1
    await settle_unanswered(bot, 73)
    [later] = await command(bot, 73, "/renew")
    label = next(text for text in buttons(later) if "Den afrikanske farm" in text)
    if done:
        await bot.tap(73, later, label)
        told = await bot.telegram.wait_for(
            73, "already been renewed or tried", after=later.message_id
        )
        assert told.text == tried
        assert bot.sandbox.calls[RENEW_CALLS] == calls + 1
    else:
        edited = await bot.tap(73, later, label)
        assert edited is not None
        assert any(text.startswith("✅ Den afrikanske farm") for text in buttons(edited))
        assert bot.sandbox.calls[RENEW_CALLS] == calls + 2
    assert sum(bot.sandbox.patron_data(KAREN).renewals.values()) == renewals + 1


async def settle_unanswered(bot: BotHarness, chat_id: int) -> None:
    """Move the chat's lost renewals back past `UNANSWERED_SETTLED`, as if that much time had
    passed (the moment is the claim's last 12 characters, `YYYYMMDDHHMM` in UTC)."""
    earlier = dt.datetime.now(dt.UTC) - UNANSWERED_SETTLED - dt.timedelta(minutes=1)
    found = await rows(
        bot.store, "SELECT item, value FROM notice_seen WHERE chat_id = :chat", chat=chat_id
    )
    for item, value in found:
        if str(item).startswith("renewed:") and "?" in str(value):
            moved = f"{str(value)[:-12]}{earlier:%Y%m%d%H%M}"
            await bot.store.database.run(
                lambda conn, item=item, moved=moved: conn.execute(
                    text("UPDATE notice_seen SET value = :v WHERE chat_id = :c AND item = :i"),
                    {"v": moved, "c": chat_id, "i": item},
                )
            )


async def test_the_summary_is_redrawn_after_a_renewal(bot: BotHarness) -> None:
    await bot.connect(69, KAREN, language_code="en")
    [listing] = await command(bot, 69, "/renew")
    assert listing.text.splitlines()[2] == "1 overdue · 3 due within 3 days"
    label = next(text for text in buttons(listing) if "Rødt & sort" in text)
    edited = await bot.tap(69, listing, label)
    assert edited is not None and edited.message_id == listing.message_id
    # The overdue loan is renewed: the summary says so, in the same message.
    assert edited.text.splitlines()[2] == "3 due within 3 days"
    await bot.tap(69, edited, "🔄 Renew those due within 3 days")
    await bot.telegram.wait_for(69, "🔄 Renewal", after=listing.message_id)
    redrawn = message(bot, 69, listing.message_id)
    assert redrawn.text.splitlines()[2] == "2 due within 3 days · ⛔ 2 can't be renewed"


async def test_a_request_the_platform_refuses_is_our_fault_not_the_librarys(
    bot: BotHarness, caplog: Any
) -> None:
    """A 400 of the platform's validation is the bot's fault: told so, logged as an error,
    counted, and never shown or remembered as the library's refusal."""
    await bot.connect(63, KAREN, language_code="en")
    [listing] = await command(bot, 63, "/renew")
    label = next(text for text in buttons(listing) if "Den afrikanske farm" in text)
    bot.sandbox.faults.fail_next["/v3/renew"] = [400]
    edited = await bot.tap(63, listing, label)
    assert edited is not None
    assert "⚠️ Den afrikanske farm: not renewed (our error)" in buttons(edited)
    told = await bot.telegram.wait_for(63, "⚠️", after=listing.message_id)
    assert told.text.startswith("⚠️ Den afrikanske farm: not renewed – the bot sent the library")
    assert "The fault is ours" in told.text and "bad request" not in told.text
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert any(
        "data platform /v3/renew refused the bot's request as malformed" in r.getMessage()
        for r in errors
    )
    metrics = (await bot.http.get(f"{bot.info.web_url}/metrics")).text
    assert re.search(r'errors_total\{endpoint="renew",kind="client_fault"\} 1\.0', metrics)
    # Not remembered as refused: the loan keeps its button, and renews on the next tap.
    [again] = await command(bot, 63, "/renew")
    assert "can't be renewed" not in again.text
    label = next(text for text in buttons(again) if "Den afrikanske farm" in text)
    renewed = await bot.tap(63, again, label)
    assert renewed is not None
    assert any(text.startswith("✅ Den afrikanske farm") for text in buttons(renewed))


async def test_a_loans_answer_retires_its_buttons_in_older_messages(bot: BotHarness) -> None:
    """Renewed from one /renew, the loan's button under an older /renew (or a digest) sends
    nothing more: the answer retires every chat button of that loan, as the Mini App's ids."""
    await bot.connect(71, KAREN, language_code="en")
    [older] = await command(bot, 71, "/renew")
    [newer] = await command(bot, 71, "/renew")
    label = next(text for text in buttons(newer) if "Den afrikanske farm" in text)
    edited = await bot.tap(71, newer, label)
    assert edited is not None
    assert any(text.startswith("✅ Den afrikanske farm") for text in buttons(edited))
    data = older.button(next(text for text in buttons(older) if "Den afrikanske farm" in text))
    query = await bot.telegram.tap(71, older.message_id, data.callback_data)
    answer = await wait_answer(bot, query)
    assert "already been renewed or tried today" in (answer.get("text") or "")
    assert bot.sandbox.calls[RENEW_CALLS] == 1


async def test_renew_all_retires_the_buttons_of_what_it_renewed_in_older_messages(
    bot: BotHarness,
) -> None:
    await bot.connect(72, KAREN, language_code="en")
    [older] = await command(bot, 72, "/renew")
    [newer] = await command(bot, 72, "/renew")
    await bot.tap(72, newer, "🔄 Renew those due within 3 days")
    result = await bot.telegram.wait_for(72, "🔄 Renewal", after=newer.message_id)
    assert "✅ Æbler, øl og ålegræs" in result.text
    calls = bot.sandbox.calls[RENEW_CALLS]
    data = older.button(next(text for text in buttons(older) if "Æbler" in text))
    query = await bot.telegram.tap(72, older.message_id, data.callback_data)
    answer = await wait_answer(bot, query)
    assert "already been renewed or tried today" in (answer.get("text") or "")
    assert bot.sandbox.calls[RENEW_CALLS] == calls


async def test_a_loan_the_library_turned_away_in_renew_all_can_be_tapped_again(
    bot: BotHarness,
) -> None:
    """A 503 says the renewal was not handled: the loan is told as not renewed (not as "may
    have been"), and its button, claimed on the way, is released to be tapped again."""
    await bot.connect(69, KAREN, language_code="en")
    [listing] = await command(bot, 69, "/renew")
    bot.sandbox.faults.fail_next["/v3/renew"] = [503]
    await bot.tap(69, listing, "🔄 Renew those due within 3 days")
    result = await bot.telegram.wait_for(69, "🔄 Renewal", after=listing.message_id)
    assert "⚠️ 1 not renewed now" in result.text.splitlines()[1]
    [line] = [line for line in result.text.splitlines() if "could not handle the request" in line]
    title = line.removeprefix("⚠️ ").split(": not renewed")[0]
    assert line == (
        f"⚠️ {title}: not renewed – the library could not handle the request just now; "
        "try again later"
    )
    calls = bot.sandbox.calls[RENEW_CALLS]
    again = message(bot, 69, listing.message_id)
    label = next(text for text in buttons(again) if "not renewed – try again" in text)
    assert title.startswith(label.removeprefix("⚠️ ").split(":")[0].rstrip("…"))
    await bot.tap(69, again, label)
    assert bot.sandbox.calls[RENEW_CALLS] == calls + 1


async def test_a_renewal_that_leaves_the_due_date_says_so(bot: BotHarness) -> None:
    """A renewal counts from today: a loan due as far out as a renewal reaches is renewed to
    the same date, and the button says it is still due then, not that it has a new date."""
    await bot.connect(79, KAREN, language_code="en")
    far = bot.sandbox.today + dt.timedelta(days=30)
    [loan] = [
        x for x in bot.sandbox.patron_data(KAREN).loans if x["title"] == "Den afrikanske farm"
    ]
    loan["dueDate"] = far.isoformat()
    [listing] = await command(bot, 79, "/renew")
    label = next(text for text in buttons(listing) if "Den afrikanske farm" in text)
    await bot.tap(79, listing, label)
    date = format_date(far, "en", today=bot.sandbox.today)
    assert f"✅ Den afrikanske farm · still {date}" in buttons(message(bot, 79, listing.message_id))


async def test_a_refused_loans_long_title_leaves_room_for_the_other_cards(
    bot: BotHarness,
) -> None:
    """A 4,000-character title refused renewal is shortened on /renew as in every list, so the
    page still has the other card's section, not a cut-off message."""
    await two_cards(bot, 74)
    loan = bot.sandbox.patron_data(KAREN).loans[0]
    loan["title"] = "Lang titel " * 380
    await bot.store.renewal_refusals.record_refusal(
        74, loan["loanId"], loan["dueDate"][:10], "Renewal Not Allowed", number=1
    )
    [reply] = await command(bot, 74, "/renew")
    assert "⛔ Lang titel" in reply.text and "Lang titel " * 40 not in reply.text
    assert "👤 Jonas" in reply.text and not reply.text.endswith("…")


async def test_no_renew_all_where_the_library_refused_every_loan_due(bot: BotHarness) -> None:
    """ "Renew those due within 3 days" is offered only while one of them can be renewed: with
    every such loan refused already, it would renew nothing."""
    await bot.connect(75, KAREN, language_code="en")
    today = bot.sandbox.today
    for loan in bot.sandbox.patron_data(KAREN).loans:
        due = parse_library_date(loan["dueDate"])
        if isinstance(due, dt.date) and due <= today + dt.timedelta(days=3):
            await bot.store.renewal_refusals.record_refusal(
                75, loan["loanId"], due.isoformat(), "Renewal Not Allowed", number=1
            )
    [listing] = await command(bot, 75, "/renew")
    assert "🔄 Renew those due within 3 days" not in buttons(listing)
    assert "⛔" in listing.text


async def test_a_loan_renewed_today_is_marked_tried_in_a_new_list(bot: BotHarness) -> None:
    """A loan renewed today (here from one /renew) is marked ↩️ in the next /renew, as the Mini
    App marks it: a tap would only say it was renewed already."""
    await bot.connect(76, KAREN, language_code="en")
    [listing] = await command(bot, 76, "/renew")
    label = next(text for text in buttons(listing) if "Den afrikanske farm" in text)
    edited = await bot.tap(76, listing, label)
    assert edited is not None
    assert any(text.startswith("✅ Den afrikanske farm") for text in buttons(edited))
    [again] = await command(bot, 76, "/renew")
    [shown] = [text for text in buttons(again) if "Den afrikanske farm" in text]
    assert shown.startswith("↩️ Den afrikanske farm")


async def test_a_familys_renewed_loan_keeps_its_cards_name_on_its_button(
    bot: BotHarness,
) -> None:
    await two_cards(bot, 77)
    [listing] = await command(bot, 77, "/renew")
    label = next(text for text in buttons(listing) if text.startswith("Jonas · 🔄 "))
    edited = await bot.tap(77, listing, label)
    assert edited is not None
    assert any(text.startswith("Jonas · ✅ ") for text in buttons(edited)), buttons(edited)
    # In one card's view the loans go without the name, and so does the new label.
    [view] = await command(bot, 77, "/renew Karen")
    mine = next(text for text in buttons(view) if text.startswith("🔄 ") and " · " in text)
    done = await bot.tap(77, view, mine)
    assert done is not None
    assert not any(text.startswith("Karen · ") for text in buttons(done)), buttons(done)
