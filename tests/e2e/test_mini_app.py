"""The family overview (the Mini App) in a real browser: opened from the chat's "📚 Overblik"
button in the stand-in's panel, with init data the stand-in signed; every card's loans with
covers and the due-date timeline; one loan renewed and the answer told in place; the page and
the chat saying the same of holds and fees, in Danish and Ukrainian; and the same page with
forged init data shows nothing of anyone."""

from __future__ import annotations

import datetime as dt
import re
from typing import Literal

import pytest
from babel.dates import format_date as babel_date
from playwright.async_api import Browser, expect

from bot.library.models import DEFAULT_TZ
from sandbox.demo import Demo
from tests.e2e.conftest import FAMILY, chat_with, offline_telegram_script, page_text
from tests.fixtures.library import RENEW_CALLS
from tests.fixtures.patrons import ANNA

pytestmark = pytest.mark.browser


async def test_the_family_overview_renews_a_loan_and_shows_its_new_date(
    demo: Demo, browser: Browser
) -> None:
    today = dt.datetime.now(DEFAULT_TZ).date()
    day_30 = today + dt.timedelta(days=30)
    # A loan due on day 30 is one of "the next 30 days".
    demo.sandbox.patron_data(ANNA).loans[0]["dueDate"] = day_30.isoformat()
    chat = await chat_with(demo, browser, FAMILY)
    listed = await chat.send("/cards")
    await chat.tap(listed, "📚 Overblik")
    app = chat.page.frame_locator("#webapp iframe")
    await expect(app.locator("h1")).to_have_text("Dit bibliotek")
    loans = sum(len(demo.sandbox.patron_data(user_id).loans) for user_id, _, _ in FAMILY)
    await expect(app.locator("li.loan")).to_have_count(loans)
    await expect(app.locator("section.card h2")).to_have_count(1 + len(FAMILY))
    assert await app.locator("li.loan img.cover").count() > 0
    # Today and the 30 days after it, each with its day of the month and its full date.
    days = app.locator(".timeline .day")
    await expect(days).to_have_count(31)
    await expect(days.first.locator("time")).to_have_text(str(today.day))
    await expect(days.first.locator("time")).to_have_attribute("datetime", today.isoformat())
    full = babel_date(today, "d. MMMM", locale="da_DK")  # "27. november"
    await expect(days.first.locator(".sr")).to_contain_text(full)
    last = days.nth(30)
    await expect(last.locator("time")).to_have_text(str(day_30.day))
    await expect(last).to_have_class(re.compile(r"\bdue\b"))
    html_lang = await app.locator("html").get_attribute("lang")
    assert html_lang == "da"
    items = app.locator("li.loan")
    titles = await items.locator(".title").all_inner_texts()
    item = items.filter(has=app.locator("button", has_text="Forny")).first
    title = await item.locator(".title").inner_text()
    # The loan itself from here on, with or without its button.
    item = items.filter(has=app.locator(".title", has_text=re.compile(f"^{re.escape(title)}$")))
    before = await item.locator(".due").inner_text()
    calls = demo.sandbox.calls[RENEW_CALLS]
    await item.locator("button", has_text="Forny").click()
    # Told in place: the chat's line for the renewal, the new date on the loan, same place.
    await expect(item.locator(".result")).to_contain_text(f"✅ {title}: ny afleveringsdato ")
    await expect(item.locator(".due")).not_to_have_text(before)
    await expect(item.locator(".due")).to_contain_text("afleveres ")
    assert await items.locator(".title").all_inner_texts() == titles
    # The loan's id is spent: its button is gone, and the answer stays in view.
    await expect(item.locator("button")).to_have_count(0)
    await expect(item.locator(".result")).to_contain_text(f"✅ {title}: ny afleveringsdato ")
    assert demo.sandbox.calls[RENEW_CALLS] == calls + 1
    await chat.screenshot("mini-app-overview")


async def test_overdue_loans_are_told_above_the_timeline_not_nothing_due(
    demo: Demo, browser: Browser
) -> None:
    """Every loan overdue: the strip of the next 30 days is empty, and the page says how many
    are overdue, as the chat's lists do, never that nothing is due."""
    today = dt.datetime.now(DEFAULT_TZ).date()
    overdue = 0
    for user_id, _, _ in FAMILY:
        for loan in demo.sandbox.patron_data(user_id).loans:
            loan["dueDate"] = (today - dt.timedelta(days=5)).isoformat()
            overdue += 1
    chat = await chat_with(demo, browser, FAMILY)
    listed = await chat.send("/cards")
    await chat.tap(listed, "📚 Overblik")
    app = chat.page.frame_locator("#webapp iframe")
    await expect(app.locator("#overdue")).to_have_text(f"🔴 {overdue} overskredet")
    await expect(app.locator("#timeline-box")).not_to_contain_text("Intet skal afleveres")
    loans = await chat.send("/loans")
    await expect(loans).to_contain_text("overskredet")


@pytest.mark.parametrize("language", ["da", "uk"])
async def test_the_page_and_the_chat_say_the_same_of_holds_and_fees(
    demo: Demo, browser: Browser, language: str
) -> None:
    chat = await chat_with(demo, browser, FAMILY)
    overview_label = "📚 Overblik"
    if language == "uk":
        prompt = await chat.send("/language")
        await chat.tap(prompt, "Українська")
        await expect(prompt).to_contain_text("✅ Тепер мова – українська.")
        overview_label = "📚 Огляд"
    holds = await chat.send("/holds")
    await expect(holds).to_contain_text(page_text(language, "render.hold.ready"))
    chat_holds = await holds.inner_text()
    debt = await chat.send("/debt")
    chat_debt = await debt.inner_text()
    listed = await chat.send("/cards")
    await chat.tap(listed, overview_label)
    app = chat.page.frame_locator("#webapp iframe")
    await expect(app.locator("h1")).to_have_text(page_text(language, "app.title"))
    statuses = await app.locator("li.hold [data-part=status]").all_inner_texts()
    assert statuses
    for status in statuses:
        assert status in chat_holds, status
    for detail in await app.locator("li.hold [data-part=detail]").all_inner_texts():
        if not detail.startswith("🕘"):  # today's hours: the page's own line
            assert detail in chat_holds, detail
    heading = chat_debt.splitlines()[0]
    assert heading == page_text(language, "borrower.debt.header")
    if language == "uk":
        assert "Штрафи" in heading
    await expect(app.locator("section.card h3", has_text=heading)).to_have_count(len(FAMILY))
    amounts = await app.locator("li.fee .amount").all_inner_texts()
    assert amounts
    for amount in amounts:
        assert amount in chat_debt, amount
        if language == "da":
            assert amount.endswith("kr."), amount
    await chat.screenshot(f"mini-app-agrees-{language}")


async def test_forged_init_data_shows_nothing_of_anyone(demo: Demo, browser: Browser) -> None:
    chat = await chat_with(demo, browser, FAMILY[:1])
    listed = await chat.send("/cards")
    url = await listed.locator(".kb button", has_text="📚 Overblik").evaluate(
        "b => b.dataset.webapp"
    )
    assert demo.bot is not None
    forged = url.replace("%2522id%2522%253A", "%2522id%2522%253A1")
    assert forged != url
    page = await chat.page.context.new_page()
    await page.goto(forged)
    # Refused, in the language the (forged) init data claims: this chat's Danish.
    await expect(page.locator("#status")).to_have_text("Siden skal åbnes fra botten i Telegram.")
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
    chat = await chat_with(demo, browser, FAMILY[:1])
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
