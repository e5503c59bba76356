"""The family overview (the Mini App) in a real browser: opened from the chat's "📚 Overblik"
button in the stand-in's panel, with init data the stand-in signed; every card's loans with
covers and the due-date timeline; one loan renewed and its new date read back; and the same
page with forged init data shows nothing of anyone."""

from __future__ import annotations

from typing import Literal

import pytest
from playwright.async_api import Browser, BrowserContext, Route, expect

from sandbox.demo import Demo
from tests.e2e.conftest import FAMILY, ChatPage, add_card, new_context

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


CONTRAST = """
(selector) => {
  const rgb = (s) => s.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = (c) => {
    const [r, g, b] = c.map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const worst = [];
  for (const node of document.querySelectorAll(selector)) {
    let box = node;
    let bg = "rgba(0, 0, 0, 0)";
    while (box && (bg === "rgba(0, 0, 0, 0)" || bg === "transparent")) {
      bg = getComputedStyle(box).backgroundColor;
      box = box.parentElement;
    }
    const [a, b] = [lum(rgb(getComputedStyle(node).color)), lum(rgb(bg))];
    worst.push((Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05));
  }
  return Math.min(...worst);
}
"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_the_overview_fits_320_px_and_its_text_is_readable(
    demo: Demo, browser: Browser, scheme: Literal["light", "dark"]
) -> None:
    """WCAG 2.1 AA: 4.5:1 for text; no sideways scrolling at 320 px (reflow), in light and
    dark (no theme given: the page's own colours; the stand-in's theme: Telegram's)."""
    context = await new_context(browser, "da-DK")
    await offline_telegram_script(context)
    chat = ChatPage(await context.new_page(), demo.chat_url)
    await chat.open()
    await chat.send("/start")
    user_id, agency, _ = FAMILY[0]
    await add_card(chat, user_id, agency)
    listed = await chat.send("/cards")
    button = listed.locator(".kb button", has_text="📚 Overblik")
    url = await button.evaluate("b => b.dataset.webapp")
    narrow = await browser.new_context(
        viewport={"width": 320, "height": 640}, locale="da-DK", color_scheme=scheme
    )
    await offline_telegram_script(narrow)
    page = await narrow.new_page()
    # Dark: without the theme parameters, so the page's own dark colours are checked too.
    await page.goto(url if scheme == "light" else url.split("&tgWebAppThemeParams")[0])
    await expect(page.locator("li.loan").first).to_be_visible()
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 320
    ratio = await page.evaluate(CONTRAST, ".title, .meta, .due, h1, h2, h3, button, .note")
    assert ratio >= 4.5, ratio
