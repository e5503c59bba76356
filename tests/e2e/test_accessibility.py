"""WCAG 2.1 AA on the pages a patron sees outside the chat: the sandbox's login page and the
bot's login-result pages, checked in Chromium from what it renders.

- contrast (1.4.3): every element with text, its computed colour against the background it is
  drawn on, by the WCAG relative-luminance formula: 4.5:1, or 3:1 for large text;
- language (3.1.1, 3.1.2): `<html lang>` is the patron's language (on the bot's pages the
  chat's, not the browser's), and English parts of the Danish login page say so;
- labels (1.3.1, 4.1.2): every input has a label with text;
- focus order and visibility (2.4.3, 2.4.7): Tab walks the controls in reading order, and the
  focused one is outlined.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from sandbox.demo import Demo
from tests.e2e.conftest import ChatPage, log_in_at_library, new_context
from tests.fixtures.patrons import KAREN, PIN

pytestmark = pytest.mark.browser

# Returns every text element whose contrast is below AA, with what was measured.
CONTRAST = """
() => {
  const parse = (value) => {
    const m = value.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1};
  };
  const over = (top, bottom) => ({
    r: top.r * top.a + bottom.r * (1 - top.a),
    g: top.g * top.a + bottom.g * (1 - top.a),
    b: top.b * top.a + bottom.b * (1 - top.a),
    a: 1,
  });
  const background = (element) => {
    // The colours painted behind the element, composed from the canvas (white) up.
    const layers = [];
    for (let e = element; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) layers.push(c);
      if (c && c.a === 1) break;
    }
    let colour = {r: 255, g: 255, b: 255, a: 1};
    for (const layer of layers.reverse()) colour = over(layer, colour);
    return colour;
  };
  const channel = (v) => {
    v /= 255;
    return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
  };
  const luminance = (c) => 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b);
  const failures = [];
  let checked = 0;
  for (const element of document.body.querySelectorAll('*')) {
    const own = [...element.childNodes].some(
      (n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim());
    if (!own || !element.getClientRects().length) continue;
    const style = getComputedStyle(element);
    if (style.visibility !== 'visible' || Number(style.opacity) === 0) continue;
    const back = background(element);
    const fore = over(parse(style.color), back);
    const [hi, lo] = [luminance(fore), luminance(back)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    const needed = large ? 3 : 4.5;
    checked += 1;
    if (ratio < needed) {
      failures.push({
        text: element.textContent.trim().slice(0, 40), ratio: Math.round(ratio * 100) / 100,
        needed, color: style.color, background: `rgb(${back.r},${back.g},${back.b})`,
      });
    }
  }
  return {checked, failures};
}
"""

UNLABELLED = """
() => [...document.querySelectorAll('input, select, textarea')]
  .filter((e) => e.type !== 'hidden')
  .filter((e) => ![...e.labels].some((l) => l.textContent.trim()) && !e.getAttribute('aria-label'))
  .map((e) => e.name || e.id)
"""

FOCUSED = """
() => {
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  const style = getComputedStyle(e);
  const outlined = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
  const name = (e.labels && e.labels.length ? e.labels[0].textContent : e.textContent)
    .trim().replace(/\\s+/g, ' ');
  return {tag: e.tagName.toLowerCase(), id: e.id, name, outlined};
}
"""


async def _contrast_ok(page: Page) -> None:
    result: dict[str, Any] = await page.evaluate(CONTRAST)
    assert result["checked"] >= 3, "no text was checked"
    assert not result["failures"], result["failures"]


async def _tab_order(page: Page, stops: int) -> list[dict[str, Any]]:
    """The controls Tab reaches from the top of the page, in order."""
    await page.evaluate("() => { document.activeElement && document.activeElement.blur(); }")
    order = []
    for _ in range(stops):
        await page.keyboard.press("Tab")
        focused = await page.evaluate(FOCUSED)
        assert focused is not None, "Tab left the page's controls too early"
        order.append(focused)
    return order


async def _audit_bot_page(page: Page, lang: str, link: str) -> None:
    assert await page.evaluate("() => document.documentElement.lang") == lang
    await _contrast_ok(page)
    [focused] = await _tab_order(page, 1)
    assert focused["tag"] == "a" and focused["name"] == link
    assert focused["outlined"]


@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_login_pages_meet_wcag_aa(demo: Demo, browser: Browser, scheme: str) -> None:
    # The browser asks for Danish; the patron's chat is English: the bot's pages follow the chat.
    context = await new_context(browser, "da-DK")
    chat = ChatPage(await context.new_page(), demo.chat_url)
    page = chat.page
    await page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
    await chat.open()
    await page.locator("#new-chat-name").fill("Emma")
    await page.locator("#new-chat-lang").select_option("en")
    await page.get_by_role("button", name="Create").click()
    await expect(page.locator("#conv-status")).to_contain_text("chatting as Emma")
    await chat.send("/start")
    prompt = await chat.send("/login")
    await prompt.locator(".kb button.url", has_text="Log in with your library").click()

    # The access service's login page (the sandbox's): Danish, with its English parts marked.
    await expect(page.locator("h1")).to_contain_text("Log ind med dit bibliotek")
    assert await page.evaluate("() => document.documentElement.lang") == "da"
    english = page.locator(".en")
    assert await english.count() >= 5
    for index in range(await english.count()):
        assert await english.nth(index).get_attribute("lang") == "en"
    assert await page.evaluate(UNLABELLED) == []
    await _contrast_ok(page)
    order = await _tab_order(page, 5)
    assert [(stop["tag"], stop["id"]) for stop in order[:3]] == [
        ("select", "agency"),
        ("input", "user_id"),
        ("input", "pin"),
    ]
    assert [stop["name"] for stop in order[3:]] == ["Log ind Log in", "Afvis Deny"]
    assert all(stop["outlined"] for stop in order)
    # A wrong PIN: the error is announced, and still readable.
    await page.locator("#user_id").fill(KAREN)
    await page.locator("#pin").fill("0000")
    await page.locator("button.login").click()
    await expect(page.get_by_role("alert")).to_be_visible()
    await _contrast_ok(page)

    async with page.expect_response(re.compile(r"/oauth/callback\?")) as callback:
        await log_in_at_library(page, KAREN, PIN)
    assert (await callback.value).status == 200
    await expect(page.locator("h1")).to_have_text("Almost done")
    await _audit_bot_page(page, "en", "Back to Telegram")

    # The page for a broken link follows the browser (no chat is known): Danish.
    assert demo.bot is not None
    await page.goto(f"{demo.bot.web_url}/oauth/callback?state=x")
    await expect(page.locator("h1")).to_be_visible()
    await _audit_bot_page(page, "da", "Tilbage til chatten")
