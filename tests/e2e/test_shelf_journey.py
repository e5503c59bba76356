"""The shelf in a real browser on the demo: /where for a title on the shelf at two branches, an
order refused before "Yes", and a watch that fires once when the demo brings the copy back."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, expect

from sandbox.demo import RETURN_ACTION, SWEEP_ACTION, Demo
from tests.e2e.conftest import ChatPage, connect, new_context, offline_telegram_script
from tests.fixtures.patrons import OLE

pytestmark = pytest.mark.browser

FARM = "870970-basis:27247164"  # on the shelf at two Copenhagen branches, lent at Nørrebro
OWN = "870970-basis:27015794"  # "Kvinden i buret": on Copenhagen's own shelves
PING = "Den afrikanske farm står på hylden på Nørrebro Bibliotek nu"


async def test_where_refused_before_yes_and_a_watch_that_fires_once(
    demo: Demo, browser: Browser
) -> None:
    context = await new_context(browser, "da-DK")
    await offline_telegram_script(context)
    chat = ChatPage(await context.new_page(), demo.chat_url)
    page = chat.page
    await connect(chat, OLE)

    where = await chat.send(f"/where {FARM}")
    await expect(where).to_contain_text("Den afrikanske farm på Københavns Biblioteker")
    await expect(where).to_contain_text("Københavns Hovedbibliotek: på hylden · Voksen")
    await expect(where).to_contain_text("Vesterbro Bibliotek: på hylden · Voksen")
    await expect(where).to_contain_text("Islands Brygge Bibliotek: kan læses på stedet")

    refused = await chat.send(f"/order {OWN}")
    await expect(refused).to_contain_text("har selv Kvinden i buret på hylden")
    await expect(refused).to_contain_text("Her står den nu:")
    await expect(refused.locator(".kb button")).to_have_count(0)  # no "Ja, bestil" to refuse

    before = await chat.count()
    await chat.tap(where, "🔔 Sig til, når den er tilbage på Nørrebro Bibliotek")
    await expect(await chat.wait_for_reply(before)).to_contain_text("Jeg siger til, når")
    # The overview shows the watch as /watches lists it.
    await chat.tap(await chat.send("/cards"), "📚 Overblik")
    app = page.frame_locator("#webapp iframe")
    watch = app.locator("li.watch")
    await expect(watch).to_have_count(1)
    await expect(watch).to_contain_text("Den afrikanske farm på Nørrebro Bibliotek, siden ")
    await page.locator(".webapp-close").click()

    await page.get_by_role("button", name=RETURN_ACTION).click()
    await expect(page.locator("#toast")).to_contain_text("back on their shelves")
    await page.get_by_role("button", name=SWEEP_ACTION).click()
    # The morning's digest, then the ping.
    ping = chat.replies.filter(has_text=PING)
    await expect(ping).to_have_count(1, timeout=15_000)
    await expect(ping).to_contain_text("Du finder den her: Voksen › Skønlitteratur › Blixen")
    await expect(ping.locator(".kb button", has_text="Bestil den")).to_be_visible()
    # Never again: the next check finds no watch.
    await page.get_by_role("button", name=SWEEP_ACTION).click()
    await expect(page.locator("#toast")).to_contain_text("0 patrons")  # the second run done
    await expect(ping).to_have_count(1)
