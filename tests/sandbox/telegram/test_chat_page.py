"""The chat page in a real Chromium: typing, answers, buttons, actions and t.me deep links."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser, Locator, Page, Route, expect

from sandbox.telegram import TelegramStandIn
from tests.fixtures.browser import SCREENSHOTS
from tests.fixtures.telegram import TEST_BOT_TOKEN
from tests.sandbox.telegram.scripted_bot import scripted_bot

pytestmark = pytest.mark.browser

SCREENSHOT = SCREENSHOTS / "chat-page.png"


@pytest.fixture
async def stand_in() -> AsyncIterator[TelegramStandIn]:
    sweeps: list[int] = []

    async def sweep() -> str:
        sweeps.append(1)
        return f"Reminder sweep done ({len(sweeps)})"

    telegram = TelegramStandIn(actions={"Run reminder sweep": sweep})
    telegram.add_bot(TEST_BOT_TOKEN, username="library_sandbox_bot")
    await telegram.start()
    try:
        yield telegram
    finally:
        await telegram.stop()


def bot_messages(page: Page) -> Locator:
    return page.locator(".msg-wrap.in")


async def test_chat_page_end_to_end(browser: Browser, stand_in: TelegramStandIn) -> None:
    async with scripted_bot(stand_in.url):
        page = await browser.new_page(viewport={"width": 1100, "height": 720})

        async def fake_bibliotek(route: Route) -> None:
            await route.fulfill(body="<h1>bibliotek.dk stand-in</h1>", content_type="text/html")

        await page.route("https://bibliotek.dk/**", fake_bibliotek)
        await page.goto(stand_in.url)
        # the first chat is created automatically, in Danish
        await expect(page.locator("#chats li")).to_have_count(1)
        chat_id = int(await page.locator("#chats li").get_attribute("data-chat-id") or "0")
        await expect(page.locator("#chats li")).to_contain_text("da · id")

        composer = page.locator("#composer-input")
        await composer.fill("/lo")
        await expect(page.locator("#suggestions")).to_contain_text("/loans")
        await expect(page.locator("#suggestions")).to_contain_text("Vis dine lån")
        await composer.fill("Hej <img src=x onerror=alert(1)> & bibliotek")
        await composer.press("Enter")
        answer = bot_messages(page).last
        await expect(answer).to_contain_text(
            "Du skrev: Hej <img src=x onerror=alert(1)> & bibliotek"
        )
        await expect(answer.locator(".body b")).to_have_count(1)
        assert await page.locator(".messages img").count() == 0
        await expect(page.locator(".msg-wrap.out")).to_contain_text("Hej <img")

        await answer.get_by_role("button", name="Bekræft").click()
        await expect(page.locator("#toast")).to_have_text("Bekræftet ✓")
        await expect(answer).to_contain_text("Bekræftet: tak")
        await expect(answer.locator(".body i")).to_have_text("tak")
        await expect(answer.get_by_role("button")).to_have_count(0)
        assert stand_in.sent(chat_id)[-1].edits == 1

        await page.get_by_role("button", name="Run reminder sweep").click()
        await expect(page.locator("#toast")).to_have_text("Reminder sweep done (1)")

        # a second chat in English gets the English command menu
        await page.locator("#new-chat-name").fill("Emma")
        await page.locator("#new-chat-lang").select_option("en")
        await page.get_by_role("button", name="Create").click()
        await expect(page.locator("#chats li")).to_have_count(2)
        await expect(page.locator("#chats li.active")).to_contain_text("Emma")
        await composer.fill("/")
        await expect(page.locator("#suggestions")).to_contain_text("Your loans")
        await composer.fill("")

        # a t.me deep link sends /start <payload> from the current chat (Emma's, by cookie)
        await page.goto(f"{stand_in.url}/t.me/library_sandbox_bot?start=Kode-42")
        await expect(page.locator("#chats li.active")).to_contain_text("Emma")
        await expect(page.locator(".msg-wrap.out").last).to_contain_text("/start Kode-42")
        await expect(bot_messages(page).last).to_contain_text("Velkommen! Kode: Kode-42")
        emma = max(stand_in.sent(chat_id + 1), key=lambda m: m.message_id)
        assert emma.text == "Velkommen! Kode: Kode-42"

        # back to the first chat for the screenshot; then a URL button navigates the page
        await page.locator("#chats li", has_text="Patron").click()
        await expect(page.locator("#chats li.active")).to_contain_text("Patron")
        await composer.fill("Hvor er mine lån?")
        await composer.press("Enter")
        await expect(bot_messages(page).last).to_contain_text("Du skrev: Hvor er mine lån?")
        await composer.fill("/")
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(SCREENSHOT))
        await composer.fill("")
        await bot_messages(page).last.get_by_role("button", name="Bibliotek.dk").click()
        await expect(page.locator("h1")).to_have_text("bibliotek.dk stand-in")
        await page.close()
