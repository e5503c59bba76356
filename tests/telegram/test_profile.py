"""The bot's description and short description, in every language of the bot, set at start through
the Bot API stand-in: read back as a Telegram client would, not re-sent when unchanged, and a
refusal does not stop the bot. They are set in the background, so the tests wait for them."""

from __future__ import annotations

import asyncio
from typing import Any

from telegram import Bot

from bot import texts
from bot.texts import t
from tests.fixtures.bot import BotFactory
from tests.fixtures.telegram import TEST_BOT_TOKEN

LANGUAGES = len(texts.LANGUAGES) + 1  # each language and the default


async def _profile(telegram: Any, language_code: str | None) -> tuple[str, str]:
    async with Bot(TEST_BOT_TOKEN, base_url=f"{telegram.url}/bot") as client:
        description = await client.get_my_description(language_code=language_code)
        short = await client.get_my_short_description(language_code=language_code)
    return description.description, short.short_description


def _expected(lang: str) -> tuple[str, str]:
    return t(lang, "profile.description"), t(lang, "profile.short_description")


async def _until_read(telegram: Any, times: int) -> None:
    """Until the bot has read the short description `times` times (its last step per language)."""
    async with asyncio.timeout(30):
        while telegram.calls["getMyShortDescription"] < times:  # noqa: ASYNC110
            await asyncio.sleep(0.02)


async def test_descriptions_in_every_language(bot_factory: BotFactory, telegram: Any) -> None:
    await bot_factory()
    await _until_read(telegram, LANGUAGES)
    async with asyncio.timeout(30):
        # The default is set last, and its last set may still be in flight.
        while await _profile(telegram, None) != _expected("da"):  # noqa: ASYNC110
            await asyncio.sleep(0.02)
    for lang in texts.LANGUAGES:
        assert await _profile(telegram, lang) == _expected(lang)
    assert (await _profile(telegram, None))[0].startswith("Dit bibliotek i Telegram")
    assert (await _profile(telegram, "uk"))[1].startswith("Видачі, бронювання")
    # Another app language sees the default: Danish.
    assert await _profile(telegram, "de") == _expected("da")
    assert telegram.calls["setMyDescription"] == LANGUAGES

    # A second start (a restart, another process) finds them set and sends none again.
    reads = telegram.calls["getMyShortDescription"]
    await bot_factory()
    await _until_read(telegram, reads + LANGUAGES)
    assert telegram.calls["setMyDescription"] == LANGUAGES


async def test_a_refused_description_does_not_stop_the_bot(
    bot_factory: BotFactory, telegram: Any
) -> None:
    # A 429 asking for an hour: the bot starts and answers meanwhile.
    telegram.failures.fail("setMyDescription", 429, retry_after=3600, times=10)
    bot = await bot_factory()
    chat = 7501
    bot.add_chat(chat, language_code="en")
    reply = await bot.send(chat, "/help")
    assert "/loans" in reply.text
