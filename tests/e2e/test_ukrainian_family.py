"""The family of three cards in a chat that speaks Ukrainian, in a real browser (issue 34's
walk, as `test_family_journey.py` and `test_mini_app.py` do it in Danish): the cards are added
through the library's own (Danish) login page, then the chat switches with /language. A
renewal on the Mini App page is told in place; lapsed logins keep every card and its name, in
one message; a gone card's old buttons stop at the first tap and touch no other card."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from playwright.async_api import Browser, expect

from sandbox.demo import Demo
from tests.e2e.conftest import FAMILY, ChatPage, chat_with, log_in_at_a_library, page_text
from tests.fixtures.library import RENEW_CALLS
from tests.fixtures.patrons import ANNA, BABETTE, COPENHAGEN
from tests.fixtures.patrons import FAMILY as FAMILY_IDS

pytestmark = pytest.mark.browser

NAMES = [name for _, _, name in FAMILY]


def uk(key: str, **values: Any) -> str:
    return page_text("uk", key, **values)


async def ukrainian_family(demo: Demo, browser: Browser) -> ChatPage:
    """Anna, Sofie and Emil logged in from one chat, which then speaks Ukrainian."""
    chat = await chat_with(demo, browser, FAMILY)
    prompt = await chat.send("/language")
    await chat.tap(prompt, "Українська")
    await expect(prompt).to_contain_text("✅ Тепер мова – українська.")
    return chat


async def test_a_renewal_on_the_page_is_told_in_place_in_ukrainian(
    demo: Demo, browser: Browser
) -> None:
    chat = await ukrainian_family(demo, browser)
    listed = await chat.send("/cards")
    await chat.tap(listed, uk("app.button"))
    app = chat.page.frame_locator("#webapp iframe")
    await expect(app.locator("h1")).to_have_text(uk("app.title"))
    assert await app.locator("html").get_attribute("lang") == "uk"
    await expect(app.locator("section.card h2", has_text="👤")).to_have_text(
        [f"👤 {name}" for name in NAMES]
    )
    items = app.locator("li.loan")
    loans = sum(len(demo.sandbox.patron_data(user_id).loans) for user_id, _, _ in FAMILY)
    await expect(items).to_have_count(loans)
    titles = await items.locator(".title").all_inner_texts()

    renew = uk("app.renew")
    item = items.filter(has=app.locator("button", has_text=renew)).first
    title = await item.locator(".title").inner_text()
    # The loan itself from here on, with or without its button.
    item = items.filter(has=app.locator(".title", has_text=re.compile(f"^{re.escape(title)}$")))
    before = await item.locator(".due").inner_text()
    calls = demo.sandbox.calls[RENEW_CALLS]
    await item.locator("button", has_text=renew).click()
    # The chat's line for the renewal, on the loan itself; the new date; the same place.
    await expect(item.locator(".result")).to_contain_text(f"✅ {title}: новий термін повернення – ")
    await expect(item.locator(".due")).not_to_have_text(before)
    after = await item.locator(".due").inner_text()
    assert after.startswith("повернути до "), after
    assert await items.locator(".title").all_inner_texts() == titles
    await chat.screenshot("uk-family-mini-app-renewed")
    # The loan's id is spent: its button is gone, and the answer stays in view.
    await expect(item.locator("button")).to_have_count(0)
    await expect(item.locator(".result")).to_contain_text(f"✅ {title}: новий термін повернення – ")
    assert demo.sandbox.calls[RENEW_CALLS] == calls + 1

    # The chat tells the loan with the page's new date.
    await chat.page.locator("#webapp .webapp-close").click()
    shown = await chat.count()
    await chat.send("/loans")
    await expect(chat.page.locator("#messages")).to_contain_text(title)
    listing = "\n".join((await chat.replies.all_inner_texts())[shown:])
    line = next(line for line in listing.splitlines() if title in line)
    assert after in listing[listing.index(line) :], listing


async def test_lapsed_logins_keep_the_family_s_cards_in_ukrainian(
    demo: Demo, browser: Browser
) -> None:
    chat = await ukrainian_family(demo, browser)
    page = chat.page
    await demo.expire_library_logins()
    before = await chat.count()
    await chat.send("/loans")
    lapsed = await chat.wait_for_reply(before)
    # One message names every card, each with its own login button.
    await expect(lapsed).to_contain_text(uk("lists.lapsed_many", names="Anna, Sofie і Emil"))
    for name in NAMES:
        await expect(
            lapsed.locator(".kb button.url", has_text=uk("lists.login_card", name=name))
        ).to_have_count(1)
    assert await chat.count() == before + 1
    await chat.screenshot("uk-family-lapsed")

    cards = await chat.send("/cards")
    for number, name in enumerate(NAMES, start=1):
        await expect(cards).to_contain_text(uk("cards.line_lapsed", number=number, name=name))

    # The page: every card under its name, with the chat's words and its own login link.
    await chat.tap(cards, uk("app.button"))
    app = page.frame_locator("#webapp iframe")
    await expect(app.locator("section.card h2", has_text="👤")).to_have_text(
        [f"👤 {name}" for name in NAMES]
    )
    for name in NAMES:
        section = app.locator("section.card", has_text=f"👤 {name}")
        await expect(section.locator(".warn")).to_have_text(uk("lists.card_lapsed", name=name))
        await expect(section.locator("a.login")).to_have_text(uk("lists.login_again"))
    # No card could be read: the page does not say that nothing is due (Sofie has a loan due).
    await expect(app.locator("#timeline-box")).to_have_count(0)
    await expect(app.locator("main")).not_to_contain_text(uk("app.nothing_due"))
    await page.locator("#webapp .webapp-close").click()

    # Anna logs in again with her button in the first message (the oldest login link: /cards
    # and the page made links of their own since): her card is back by its name.
    before = await chat.count()
    await lapsed.locator(".kb button.url", has_text=uk("lists.login_card", name="Anna")).click()
    await log_in_at_a_library(page, ANNA, COPENHAGEN)  # the library's own page, in Danish
    await expect(page.locator("h1")).to_have_text("Майже готово")
    await page.get_by_role("link", name="Назад у Telegram").click()
    back = await chat.wait_for_reply(before)
    await expect(back).to_contain_text(
        "✅ Картка «Anna» знову підключена – з назвою, календарем і налаштуваннями."
    )
    cards = await chat.send("/cards")
    await expect(cards).to_contain_text("1. 👤 Anna (Københavns Biblioteker)")
    await expect(cards).to_contain_text(uk("cards.line_lapsed", number=2, name="Sofie"))
    await expect(cards).to_contain_text(uk("cards.line_lapsed", number=3, name="Emil"))
    await chat.send("/loans")
    await expect(chat.page.locator("#messages")).to_contain_text(
        demo.sandbox.patron_data(ANNA).loans[0]["title"]
    )


async def test_a_gone_card_s_old_buttons_stop_at_the_first_tap_in_ukrainian(
    demo: Demo, browser: Browser
) -> None:
    """Anna's "cancel" button in /holds and her order confirmation, tapped after Anna logged
    out: each says the card is gone at once, asks nothing, and nobody's holds change."""
    chat = await ukrainian_family(demo, browser)
    held = demo.sandbox.patron_data(ANNA).orders[0]["title"]
    holds = await chat.send("/holds")
    cancel = holds.locator(".kb button", has_text=uk("borrower.holds.cancel_button", title=held))
    await expect(cancel).to_have_count(1)
    ask = await chat.send(f"/order {BABETTE}")
    await ask.locator(".kb button", has_text="Anna").click()
    yes = ask.locator(".kb button", has_text=uk("borrower.order.yes"))
    await expect(yes).to_have_count(1)
    # The expected day ends with its month's abbreviation point, which ends the line too.
    body = ask.locator(".body")
    await expect(body).to_contain_text(re.compile(r"📦 Орієнтовно можна буде забрати \d+ \S+\.$"))
    await expect(body).not_to_contain_text("..")

    logout = await chat.send("/logout")
    await expect(logout).to_contain_text(uk("cards.logout_which"))
    await logout.locator(".kb button", has_text="Anna").click()
    await expect(logout.locator(".kb button", has_text="Anna")).to_have_count(0)
    cards = await chat.send("/cards")
    await expect(cards).not_to_contain_text("Anna")
    await expect(cards).to_contain_text("1. 👤 Sofie")  # Anna's number is Sofie's now
    await expect(cards).to_contain_text("Emil")
    orders = {
        user_id: copy.deepcopy(demo.sandbox.patron_data(user_id).orders) for user_id in FAMILY_IDS
    }

    for button in (cancel, yes):
        before = await chat.count()
        await button.click()
        told = await chat.wait_for_reply(before)
        await expect(told.locator(".body")).to_have_text(uk("cards.gone"))
        # The first tap's answer is its only one: no question, no order, no other card's.
        await expect(chat.replies).to_have_count(before + 1)
    await chat.replies.last.scroll_into_view_if_needed()
    await chat.screenshot("uk-family-stale-buttons")
    assert {user_id: demo.sandbox.patron_data(user_id).orders for user_id in orders} == orders
