"""A family in one chat, in a real browser: three logins through the sandbox's login page (a
parent and a child at Københavns Biblioteker, a child at Frederiksberg Bibliotek), then the
cards by first name, a section per card, and one calendar feed for all of them."""

from __future__ import annotations

import re

import pytest
from icalendar import Calendar
from playwright.async_api import Browser, expect

from sandbox.demo import SWEEP_ACTION, Demo
from tests.e2e.conftest import FAMILY, ChatPage, add_card, log_in_at_a_library, new_context
from tests.fixtures.patrons import (
    ANNA,
    BABETTE,
    COPENHAGEN,
    EMIL,
    FREDERIKSBERG,
    SOFIE,
)

pytestmark = pytest.mark.browser


async def bodies_since(chat: ChatPage, before: int) -> str:
    """The HTML of every bot message from the `before`-th on, as the chat page shows it (the
    headings are checked with their markup)."""
    html = await chat.replies.evaluate_all(
        "(wraps, n) => wraps.slice(n).map(w => w.querySelector('.body').innerHTML).join('\\n')",
        before,
    )
    assert isinstance(html, str)
    return html


async def test_a_child_logs_in_at_another_library(demo: Demo, browser: Browser) -> None:
    """Emil's card is at Frederiksberg Bibliotek: the login page refuses him at Københavns
    Biblioteker (the library chosen first), and takes him once his own library is chosen."""
    context = await new_context(browser, "da-DK")
    chat = ChatPage(await context.new_page(), demo.chat_url)
    page = chat.page
    await chat.open()
    await chat.send("/start")
    prompt = await chat.send("/login")
    before = await chat.count()
    await prompt.locator(".kb button.url", has_text="Log ind med dit bibliotek").click()
    await expect(page.locator(".hint")).to_contain_text("Frederiksberg Bibliotek (714700)")
    await log_in_at_a_library(page, EMIL, COPENHAGEN)
    await expect(page.locator(".error")).to_contain_text("Forkert låner-id eller pinkode")
    await log_in_at_a_library(page, EMIL, FREDERIKSBERG)
    await expect(page.locator("h1")).to_have_text("Næsten færdig")
    await page.get_by_role("link", name="Tilbage til Telegram").click()
    connected = await chat.wait_for_reply(before)
    await expect(connected).to_contain_text("✅")
    holds = await chat.send("/holds")
    await expect(holds).to_contain_text("Ringenes Herre")
    await expect(holds).to_contain_text("Bibliotek Sønderjyllands Allé")
    await context.close()


async def test_a_family_logs_in_three_cards_from_one_chat(demo: Demo, browser: Browser) -> None:
    context = await new_context(browser, "da-DK")
    chat = ChatPage(await context.new_page(), demo.chat_url)
    await chat.open()
    await chat.send("/start")
    for number, (user_id, agency, name) in enumerate(FAMILY, start=1):
        connected = await add_card(chat, user_id, agency)
        if number > 1:
            # A card added to a chat that has one is named by its holder's first name, from
            # /v3/user (the first login says "connected" as it always has).
            await expect(connected).to_contain_text(name)
    cards = await chat.send("/cards")
    for _, _, name in FAMILY:
        await expect(cards).to_contain_text(name)
    text = await cards.inner_text()
    assert text.index("Anna") < text.index("Sofie") < text.index("Emil")
    # Each card is placed at its own library (/v3/user agency), not where its holder lives.
    assert "Emil (Frederiksberg Bibliotek)" in text  # the library (agencyName), not a branch
    assert "Anna (Københavns Biblioteker)" in text
    # One "rename" and one "log out" button per card.
    await expect(cards.locator(".kb button", has_text="✏️")).to_have_count(3)
    await expect(cards.locator(".kb button", has_text="🚪")).to_have_count(3)
    # The same patron again refreshes that card: still three.
    refreshed = await add_card(chat, SOFIE, COPENHAGEN, mark="🔄")
    await expect(refreshed).to_contain_text("Sofie")
    again = await chat.send("/cards")
    await expect(again.locator(".kb button", has_text="🚪")).to_have_count(3)
    await chat.screenshot("family-cards")

    # /order asks which card first: one button per card.
    which = await chat.send(f"/order {BABETTE}")
    for _, _, name in FAMILY:
        await expect(which.locator(".kb button", has_text=name)).to_have_count(1)

    # The reminder sweep: one digest for the chat, a section per card with something due.
    before = await chat.count()
    await chat.page.get_by_role("button", name=SWEEP_ACTION).click()
    await expect(chat.page.locator("#toast")).to_contain_text("3 patrons, 1 message,")
    await chat.wait_for_reply(before)
    html = await bodies_since(chat, before)
    headings = [html.index(f"👤 <b>{name}</b>") for _, _, name in FAMILY]
    assert headings == sorted(headings), html
    assert headings[0] < html.index("Min geniale veninde") < headings[1]  # Anna's, tomorrow
    assert headings[1] < html.index("Pippi Langstrømpe") < headings[2]  # Sofie's, overdue
    assert headings[2] < html.index("Ringenes Herre")  # Emil's hold, ready
    await context.close()


