"""The platform's grammar in a real browser on the demo: loans and holds with all-digit and
`NCIP…` ids renew and cancel, the library's opening hours come (its `agency` one string), and
the Mini App shows the covers of a card with more works than one `/v3/work` call takes."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, expect

from sandbox.demo import Demo
from tests.e2e.conftest import ChatPage, connect, new_context
from tests.fixtures.patrons import KAREN, METTE

pytestmark = pytest.mark.browser


def id_of(demo: Demo, kind: str, key: str, title: str) -> str:
    items = getattr(demo.sandbox.patron_data(KAREN), kind)
    return str(next(item[key] for item in items if item["title"].startswith(title)))


async def test_ids_of_both_shapes_renew_and_cancel(demo: Demo, browser: Browser) -> None:
    assert id_of(demo, "loans", "loanId", "Den afrikanske farm").isdigit()
    assert id_of(demo, "loans", "loanId", "Harry Potter").startswith("NCIP")
    assert id_of(demo, "orders", "orderId", "Kvinden i buret").isdigit()
    assert id_of(demo, "orders", "orderId", "Dune").startswith("NCIP")
    chat = ChatPage(await (await new_context(browser, "da-DK")).new_page(), demo.chat_url)
    await connect(chat, KAREN)

    renew = await chat.send("/renew")
    for title in ("Den afrikanske farm", "Harry Potter"):
        await chat.tap(renew, title)
        await expect(renew.locator(".kb button", has_text=f"✅ {title}")).to_be_visible()

    messages = chat.page.locator("#messages")
    for title in ("Kvinden i buret", "Dune"):
        holds = await chat.send("/holds")
        await chat.tap(holds, f"✖ Annullér: {title}")
        yes = chat.page.locator(".kb button", has_text="✖ Ja, annullér den").last
        await expect(yes).to_be_visible()
        await yes.click()
        await expect(messages).to_contain_text(f"Din reservering af {title} er annulleret")
    titles = [order["title"] for order in demo.sandbox.patron_data(KAREN).orders]
    assert "Dune" not in titles and "Kvinden i buret" not in titles

    events = await chat.send("/events")
    await expect(events).to_contain_text("Mød forfatteren")
    before = await chat.count()
    await chat.tap(events, "🕘 Åbningstider")
    hours = await chat.wait_for_reply(before)
    await expect(hours).to_contain_text("Åbningstider den kommende uge")
    news = await chat.send("/news")
    await expect(news).to_contain_text("Nyt fra dit bibliotek")


async def test_the_overview_shows_the_covers_of_a_card_with_many_works(
    demo: Demo, browser: Browser
) -> None:
    loans = demo.sandbox.patron_data(METTE).loans
    works = {loan["titleId"] for loan in loans}
    assert len(loans) >= 30 and len(works) > 20  # more than one /v3/work call takes
    covered = sum(1 for loan in loans if int(loan["titleId"]) % 7)  # one in seven has none
    context = await new_context(browser, "da-DK")
    await context.route("https://telegram.org/**", lambda route: route.abort())
    chat = ChatPage(await context.new_page(), demo.chat_url)
    await connect(chat, METTE)
    listed = await chat.send("/cards")
    await chat.tap(listed, "📚 Overblik")
    app = chat.page.frame_locator("#webapp iframe")
    await expect(app.locator("li.loan")).to_have_count(len(loans))
    covers = app.locator("li.loan img.cover")
    await expect(covers).to_have_count(covered)
    # Every cover is an image the browser loaded, from the protocol-relative URL made whole.
    await expect(covers.last).to_have_js_property("complete", True)
    loaded = await covers.evaluate_all("(all) => all.filter((i) => i.naturalWidth > 0).length")
    assert loaded == covered
