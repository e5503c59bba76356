"""A long list in a real browser: /loans of a patron with 65 loans pages through one message,
and the pick-up branch is changed with the picker's buttons."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Browser, expect

from sandbox.demo import Demo
from tests.e2e.conftest import ChatPage, log_in_at_library, new_context
from tests.fixtures.patrons import LITTLE_PRINCE, METTE, PIN

pytestmark = pytest.mark.browser


async def connect(chat: ChatPage, user_id: str) -> None:
    """/login, the library's login page, and back to the chat with the one-time /start."""
    prompt = await chat.send("/login")
    before = await chat.count()
    await prompt.locator(".kb button.url").first.click()
    await log_in_at_library(chat.page, user_id, PIN)
    await chat.page.get_by_role("link", name="Tilbage til Telegram").click()
    await expect(chat.page).to_have_url(re.compile(rf"^{re.escape(chat.url)}"))
    connected = await chat.wait_for_reply(before)
    await expect(connected).to_contain_text("Forbundet")


async def test_sixty_five_loans_page_through_one_message(demo: Demo, browser: Browser) -> None:
    context = await new_context(browser, "da-DK")
    chat = ChatPage(await context.new_page(), demo.chat_url)
    await chat.open()
    await connect(chat, METTE)

    loans = await chat.send("/loans")
    await expect(loans).to_contain_text("Dine lån (65)")
    await expect(loans).to_contain_text(
        re.compile(r"\d+ overskredet · \d+ skal afleveres inden for")
    )
    await expect(loans.locator(".kb button", has_text="1/7")).to_be_visible()
    first_page = await loans.inner_text()
    count = await chat.count()
    await chat.tap(loans, "▶")
    await expect(loans.locator(".kb button", has_text="2/7")).to_be_visible()
    await expect(loans.locator(".kb button", has_text="◀")).to_be_visible()
    assert await loans.inner_text() != first_page
    await chat.screenshot("05-long-list")
    await chat.tap(loans, "◀")
    await expect(loans.locator(".kb button", has_text="1/7")).to_be_visible()
    assert await chat.count() == count  # the same message, edited: nothing new in the chat

    ask = await chat.send(f"/order {LITTLE_PRINCE}")
    await expect(ask).to_contain_text("Afhentes på")
    await chat.tap(ask, "📍 Skift afhentningssted")
    await expect(ask).to_contain_text("Hvor vil du hente Den lille prins?")
    await chat.tap(ask, "Vesterbro Bibliotek")
    await expect(ask).to_contain_text("Afhentes på Vesterbro Bibliotek.")
    await expect(ask.locator(".kb button", has_text="📥 Ja, bestil")).to_be_visible()