async def test_a_family_sees_a_section_per_card(demo: Demo, browser: Browser) -> None:
    context = await new_context(browser, "da-DK")
    chat = ChatPage(await context.new_page(), demo.chat_url)
    page = chat.page
    await chat.open()
    await chat.send("/start")
    for user_id, agency, _ in FAMILY:
        await add_card(chat, user_id, agency)

    # /loans: one section per card, in card order, each headed "👤 <b>Name</b>", each with
    # that card's own loans; and a button per card to show only that one.
    await page.set_viewport_size({"width": 1200, "height": 1000})  # all three in the picture
    before = await chat.count()
    await chat.send("/loans")
    await expect(page.locator("#messages")).to_contain_text("Eventyr og historier")
    html = await bodies_since(chat, before)
    headings = [html.index(f"👤 <b>{name}</b>") for _, _, name in FAMILY]
    assert headings == sorted(headings), html
    anna, sofie, emil = headings
    assert anna < html.index("Min geniale veninde") < sofie
    assert sofie < html.index("Ternet Ninja") < emil
    assert emil < html.index("Eventyr og historier")
    last = chat.replies.last
    for _, _, name in FAMILY:
        await expect(last.locator(".kb button", has_text=name)).to_have_count(1)
    await chat.screenshot("family-loans")

    # /holds: Emil's ready hold waits at a Frederiksberg branch, named.
    before = await chat.count()
    await chat.send("/holds")
    await expect(page.locator("#messages")).to_contain_text("Bibliotek Sønderjyllands Allé")
    html = await bodies_since(chat, before)
    assert html.index("👤 <b>Emil</b>") < html.index("Ringenes Herre")

    # /debt: Anna's fee in her section.
    before = await chat.count()
    await chat.send("/debt")
    await expect(page.locator("#messages")).to_contain_text("30,00 kr.")
    html = await bodies_since(chat, before)
    fee = re.search(r"30,00(?:&nbsp;|\s)kr\.", html)  # Babel puts a no-break space there
    assert fee is not None, html
    assert html.index("👤 <b>Anna</b>") < fee.start() < html.index("👤 <b>Sofie</b>")

    # One calendar feed for the chat: every card's due dates and Emil's last pick-up day.
    made = await chat.send("/calendar")
    url = re.search(r"http\S+/calendar/\S+\.ics", await made.inner_text())
    assert url is not None
    feed = await page.request.get(url.group(0))
    assert feed.status == 200
    summaries = [
        str(event["summary"]) for event in Calendar.from_ical(await feed.body()).walk("VEVENT")
    ]
    # Each event is named by its card.
    for name, title in (
        ("Anna", "Min geniale veninde"),
        ("Sofie", "Pippi Langstrømpe"),
        ("Emil", "Eventyr og historier"),
    ):
        assert any(s.startswith(f"{name}: ") and title in s for s in summaries), summaries
    assert any(s.startswith("Emil: 📦") and "Ringenes Herre" in s for s in summaries), summaries
    assert len(summaries) == 9  # 8 loans and 1 ready hold: nothing of another chat
    [pick_up] = [
        event
        for event in Calendar.from_ical(await feed.body()).walk("VEVENT")
        if str(event["summary"]).startswith("Emil: 📦")
    ]
    assert str(pick_up["location"]) == "Bibliotek Sønderjyllands Allé"
    assert "Afhentningsnr. " in str(pick_up["description"])

    # Every login expires: the feed keeps all nine entries and asks, for each card, to log in
    # again, in Danish.
    await demo.expire_library_logins()
    before = await chat.count()
    await chat.send("/loans")
    lapsed = await chat.wait_for_reply(before)
    # One message names every card, each with its own login button; the cards stay.
    await expect(lapsed).to_contain_text("Bibliotekslogin for Anna, Sofie og Emil er udløbet")
    for name in ("Anna", "Sofie", "Emil"):
        await expect(
            lapsed.locator(".kb button.url", has_text=f"Log ind igen: {name}")
        ).to_have_count(1)
    assert await chat.count() == before + 1
    feed = await page.request.get(url.group(0))
    assert feed.status == 200
    after = [
        str(event["summary"]) for event in Calendar.from_ical(await feed.body()).walk("VEVENT")
    ]
    assert sorted(set(after) - set(summaries)) == [
        f"{name}: 🔑 Log ind igen, så kalenderen holdes opdateret"
        for name in ("Anna", "Emil", "Sofie")
    ]
    assert set(summaries) <= set(after)

    # Sofie logs in again with her button: her card is back as it was, by its name.
    before = await chat.count()
    await lapsed.locator(".kb button.url", has_text="Log ind igen: Sofie").click()
    await log_in_at_a_library(page, SOFIE, COPENHAGEN)
    await page.get_by_role("link", name="Tilbage til Telegram").click()
    back = await chat.wait_for_reply(before)
    await expect(back).to_contain_text("Sofies kort er tilbage")
    cards = await chat.send("/cards")
    await expect(cards).to_contain_text("1. 👤 Anna · 🔑 login udløbet")
    await expect(cards).to_contain_text("2. 👤 Sofie (Københavns Biblioteker)")
    await expect(cards).to_contain_text("3. 👤 Emil · 🔑 login udløbet")
    listing = await chat.send("/loans")
    await expect(listing).to_contain_text("Pippi Langstrømpe")
    await expect(listing).to_contain_text("Bibliotekslogin for Anna er udløbet")
    await expect(listing.locator(".kb button.url", has_text="Log ind igen")).to_have_count(2)
    await context.close()


