"""The whole patron journey of the demo in a real browser: the chat page, the sandbox's login
page and the bot's own pages, asserting what the patron sees at each step."""

from __future__ import annotations

import re

import pytest
from icalendar import Calendar
from playwright.async_api import Browser, expect

from sandbox.demo import EXPIRE_ACTION, SWEEP_ACTION, Demo
from tests.e2e.conftest import ChatPage, log_in_at_library, new_context, screenshot
from tests.fixtures.patrons import BABETTE, JONAS, KAREN, PIN

pytestmark = pytest.mark.browser


async def test_danish_journey(demo: Demo, browser: Browser) -> None:
    context = await new_context(browser, "da-DK")
    chat = ChatPage(await context.new_page(), demo.chat_url)
    page = chat.page
    await chat.open()
    await expect(page.locator(".empty")).to_contain_text("Send /start")

    welcome = await chat.send("/start")
    await expect(welcome).to_contain_text("Jeg er din hjælper til folkebibliotekerne")

    prompt = await chat.send("/login")
    await expect(prompt).to_contain_text("Tryk på knappen for at logge ind")
    login_button = prompt.locator(".kb button.url", has_text="Log ind med dit bibliotek")
    await expect(login_button).to_be_visible()

    # The URL button leaves the chat page for the access service's login page.
    before = await chat.count()
    await login_button.click()
    await expect(page).to_have_url(re.compile(r"/oauth/authorize\?"))
    await expect(page.locator(".hint")).to_contain_text(KAREN)
    await screenshot(page, "02-library-login")
    async with page.expect_response(re.compile(r"/oauth/callback\?")) as callback:
        await log_in_at_library(page, KAREN, PIN)
    success = await callback.value
    assert success.status == 200
    await expect(page.locator("h1")).to_have_text("Næsten færdig")
    await expect(page.locator("main")).to_contain_text("Du er logget ind")
    back = page.get_by_role("link", name="Tilbage til Telegram")
    await expect(back).to_be_visible()
    await screenshot(page, "03-login-success")

    # "Back to Telegram" opens the same chat and sends the one-time /start payload.
    await back.click()
    await expect(page).to_have_url(re.compile(rf"^{re.escape(demo.chat_url)}"))
    await expect(page.locator(".msg-wrap.out").last).to_contain_text("/start ")
    connected = await chat.wait_for_reply(before)
    await expect(connected).to_contain_text("✅")
    await expect(connected).to_contain_text("Forbundet")

    loans = await chat.send("/loans")
    await expect(loans).to_contain_text("Dine lån")
    await expect(loans).to_contain_text("Kongens fald")
    await expect(loans).to_contain_text("overskredet")
    await chat.screenshot("04-loans")

    holds = await chat.send("/holds")
    await expect(holds).to_contain_text("Dine reserveringer (4)")
    await expect(holds).to_contain_text("Klar til afhentning")
    await expect(holds.locator(".kb button", has_text="Annullér: Dune")).to_be_visible()

    debt = await chat.send("/debt")
    await expect(debt).to_contain_text("Det skylder du biblioteket")
    await expect(debt).to_contain_text("65,50 kr.")

    results = await chat.send("/search Karen Blixen")
    await expect(results).to_contain_text("Babettes gæstebud")
    before = await chat.count()
    await chat.tap(results, re.compile(r"Bestil \d+: Babettes gæstebud"))
    confirm = await chat.wait_for_reply(before)
    await expect(confirm).to_contain_text("Vil du bestille Babettes gæstebud")
    # The confirming button comes first.
    await expect(confirm.locator(".kb button").first).to_have_text("📥 Ja, bestil")
    await chat.tap(confirm, "Nej")
    await expect(page.locator("#messages")).to_contain_text("Intet bestilt")

    confirm = await chat.send(f"/order {BABETTE}")
    await expect(confirm).to_contain_text("Vil du bestille Babettes gæstebud")
    await chat.tap(confirm, "Ja, bestil")
    await expect(page.locator("#messages")).to_contain_text(
        "Babettes gæstebud er bestilt til afhentning"
    )

    renew = await chat.send("/renew")
    await expect(renew).to_contain_text("Forny lån (7)")
    # A tap edits the list's keyboard in place: ✅ and the new date, or ⛔ and the reason.
    await chat.tap(renew, "Æbler, øl og ålegræs")
    await expect(renew.locator(".kb button", has_text="✅ Æbler, øl og ålegræs")).to_be_visible()
    await chat.tap(renew, "Kongens fald")
    await expect(
        renew.locator(".kb button", has_text="⛔ Kongens fald: reserveret af en anden låner")
    ).to_be_visible()
    await chat.screenshot("04b-renew")

    # The operator's button on the page: one reminder sweep now.
    before = await chat.count()
    await page.get_by_role("button", name=SWEEP_ACTION).click()
    await expect(page.locator("#toast")).to_contain_text("1 patron, 1 message,")
    digest = await chat.wait_for_reply(before)
    await expect(digest).to_contain_text("Påmindelse fra din biblioteksbot")
    await expect(digest).to_contain_text("Overskredet afleveringsdato")
    await expect(digest).to_contain_text("Klar til afhentning")
    await expect(digest.locator(".kb button").first).to_be_visible()
    # The toast has been read; out of the picture it lets the header show.
    await page.locator("#toast").evaluate("toast => { toast.hidden = true; }")
    await chat.screenshot("05-reminders")

    # Expired library logins: the next command asks the patron to log in again.
    await page.get_by_role("button", name=EXPIRE_ACTION).click()
    await expect(page.locator("#toast")).to_contain_text("expired")
    expired = await chat.send("/loans")
    await expect(expired).to_contain_text("udløbet")
    await context.close()


