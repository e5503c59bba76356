"""Ukrainian end to end: a Telegram user whose app speaks Ukrainian, and /language (issue 26)."""

from __future__ import annotations

import re

from bot.telegram.handlers import COMMANDS
from tests.fixtures.bot import BotHarness
from tests.fixtures.calendar import URL, events
from tests.fixtures.chat import command
from tests.fixtures.patrons import JONAS, KAREN

CHAT = 2601


async def test_a_ukrainian_app_gets_start_help_login_and_loans_in_ukrainian(
    bot: BotHarness,
) -> None:
    bot.add_chat(CHAT, language_code="uk")
    [welcome] = await command(bot, CHAT, "/start")
    assert welcome.text.startswith(
        # No name: a greeting would need its vocative ("Олено"), which the bot cannot make.
        "👋 Вітаю! Я допомагаю користуватися публічними бібліотеками."
    )
    assert "Почніть із /login" in welcome.text
    [help_text] = await command(bot, CHAT, "/help")
    assert help_text.text.startswith("Команди\n/login – підключити бібліотечний обліковий запис")
    assert "/events – найближчі події у вашій бібліотеці" in help_text.text  # the second half
    assert "<b>Команди</b>" in help_text.html
    # The login button, the page after the library's login and the chat's answer.
    [prompt] = await command(bot, CHAT, "/login")
    assert prompt.text.startswith("Натисніть кнопку, щоб увійти на сайті своєї бібліотеки.")
    await bot.connect(CHAT, KAREN, language_code="uk")
    page = bot.pages[-1]
    assert '<html lang="uk">' in page.text
    assert "Майже готово" in page.text and "Назад у Telegram" in page.text
    assert bot.telegram.sent(CHAT)[-1].text.startswith("✅ Підключено до вашої бібліотеки")

    [loans] = await command(bot, CHAT, "/loans")
    text = loans.text
    assert text.startswith("📚 Ваші видачі (7)")
    # Karen's loans: overdue by two days, due today, tomorrow and in three days.
    assert "прострочено на 2 дні" in text
    assert "(сьогодні)" in text and "(завтра)" in text and "(через 3 дні)" in text
    assert "\nпрострочено: 1 · повернути протягом 3 днів: 3\n" in text
    assert "(через 20 днів)" in text
    # Dates as Babel writes them for uk_UA ("24 лист."), no English left.
    assert re.search(r"повернути до \d{1,2} [а-яіїєґ]{3,5}\.", text), text
    assert not re.search(r"\b(due|overdue|today|tomorrow|days?)\b", text), text


async def test_a_second_card_in_ukrainian_agrees_and_lists_say_vydachi(bot: BotHarness) -> None:
    """Issue 34's Ukrainian: "Картка «Jonas» підключена" (a noun the participle agrees with),
    "видачі" for loans (not "позики", money loans) and "З поверненням!" with no name in it."""
    chat = CHAT + 5
    await bot.connect(chat, KAREN, language_code="uk")
    await bot.connect(chat, JONAS, language_code="uk")
    added = bot.telegram.sent(chat)[-1].text
    assert added.startswith("✅ Картка «Jonas» підключена"), added
    [back] = await command(bot, chat, "/start")
    assert back.text.startswith("👋 З поверненням! Вас підключено.")
    [loans] = await command(bot, chat, "/loans")
    assert loans.text.startswith("📚 Ваші видачі (8)") and "позик" not in loans.text
    assert "1 видача" in loans.text and "7 видач" in loans.text


async def test_language_offers_ukrainian_and_the_menu_follows(bot: BotHarness) -> None:
    # Every language has its command menu, the Ukrainian one in Ukrainian.
    assert [c["command"] for c in bot.telegram.commands["uk"]] == list(COMMANDS)
    described = {c["command"]: c["description"] for c in bot.telegram.commands["uk"]}
    assert described["loans"] == "Ваші видачі й терміни повернення"
    assert described["language"] == "Вибрати мову"
    bot.add_chat(CHAT + 1, language_code="uk")
    assert bot.telegram.chat_commands(CHAT + 1)[0]["description"] == "Вітання і як почати"

    # A Danish app: /language offers every language by its own name.
    bot.add_chat(CHAT + 2, language_code="da")
    prompt = await bot.send(CHAT + 2, "/language")
    assert prompt.text == "Vælg sprog. Nu: Automatisk (fra Telegram)."
    labels = [button.text for row in prompt.buttons for button in row]
    assert labels == ["Dansk", "English", "Українська", "Automatisk (fra Telegram)"]
    chosen = await bot.tap(CHAT + 2, prompt, "Українська")
    assert chosen is not None and chosen.text == "✅ Тепер мова – українська."
    assert (await bot.store.chats.chat(CHAT + 2)).language == "uk"
    # The chat's own menu is Ukrainian (set before the answer); the Danish default stays.
    assert bot.telegram.chat_commands(CHAT + 2)[0]["description"] == "Вітання і як почати"
    assert bot.telegram.commands[None][0]["description"] == "Velkomst og kom i gang"
    [help_text] = await command(bot, CHAT + 2, "/help")
    assert help_text.text.startswith("Команди\n")
    again = await bot.send(CHAT + 2, "/language")
    assert again.text == "Виберіть мову. Зараз: Українська."
    auto = await bot.tap(CHAT + 2, again, "Автоматично (з Telegram)")
    # Back to the app's language, which is Danish: the answer already is.
    assert auto is not None and auto.text == "✅ Jeg følger nu sproget i din Telegram."
    assert (await bot.store.chats.chat(CHAT + 2)).language is None


async def test_the_calendar_names_its_events_in_ukrainian(bot: BotHarness) -> None:
    await bot.connect(CHAT + 3, JONAS, language_code="uk")
    [made] = await command(bot, CHAT + 3, "/calendar")
    assert made.text.startswith("📅 Ваш бібліотечний календар")
    url = URL.search(made.text)
    assert url is not None
    found = await events(bot, url.group(1))
    summaries = sorted(summary for _, summary in found.values())
    assert summaries == ["📚 Повернути: Lykke-Per", "📦 Останній день, щоб забрати: Klara og solen"]


async def test_logging_out_in_ukrainian_ends_on_a_ukrainian_page(bot: BotHarness) -> None:
    await bot.connect(CHAT + 4, KAREN, language_code="uk")
    [reply] = await command(bot, CHAT + 4, "/logout")
    assert reply.text.startswith(
        "👋 Ви вийшли тут. Ваш доступ видалено, і бібліотека його скасувала."
    )
    [[button]] = reply.buttons
    assert button.text == "🚪 Вийти з бібліотечного входу"
    assert button.url is not None and "lang=uk" in button.url
    # Through the bot's page and the access service's logout, back to the bot's page: the
    # chat's language rides along, whatever the browser asks for.
    hop = await bot.http.get(button.url.replace(bot.info.public_url, bot.info.web_url))
    back = await bot.http.get(hop.headers["location"])
    page = await bot.http.get(
        back.headers["location"].replace(bot.info.public_url, bot.info.web_url),
        headers={"Accept-Language": "da"},
    )
    assert page.status_code == 200 and '<html lang="uk">' in page.text
    assert "Ви вийшли" in page.text and "Назад до чату" in page.text
    # A browser that asks for Ukrainian gets it without a chat behind it.
    direct = await bot.http.get(
        f"{bot.info.web_url}/oauth/callback",
        params={"message": "logout"},
        headers={"Accept-Language": "uk-UA,uk;q=0.9,en;q=0.8"},
    )
    assert direct.status_code == 200 and "Ви вийшли з бібліотечного входу" in direct.text
