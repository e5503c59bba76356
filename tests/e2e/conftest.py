"""Browser fixtures: the demo's own wiring (`sandbox.demo.running_demo`) and headless Chromium.

Screenshots go to `artifacts/screenshots/` (git-ignored); the best ones are copied by hand to
`docs/screenshots/` for the README.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
from playwright.async_api import (
    Browser,
    BrowserContext,
    Locator,
    Page,
    Route,
    ViewportSize,
    expect,
)

from bot.config.settings import Settings
from bot.texts import t
from sandbox.demo import Demo, running_demo
from tests.fixtures.bot import LAST_MOMENT
from tests.fixtures.browser import SCREENSHOTS
from tests.fixtures.patrons import ANNA, COPENHAGEN, EMIL, FREDERIKSBERG, PIN, SOFIE

VIEWPORT: ViewportSize = {"width": 1200, "height": 860}
REPLY_TIMEOUT_MS = 10_000


@pytest.fixture
async def demo(tmp_path: Path) -> AsyncIterator[Demo]:
    """The demo's parts on free loopback ports, with a fresh `.demo`-style directory."""
    base = Settings(_env_file=None, LOG_LEVEL="INFO", REMINDER_TIME=LAST_MOMENT)
    async with running_demo(tmp_path / ".demo", base=base, chat_port=0) as started:
        yield started


async def offline_telegram_script(context: BrowserContext) -> None:
    """No internet here: Telegram's script fails to load at once, as it would offline."""

    async def refuse(route: Route) -> None:
        await route.abort()

    await context.route("https://telegram.org/**", refuse)


async def new_context(browser: Browser, locale: str) -> BrowserContext:
    """A fresh profile whose `Accept-Language` follows `locale` (the bot's pages use it)."""
    context = await browser.new_context(viewport=VIEWPORT, locale=locale)
    context.set_default_timeout(REPLY_TIMEOUT_MS)
    return context


class ChatPage:
    """The stand-in's chat page, used the way a patron uses it."""

    def __init__(self, page: Page, url: str) -> None:
        self.page = page
        self.url = url

    @property
    def replies(self) -> Locator:
        """The bot's messages (incoming bubbles) in the open chat."""
        return self.page.locator(".msg-wrap.in")

    async def open(self) -> None:
        await self.page.goto(self.url)
        await expect(self.page.locator("#bot-name")).to_have_text("Biblioteksbot")

    async def count(self) -> int:
        return await self.replies.count()

    async def wait_for_reply(self, before: int) -> Locator:
        """The first message the bot sent after `before` of its messages were shown."""
        await self.page.wait_for_function(
            "n => document.querySelectorAll('.msg-wrap.in').length > n",
            arg=before,
            timeout=REPLY_TIMEOUT_MS,
        )
        return self.replies.nth(before)

    async def send(self, text: str) -> Locator:
        """Type `text` in the composer, press Enter; the bot's first answer."""
        before = await self.count()
        composer = self.page.locator("#composer-input")
        await composer.fill(text)
        await composer.press("Enter")
        # The page echoes the patron's own message as an outgoing bubble.
        await expect(self.page.locator(".msg-wrap.out").last).to_contain_text(text)
        return await self.wait_for_reply(before)

    async def tap(self, message: Locator, label: str | re.Pattern[str]) -> None:
        await message.locator(".kb button", has_text=label).first.click()

    async def screenshot(self, name: str) -> Path:
        return await screenshot(self.page, name)


def screenshot_path(name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS / f"{name}.png"


async def screenshot(page: Page, name: str) -> Path:
    path = screenshot_path(name)
    # No hover effect in the picture, and the page's last render (a poll answer) finished.
    await page.mouse.move(1, 1)
    await asyncio.sleep(0.2)
    await page.screenshot(path=str(path))
    return path


async def log_in_at_library(page: Page, user_id: str, pin: str) -> None:
    """On the sandbox's login page: fill in the patron and press "Log ind"."""
    await expect(page.locator("h1")).to_contain_text("Log ind med dit bibliotek")
    await page.locator("#user_id").fill(user_id)
    await page.locator("#pin").fill(pin)
    await page.locator("button.login").click()


# (user id, library chosen on the login page, first name: the card's label)
FAMILY = ((ANNA, COPENHAGEN, "Anna"), (SOFIE, COPENHAGEN, "Sofie"), (EMIL, FREDERIKSBERG, "Emil"))


async def log_in_at_a_library(page: Page, user_id: str, agency: str) -> None:
    """On the sandbox's login page: choose the library, type the patron, press "Log ind".

    The browser may still be logged in as the previous patron: /login in a chat with a card
    asks for a login page all the same (`force_login`), so the next patron types theirs.
    """
    await expect(page.locator("h1")).to_contain_text("Log ind med dit bibliotek")
    await page.locator("#agency").select_option(agency)
    await page.locator("#user_id").fill(user_id)
    await page.locator("#pin").fill(PIN)
    await page.locator("button.login[value=login]").click()


async def add_card(chat: ChatPage, user_id: str, agency: str, mark: str = "✅") -> Locator:
    """/login, the login page, "Tilbage til Telegram": the chat's answer to the completed login,
    which starts with `mark` (✅ a card connected, 🔄 a card logged in again)."""
    page = chat.page
    prompt = await chat.send("/login")
    before = await chat.count()
    await prompt.locator(".kb button.url", has_text="Log ind med dit bibliotek").click()
    await log_in_at_a_library(page, user_id, agency)
    await expect(page.locator("h1")).to_have_text("Næsten færdig")
    await page.get_by_role("link", name="Tilbage til Telegram").click()
    await expect(page).to_have_url(re.compile(rf"^{re.escape(chat.url)}"))
    connected = await chat.wait_for_reply(before)
    await expect(connected).to_contain_text(mark)
    return connected


async def connect(chat: ChatPage, user_id: str) -> None:
    """Open the chat, /login, log in as `user_id` at the library, back to Telegram: connected."""
    await chat.open()
    prompt = await chat.send("/login")
    before = await chat.count()
    await prompt.locator(".kb button.url").first.click()
    await log_in_at_library(chat.page, user_id, PIN)
    await chat.page.get_by_role("link", name="Tilbage til Telegram").click()
    await expect(await chat.wait_for_reply(before)).to_contain_text("Forbundet")


async def chat_with(
    demo: Demo, browser: Browser, cards: Sequence[tuple[str, str, str]]
) -> ChatPage:
    """The demo's chat page in Danish, Telegram's script refused (offline), `/start` sent and
    `cards` (user id, library, name) connected."""
    context = await new_context(browser, "da-DK")
    await offline_telegram_script(context)
    chat = ChatPage(await context.new_page(), demo.chat_url)
    await chat.open()
    await chat.send("/start")
    for user_id, agency, _ in cards:
        await add_card(chat, user_id, agency)
    return chat


def page_text(lang: str, key: str, **values: object) -> str:
    """The catalogue's text as the chat page and the Mini App show it (no markup)."""
    return re.sub(r"<[^>]+>", "", t(lang, key, **values))