async def test_english_journey_and_a_denied_login(demo: Demo, browser: Browser) -> None:
    context = await new_context(browser, "en-GB")
    chat = ChatPage(await context.new_page(), demo.chat_url)
    page = chat.page
    await chat.open()
    # A new chat whose Telegram language is English.
    await page.locator("#new-chat-name").fill("Emma")
    await page.locator("#new-chat-lang").select_option("en")
    await page.get_by_role("button", name="Create").click()
    await expect(page.locator("#conv-status")).to_contain_text("chatting as Emma")
    await expect(page.locator("#chats li.active")).to_contain_text("en")

    welcome = await chat.send("/start")
    await expect(welcome).to_contain_text("I help you with the public libraries")
    prompt = await chat.send("/login")
    await prompt.locator(".kb button.url", has_text="Log in with your library").click()

    # Denied at the access service: the bot's page says so, nothing is connected.
    await expect(page.locator("h1")).to_contain_text("Log ind med dit bibliotek")
    async with page.expect_response(re.compile(r"/oauth/callback\?")) as callback:
        await page.locator("button.deny").click()
    denied = await callback.value
    assert denied.status == 200
    await expect(page.locator("h1")).to_have_text("Login cancelled")
    await expect(page.locator("main")).to_contain_text("nothing was connected")
    # A way back to the chat, and nothing to redeem there.
    back = page.get_by_role("link", name="Back to the chat")
    await expect(back).to_have_count(1)
    assert "start=" not in str(await back.get_attribute("href"))
    await back.click()
    await expect(page).to_have_url(re.compile(rf"^{re.escape(demo.chat_url)}"))

    await chat.open()
    await expect(page.locator("#conv-status")).to_contain_text("chatting as Emma")
    # Not connected: /loans offers the login button itself.
    not_yet = await chat.send("/loans")
    await expect(not_yet).to_contain_text("You are not logged in yet")
    before = await chat.count()
    await not_yet.locator(".kb button.url", has_text="Log in with your library").click()
    await log_in_at_library(page, JONAS, PIN)
    await expect(page.locator("h1")).to_have_text("Almost done")
    await page.get_by_role("link", name="Back to Telegram").click()
    connected = await chat.wait_for_reply(before)
    await expect(connected).to_contain_text("Connected")

    loans = await chat.send("/loans")
    await expect(loans).to_contain_text("Your loans")
    await expect(loans).to_contain_text("Lykke-Per")
    holds = await chat.send("/holds")
    await expect(holds).to_contain_text("Ready for pick-up")
    await chat.screenshot("06-english")

    # The calendar address, fetched as a calendar application would, and read by icalendar.
    made = await chat.send("/calendar")
    await expect(made).to_contain_text("Your library calendar")
    url = re.search(r"http\S+/calendar/\S+\.ics", await made.inner_text())
    assert url is not None
    feed = await page.request.get(url.group(0))
    assert feed.status == 200 and feed.headers["content-type"].startswith("text/calendar")
    events = Calendar.from_ical(await feed.body()).walk("VEVENT")
    summaries = sorted(str(event["summary"]) for event in events)
    assert summaries[0].startswith("📚 Due: Lykke-Per")
    assert summaries[1].startswith("📦 Last day to pick up: ")
    await chat.screenshot("07-calendar")
    closed = await chat.send("/calendar off")
    await expect(closed).to_contain_text("The calendar address is closed")
    assert (await page.request.get(url.group(0))).status == 404
    await context.close()