async def test_a_family_orders_a_title_once_and_renews_honestly(
    demo: Demo, browser: Browser
) -> None:
    """Two confirmations of one title for Anna's card, both tapped: one order. Sofie's "renew"
    button says what it renews, the result gives the new date, and the list's summary moves."""
    context = await new_context(browser, "da-DK")
    chat = ChatPage(await context.new_page(), demo.chat_url)
    await chat.open()
    await chat.send("/start")
    for user_id, agency, _ in FAMILY[:2]:
        await add_card(chat, user_id, agency)

    confirmations = []
    for _ in range(2):
        which = await chat.send(f"/order {BABETTE}")
        await which.locator(".kb button", has_text="Anna").click()
        await expect(which).to_contain_text("Vil du bestille Babettes gæstebud")
        confirmations.append(which)
    old, new = confirmations
    before = await chat.count()
    await new.locator(".kb button", has_text="Ja, bestil").click()
    await expect(new).to_contain_text("er bestilt")
    await old.locator(".kb button", has_text="Ja, bestil").click()
    await expect(old).to_contain_text("allerede bestilt på dette kort gennem botten")
    assert await chat.count() == before  # both answered in their own messages
    # A fresh /order of it (the demo's orders show up in /v3/user only after a while) says it
    # is ordered already, and offers no "Ja".
    which = await chat.send(f"/order {BABETTE}")
    await which.locator(".kb button", has_text="Anna").click()
    await expect(which).to_contain_text("allerede bestilt på dette kort gennem botten")
    await expect(which.locator(".kb button")).to_have_count(0)

    # /renew: Sofie's section has an overdue loan; her button says what it renews.
    listing = await chat.send("/renew")
    await expect(listing).to_contain_text("1 overskredet")
    button = listing.locator(
        ".kb button", has_text="Forny dem, der skal afleveres inden for 3 dage: Sofie"
    )
    await expect(button).to_have_count(1)
    before = await chat.count()
    await button.click()
    result = await chat.wait_for_reply(before)
    await expect(result).to_contain_text("✅ 2 fornyet · ⛔ 1 afvist")
    await expect(result).to_contain_text("ny afleveringsdato")
    await expect(result).to_contain_text("Ternet Ninja, skal afleveres")
    # The list's summary is redrawn: nothing of Sofie's is overdue any more.
    await expect(listing).not_to_contain_text("overskredet")
    await chat.screenshot("family-renewed")
    await context.close()


async def test_a_stale_confirmation_orders_nothing_for_the_next_card(
    demo: Demo, browser: Browser
) -> None:
    """Sofie's confirmation "Ja, bestil", tapped after Sofie logged out and Emil's card got her
    number: the bot says the card is gone, and nobody's order is placed (SECURITY.md, 32)."""
    context = await new_context(browser, "da-DK")
    chat = ChatPage(await context.new_page(), demo.chat_url)
    await chat.open()
    await chat.send("/start")
    for user_id, agency, _ in FAMILY[:2]:
        await add_card(chat, user_id, agency)
    ask = await chat.send(f"/order {BABETTE}")
    await ask.locator(".kb button", has_text="Sofie").click()  # the question becomes Sofie's
    await expect(ask.locator(".kb button", has_text="Ja, bestil")).to_have_count(1)

    logout = await chat.send("/logout")
    await logout.locator(".kb button", has_text="Sofie").click()
    await expect(logout.locator(".kb button", has_text="Sofie")).to_have_count(0)
    await add_card(chat, EMIL, FREDERIKSBERG)
    cards = await chat.send("/cards")
    await expect(cards).to_contain_text("2. 👤 Emil")
    orders = {user: len(demo.sandbox.patron_data(user).orders) for user in (ANNA, SOFIE, EMIL)}

    before = await chat.count()
    await ask.locator(".kb button", has_text="Ja, bestil").click()
    gone = await chat.wait_for_reply(before)
    await expect(gone).to_contain_text("Det kort er ikke længere i denne chat.")
    await chat.screenshot("family-stale-button")
    assert {user: len(demo.sandbox.patron_data(user).orders) for user in orders} == orders
    await context.close()
