"""The family overview (the Mini App) in a real browser: opened from the chat's "📚 Overblik"
button in the stand-in's panel, with init data the stand-in signed; every card's loans with
covers and the due-date timeline; one loan renewed and its new date read back; and the same
page with forged init data shows nothing of anyone."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, BrowserContext, Route, expect

from sandbox.demo import Demo
from tests.e2e.conftest import ChatPage, new_context
from tests.e2e.test_family_journey import FAMILY, add_card

pytestmark = pytest.mark.browser


async def offline_telegram_script(context: BrowserContext) -> None:
    """No internet here: Telegram's script fails to load at once, as it would offline."""

    async def refuse(route: Route) -> None:
        await route.abort()

    await context.route("https://telegram.org/**", refuse)


async def test_the_family_overview_renews_a_loan_and_shows_its_new_date(
    demo: Demo, browser: Browser
) -> None:
    context = await new_context(browser, "da-DK")
    await offline_telegram_script(context)
    chat = ChatPage(await context.new_page(), demo.chat_url)
    await chat.open()
    await chat.send("/start")
    for user_id, agency, _ in FAMILY:
        await add_card(chat, user_id, agency)
    listed = await chat.send("/cards")
    await chat.tap(listed, "📚 Overblik")
    app = chat.page.frame_locator("#webapp iframe")
    await expect(app.locator("h1")).to_have_text("Dit bibliotek")
    loans = sum(len(demo.sandbox.patron_data(user_id).loans) for user_id, _, _ in FAMILY)
    await expect(app.locator("li.loan")).to_have_count(loans)
    await expect(app.locator("section.card h2")).to_have_count(1 + len(FAMILY))
    assert await app.locator("li.loan img.cover").count() > 0
    await expect(app.locator(".timeline .day")).to_have_count(30)
    assert await app.locator(".timeline .day.due").count() > 0
    html_lang = await app.locator("html").get_attribute("lang")
    assert html_lang == "da"
    item = app.locator("li.loan", has=app.locator("button", has_text="Forny")).first
    title = await item.locator(".title").inner_text()
    before = await item.locator(".due").inner_text()
    await item.locator("button", has_text="Forny").click()
    # The page reads the overview again and shows the loan's new date.
    again = app.locator("li.loan", has_text=title).first
    await expect(again.locator(".due")).not_to_have_text(before)
    await chat.screenshot("mini-app-overview")


async def test_forged_init_data_shows_nothing_of_anyone(demo: Demo, browser: Browser) -> None:
    context = await new_context(browser, "da-DK")
    await offline_telegram_script(context)
    chat = ChatPage(await context.new_page(), demo.chat_url)
    await chat.open()
    await chat.send("/start")
    user_id, agency, _ = FAMILY[0]
    await add_card(chat, user_id, agency)
    listed = await chat.send("/cards")
    url = await listed.locator(".kb button", has_text="📚 Overblik").evaluate(
        "b => b.dataset.webapp"
    )
    assert demo.bot is not None
    forged = url.replace("%2522id%2522%253A", "%2522id%2522%253A1")
    assert forged != url
    page = await context.new_page()
    await page.goto(forged)
    await expect(page.locator("#status")).to_have_text("Open this page from the bot in Telegram.")
    await expect(page.locator("li")).to_have_count(0)
    await expect(page.locator("section")).to_have_count(0)
