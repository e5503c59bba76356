"""Inline mode in a real browser on the demo's chat page: `@<bot> words`, a shared card, and
its button into the order confirmation."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, expect

from sandbox.demo import BOT_USERNAME, Demo
from tests.e2e.conftest import ChatPage, log_in_at_library, new_context
from tests.fixtures.patrons import KAREN, PIN

pytestmark = pytest.mark.browser


async def test_share_a_book_inline_and_order_it_from_the_card(demo: Demo, browser: Browser) -> None:
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
    users = demo.sandbox.calls["platform GET /v3/user"]

    composer = page.locator("#composer-input")
    await composer.fill(f"@{BOT_USERNAME} h")
    results = page.locator("#inline-results")
    await expect(results.locator("li[data-result-id]")).to_have_count(10)
    await expect(results.locator("li.more")).to_have_text("More results…")
    await results.locator("li.more").dispatch_event("mousedown")
    await expect(results.locator("li[data-result-id]")).to_have_count(18)
    await expect(results.locator("li.more")).to_have_count(0)

    await composer.fill(f"@{BOT_USERNAME} hobbit")
    await expect(results.locator("li[data-result-id]")).to_have_count(1)
    hobbit = results.locator("li[data-result-id]", has_text="The Hobbit")
    await expect(hobbit).to_contain_text("J.R.R. Tolkien · Bog")
    await chat.screenshot("inline-results")
    await hobbit.dispatch_event("mousedown")
    card = page.locator(".msg-wrap.out").last
    await expect(card).to_contain_text(f"via @{BOT_USERNAME}")
    await expect(card).to_contain_text("The Hobbit")
    await expect(card).to_contain_text("Delt fra bibliotekets katalog.")
    await chat.screenshot("inline-card")
    assert demo.sandbox.calls["platform GET /v3/user"] == users  # no account read

    before = await chat.count()
    await card.locator(".kb button", has_text="📥 Bestil på dit bibliotek").click()
    confirm = await chat.wait_for_reply(before)
    await expect(confirm).to_contain_text("Vil du bestille The Hobbit af J.R.R. Tolkien?")
    await expect(confirm.locator(".kb button").first).to_have_text("📥 Ja, bestil")
