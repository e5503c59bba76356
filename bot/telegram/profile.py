"""The bot's profile texts, in every language of the bot, set at start (best effort).

Telegram shows the description in an empty chat before /start and the short description on
the bot's profile. Each is read first and written only when it differs, so restarts do not
spend Telegram's tight limits on these methods; a refusal is logged, never raised (a bot
without them still works). The language-less default is Danish, as the command menu's is.
"""

from __future__ import annotations

import asyncio
import logging

from telegram import Bot

from bot.texts import DEFAULT_LANGUAGE, LANGUAGES, t

log = logging.getLogger(__name__)

# (text language, Telegram's language_code): the default (None) is what other apps see.
PROFILE_LANGUAGES: tuple[tuple[str, str | None], ...] = (
    *((lang, lang) for lang in LANGUAGES),
    (DEFAULT_LANGUAGE, None),
)


async def _set_one(bot: Bot, lang: str, language_code: str | None) -> None:
    description = t(lang, "profile.description")
    short = t(lang, "profile.short_description")
    try:
        current = await bot.get_my_description(language_code=language_code)
        if current.description != description:
            await bot.set_my_description(description, language_code=language_code)
        current_short = await bot.get_my_short_description(language_code=language_code)
        if current_short.short_description != short:
            await bot.set_my_short_description(short, language_code=language_code)
    except Exception as exc:  # cosmetic: any failure is logged and the start goes on
        log.warning(
            "the bot's description (%s) was not set: %s",
            language_code or "default",
            type(exc).__name__,
        )


async def set_profile(bot: Bot) -> None:
    """The description and short description in each language, where they differ."""
    await asyncio.gather(*(_set_one(bot, lang, code) for lang, code in PROFILE_LANGUAGES))
