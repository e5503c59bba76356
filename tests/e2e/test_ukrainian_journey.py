"""The demo in Ukrainian in a real browser: a chat whose Telegram speaks Ukrainian logs in,
reads its loans and holds, and a Danish chat switches to Ukrainian with /language."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Browser, expect

from sandbox.demo import Demo
from tests.e2e.conftest import ChatPage, log_in_at_library, new_context
from tests.fixtures.patrons import JONAS, PIN

pytestmark = pytest.mark.browser


async def test_ukrainian_journey(demo: Demo, browser: Browser) -> None:
    context = await new_context(browser, "uk-UA")
    chat = ChatPage(await context.new_page(), demo.chat_url)
    page = chat.page
    await chat.open()
    # A new chat whose Telegram language is Ukrainian, from the page's picker.
    await page.locator("#new-chat-name").fill("Олена")
    await page.locator("#new-chat-lang").select_option(label="Українська")
    await page.get_by_role("button", name="Create").click()
    await expect(page.locator("#conv-status")).to_contain_text("chatting as Олена")
    await expect(page.locator("#chats li.active")).to_contain_text("uk")

    welcome = await chat.send("/start")
    await expect(welcome).to_contain_text("👋 Вітаю! Я допомагаю користуватися")
    prompt = await chat.send("/login")
    await expect(prompt).to_contain_text("Натисніть кнопку, щоб увійти на сайті своєї бібліотеки")
    before = await chat.count()
    await prompt.locator(".kb button.url", has_text="Увійти через бібліотеку").click()
    await log_in_at_library(page, JONAS, PIN)  # the library's own page, in Danish
    await expect(page.locator("html")).to_have_attribute("lang", "uk")
    await expect(page.locator("h1")).to_have_text("Майже готово")
    await expect(page.locator("main")).to_contain_text("Ви ввійшли")
    await page.get_by_role("link", name="Назад у Telegram").click()
    connected = await chat.wait_for_reply(before)
    await expect(connected).to_contain_text("✅ Підключено до вашої бібліотеки")

    loans = await chat.send("/loans")
    await expect(loans).to_contain_text("📚 Ваші видачі (1)")
    await expect(loans).to_contain_text(re.compile(r"повернути до \d{1,2} \S+ \(через 3 дні\)"))
    holds = await chat.send("/holds")
    await expect(holds).to_contain_text("Можна забрати")
    await expect(holds).to_contain_text("Пункт видачі: ")
    await chat.screenshot("08-ukrainian")
    await context.close()


async def test_a_danish_chat_switches_to_ukrainian(demo: Demo, browser: Browser) -> None:
    context = await new_context(browser, "da-DK")
    chat = ChatPage(await context.new_page(), demo.chat_url)
    await chat.open()
    prompt = await chat.send("/language")
    await expect(prompt).to_contain_text("Vælg sprog")
    await expect(prompt.locator(".kb button")).to_have_text(
        ["Dansk", "English", "Українська", "Automatisk (fra Telegram)"]
    )
    await chat.tap(prompt, "Українська")
    await expect(prompt).to_contain_text("✅ Тепер мова – українська.")  # the prompt, edited
    help_text = await chat.send("/help")
    await expect(help_text).to_contain_text("/loans – ваші видачі й терміни повернення")
    await chat.screenshot("09-ukrainian-language")
    await context.close()
