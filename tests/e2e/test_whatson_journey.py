"""What's on, suggestions and free text in a real browser on the demo's chat page."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Browser, expect

from sandbox.demo import Demo
from tests.e2e.conftest import ChatPage, log_in_at_library, new_context
from tests.fixtures.patrons import KAREN, PIN

pytestmark = pytest.mark.browser


async def test_events_news_suggestions_and_free_text(demo: Demo, browser: Browser) -> None:
    context = await new_context(browser, "da-DK")
    chat = ChatPage(await context.new_page(), demo.chat_url)
    page = chat.page
    await chat.open()
    prompt = await chat.send("/login")
    before = await chat.count()
    await prompt.locator(".kb button.url").first.click()
    await log_in_at_library(page, KAREN, PIN)
    await page.get_by_role("link", name="Tilbage til Telegram").click()
    await expect(await chat.wait_for_reply(before)).to_contain_text("Forbundet")

    events = await chat.send("/events")
    await expect(events).to_contain_text("Det sker på dit bibliotek")
    await expect(events).to_contain_text("Mød forfatteren")
    await expect(events).to_contain_text("kl. 19:00–21:00")
    await chat.screenshot("whatson-events")

    news = await chat.send("/news")
    await expect(news).to_contain_text("Nyt fra dit bibliotek")

    suggestions = await chat.send("/recommend")
    await expect(suggestions).to_contain_text("Forslag ud fra dine lån")
    await expect(suggestions).to_contain_text("Babettes gæstebud")
    await chat.screenshot("whatson-recommend")
    before = await chat.count()
    await chat.tap(suggestions, re.compile(r"Bestil 1: Babettes gæstebud"))
    confirm = await chat.wait_for_reply(before)
    await expect(confirm).to_contain_text("Vil du bestille Babettes gæstebud")

    offer = await chat.send("tove ditlevsen")
    button = offer.locator(".kb button", has_text="🔎 Søg efter »tove ditlevsen«")
    await expect(button).to_be_visible()
    before = await chat.count()
    await button.click()
    results = await chat.wait_for_reply(before)
    await expect(results).to_contain_text("Barndommens gade")

    ask = await chat.send("/search")
    await expect(ask).to_contain_text("Hvad leder du efter?")
    found = await chat.send("hobbit")
    await expect(found).to_contain_text("The Hobbit")
    await chat.screenshot("whatson-free-text")
    await context.close()
