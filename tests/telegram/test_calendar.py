"""/calendar: a private iCalendar feed of due dates and pick-up days that follows renewals."""

from __future__ import annotations

import datetime as dt
import logging

import pytest
from icalendar import Calendar

from bot.library.models import DEFAULT_TZ, parse_library_date
from sandbox.telegram.params import valid_button_url
from tests.fixtures.bot import BotHarness
from tests.fixtures.calendar import URL, events, feed_url
from tests.fixtures.chat import buttons, command
from tests.fixtures.patrons import JONAS, KAREN

USER_CALLS = "platform GET /v3/user"


def due_dates(bot: BotHarness, user_id: str) -> dict[str, dt.date]:
    found = {}
    for loan in bot.sandbox.patron_data(user_id).loans:
        due = parse_library_date(loan["dueDate"])
        if isinstance(due, dt.date):
            found[loan["title"]] = due
    return found


async def test_the_feed_holds_every_due_date_and_serves_without_platform_calls(
    bot: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    await bot.connect(70, KAREN, language_code="en")
    url = await feed_url(bot, 70)
    calls = bot.sandbox.calls[USER_CALLS]
    found = await events(bot, url)
    await events(bot, url)
    assert bot.sandbox.calls[USER_CALLS] == calls  # the feed is served from what was seen
    expected = {(due, f"📚 Due: {title}") for title, due in due_dates(bot, KAREN).items()}
    assert set(found.values()) >= expected
    assert len(found) == len(set(found))
    secret = url.rsplit("/", 1)[1].removesuffix(".ics")
    # The bot logs nothing of it (the test's own HTTP client logs its request line).
    logged = [
        r.getMessage() for r in caplog.records if not r.name.startswith(("httpx", "httpcore"))
    ]
    assert logged and not [line for line in logged if secret in line]
    assert await bot.store.calendar.open(secret) is not None
    # Only the hash is stored.
    assert secret not in repr(await bot.store.calendar.entries_of(70))


async def test_a_ready_hold_is_its_last_pick_up_day_in_danish(bot: BotHarness) -> None:
    await bot.connect(71, JONAS)
    found = await events(bot, await feed_url(bot, 71))
    summaries = [summary for _, summary in found.values()]
    assert any(summary.startswith("📦 Sidste dag at hente: ") for summary in summaries)
    assert any(summary.startswith("📚 Afleveres: ") for summary in summaries)


async def test_a_renewal_moves_the_event_instead_of_adding_one(bot: BotHarness) -> None:
    await bot.connect(72, KAREN, language_code="en")
    url = await feed_url(bot, 72)
    before = await events(bot, url)
    [(uid, (old_day, _))] = [
        (uid, event) for uid, event in before.items() if event[1] == "📚 Due: Den afrikanske farm"
    ]
    [listing] = await command(bot, 72, "/renew")
    label = next(text for text in buttons(listing) if "Den afrikanske farm" in text)
    assert await bot.tap(72, listing, label) is not None
    new_day = due_dates(bot, KAREN)["Den afrikanske farm"]
    assert new_day > old_day
    after = await events(bot, url)
    assert after[uid] == (new_day, "📚 Due: Den afrikanske farm")
    assert len(after) == len(before)


async def test_off_closes_the_address_and_new_replaces_it(bot: BotHarness) -> None:
    await bot.connect(73, KAREN, language_code="en")
    first = await feed_url(bot, 73)
    [again] = await command(bot, 73, "/calendar")
    assert "You already have a calendar address" in again.text
    second = await feed_url(bot, 73, "/calendar new")
    assert second != first
    assert (await bot.http.get(first)).status_code == 404
    assert (await bot.http.get(second)).status_code == 200
    [off] = await command(bot, 73, "/calendar off")
    assert off.text == "📅 The calendar address is closed. /calendar makes a new one."
    assert (await bot.http.get(second)).status_code == 404
    [none] = await command(bot, 73, "/calendar off")
    assert none.text == "You have no calendar address. /calendar makes one."


async def test_wrong_addresses_are_404(bot: BotHarness) -> None:
    base = f"{bot.info.web_url}/calendar"
    for name in ("x.ics", "A" * 32 + ".ics", "A" * 32, "../../etc/passwd.ics", "%00.ics"):
        assert (await bot.http.get(f"{base}/{name}")).status_code == 404


async def test_logout_and_forget_close_the_feed(bot: BotHarness) -> None:
    await bot.connect(74, KAREN, language_code="en")
    url = await feed_url(bot, 74)
    await command(bot, 74, "/logout")
    assert (await bot.http.get(url)).status_code == 404


async def test_calendar_asks_to_log_in_first(bot: BotHarness) -> None:
    bot.add_chat(75, language_code="en")
    [reply] = await command(bot, 75, "/calendar")
    assert "log in" in reply.text.lower()
    assert URL.search(reply.text) is None
    assert await bot.store.calendar.entries_of(75) is None


async def test_a_family_feed_names_each_card_and_follows_a_logout(bot: BotHarness) -> None:
    await bot.connect(79, KAREN, language_code="en")
    await bot.connect(79, JONAS, language_code="en")
    await bot.store.cards.set_label(79, 1, "Karen")
    await bot.store.cards.set_label(79, 2, "Jonas")
    url = await feed_url(bot, 79)
    found = set((await events(bot, url)).values())
    karen = {(due, f"Karen: 📚 Due: {title}") for title, due in due_dates(bot, KAREN).items()}
    jonas = {(due, f"Jonas: 📚 Due: {title}") for title, due in due_dates(bot, JONAS).items()}
    assert found >= karen | jonas
    assert any(summary.startswith("Jonas: 📦 Last day to pick up: ") for _, summary in found)
    # Jonas's card leaves: the feed keeps Karen's events, no longer named (one card).
    await bot.store.remove_card(79, 2, logout=True)
    left = set((await events(bot, url)).values())
    assert {(due, summary.removeprefix("Karen: ")) for due, summary in karen} <= left
    assert not any("Jonas" in summary or "Karen" in summary for _, summary in left)


async def test_the_feed_outlives_a_lost_login_until_the_patron_logs_in_again(
    bot: BotHarness,
) -> None:
    await bot.connect(81, KAREN, language_code="en")
    url = await feed_url(bot, 81)
    before = await events(bot, url)
    today = dt.datetime.now(DEFAULT_TZ).date()
    bot.sandbox.expire_all_tokens()
    await command(bot, 81, "/loans")  # the library refuses the login: the card is forgotten
    assert await bot.store.cards.get(81) is None
    during = await events(bot, url)
    # Every due date is still there, with one entry today asking to log in again.
    assert {uid: event for uid, event in during.items() if uid in before} == before
    [notice] = [event for uid, event in during.items() if uid not in before]
    assert notice == (today, "🔑 Log in again to keep this calendar current")
    # Logged in again, the same entries go on without the notice, before any command.
    await bot.connect(81, KAREN, language_code="en")
    assert await events(bot, url) == before


async def test_the_log_in_notice_speaks_danish(bot: BotHarness) -> None:
    await bot.connect(82, JONAS)
    url = await feed_url(bot, 82)
    bot.sandbox.expire_all_tokens()
    await command(bot, 82, "/loans")
    summaries = [summary for _, summary in (await events(bot, url)).values()]
    assert "🔑 Log ind igen, så kalenderen holdes opdateret" in summaries


async def test_logout_closes_a_feed_kept_for_a_lost_login(bot: BotHarness) -> None:
    await bot.connect(83, KAREN, language_code="en")
    url = await feed_url(bot, 83)
    bot.sandbox.expire_all_tokens()
    await command(bot, 83, "/loans")
    assert (await bot.http.get(url)).status_code == 200
    # The lapsed card is still the chat's: /logout ends it, and the feed with it.
    await command(bot, 83, "/logout")
    assert await bot.store.cards.of_chat(83, lapsed=True) == []
    assert (await bot.http.get(url)).status_code == 404


async def test_pick_up_events_carry_the_branch_and_the_pick_up_number(bot: BotHarness) -> None:
    await bot.connect(84, JONAS, language_code="en")
    url = await feed_url(bot, 84)
    response = await bot.http.get(url)
    feed = Calendar.from_ical(response.content)
    ready = [
        hold
        for hold in bot.sandbox.patron_data(JONAS).orders
        if hold.get("pickUpId") and hold.get("pickUpExpiryDate")
    ]
    assert ready
    pick_ups = [
        event
        for event in feed.walk("VEVENT")
        if str(event["summary"]).startswith("📦 Last day to pick up: ")
    ]
    assert len(pick_ups) == len(ready)
    for event in pick_ups:
        hold = next(h for h in ready if str(event["summary"]).endswith(h["title"]))
        description = str(event["description"])
        assert f"Pick-up no. {hold['pickUpId']}" in description
        assert "Pick up at " in description
        assert str(event["location"]) and not str(event["location"]).startswith("DK-")


async def test_subscribing_is_a_webcal_link_and_an_https_button(bot: BotHarness) -> None:
    """The Bot API takes only HTTP(S) and tg:// URLs in buttons (the stand-in refuses others
    as Telegram does), so `webcal://` is a link in the text and the button opens the feed."""
    await bot.connect(85, KAREN, language_code="en")
    [reply] = await command(bot, 85, "/calendar")
    url = URL.search(reply.text)
    assert url is not None
    links = [entity.url for entity in reply.entities if entity.type == "text_link"]
    assert links == ["webcal://" + url.group(1).removeprefix("http://")]
    assert f"Subscribe in your calendar app: {links[0]}" in reply.text  # also as plain text
    [[button]] = reply.buttons
    assert (button.text, button.url) == ("📅 Open the calendar address", url.group(1))
    assert (await bot.http.get(button.url)).status_code == 200


def test_the_bot_api_stand_in_refuses_a_webcal_button() -> None:
    """Why the subscribe button is https: `url` buttons are "HTTP or tg:// URL" in the Bot API."""
    assert not valid_button_url("webcal://bot.example.org/calendar/x.ics")
    assert valid_button_url("https://bot.example.org/calendar/x.ics")
