"""`/reminders`: show the reminder settings, turn them on or off, choose the days."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from telegram import Update
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from bot.actions import cards as card_actions
from bot.actions import chats
from bot.actions.vocabulary import NOTICES
from bot.telegram.buttons import Payload, ReminderChoice, decode
from bot.telegram.context import Context
from bot.telegram.keyboards import callback_buttons, resolve_callback
from bot.telegram.replies import reply
from bot.texts import Raw, t
from bot.texts.formatting import join_and

MAX_DAY = 30
MAX_VALUES = 5
PRESETS: tuple[tuple[int, ...], ...] = ((3, 1, 0), (7, 3, 1), (5, 2, 0), (1, 0))
WORDS_ON = frozenset({"on", "til", "ja", "yes"})
WORDS_OFF = frozenset({"off", "fra", "nej", "no"})
# "/reminders at 7", "kl. 7", "о 7" or "/reminders 7:30": the hour the reminders come.
WORDS_AT = frozenset({"at", "kl", "kl.", "klokken", "о", "об"})
# A time of day as written: 7, 07:30, 7.30 (the Danish way) or 7,30; checked for range below.
_CLOCK = re.compile(r"^(\d{1,2})(?:[:.,](\d{2}))?$")
# A lone word meant as a time: a colon, or the Danish 7.30 (a 5.2.0 is days, said wrongly).
_LIKE_TIME = re.compile(r"^.*:.*$|^\d+\.\d+$")
# The hours offered as buttons (any hour can be typed).
HOUR_PRESETS = (7, 12, 18)


@dataclass(frozen=True, slots=True)
class BadTime:
    """Words that mean a time of day the bot cannot use: not a time at all (`hour` None), or
    a time off the sweep's minute, with the hour of the pass just before it (the sweep passes
    hourly, so a chat chooses the hour only)."""

    hour: int | None = None


def parse_hour(words: Sequence[str], minute: int = 0) -> int | BadTime | None:
    """The hour of `at 7`, `kl. 7:30`, `7:30` or `7.30`; `BadTime` when the words are a time
    that is not one (25:00, 7:75) or does not fall on the sweep's `minute`; None when the
    words say no time of day (they may be days)."""
    if len(words) == 2 and words[0] in WORDS_AT:
        text = words[1]
    elif len(words) == 1 and _LIKE_TIME.match(words[0]):
        text = words[0]
    else:
        return None
    found = _CLOCK.match(text)
    if found is None or not text.isascii():
        return BadTime()
    hour = int(found.group(1))
    given = int(found.group(2)) if found.group(2) is not None else minute
    if hour > 23 or given > 59:
        return BadTime()
    if given != minute:
        return BadTime(hour if given > minute else (hour - 1) % 24)
    return hour


def clock(hour: int, minute: int) -> str:
    return f"{hour:02d}:{minute:02d}"


def parse_days(words: Sequence[str]) -> tuple[int, ...] | None:
    """`5 2 0` or `5,2,0` as thresholds largest first; None unless 1..5 whole numbers 0..30."""
    parts = [part for word in words for part in re.split(r"[,;]+", word) if part]
    if not parts or len(parts) > MAX_VALUES:
        return None
    if not all(part.isascii() and part.isdigit() for part in parts):
        return None
    days = {int(part) for part in parts}
    if max(days) > MAX_DAY:
        return None
    return tuple(sorted(days, reverse=True))


def join_days(days: Sequence[int], lang: str) -> str:
    """`3, 1 og 0` / `3, 1 and 0`."""
    return join_and([str(day) for day in days], lang)


async def _status(update: Update, context: Context, lead: str | None = None) -> None:
    """The settings as they are now, with buttons to change them."""
    lang = context.lang
    chat_id = context.chat_id
    svc = context.services
    chat = await chats.settings(svc, chat_id)
    days = chat.thresholds(svc.settings.REMINDER_DAYS)
    lines = [lead] if lead else []
    # Any usable card, not only card 1 (which may have lapsed beside a live one).
    connected = bool(await card_actions.of_chat(svc, chat_id))
    if not connected:
        # Reminders need a library account to read the loans from: say so before the settings.
        lines.append(t(lang, "reminders.status.no_account"))
    if chat.reminders_enabled:
        # One day reads "1 day"; a list of them takes the plural.
        count = days[0] if len(days) == 1 else len(days)
        # "0 = on the day" explains a 0 only where there is one.
        key = "reminders.status.days_zero" if 0 in days else "reminders.status.days"
        described = t(lang, key, days=join_days(days, lang), count=count)
        if chat.reminder_days is None:
            described = Raw(f"{described} {t(lang, 'reminders.status.default')}")
        lines.append(t(lang, "reminders.status.on", days=described))
        at = svc.settings.REMINDER_TIME
        hour = chat.reminder_hour if chat.reminder_hour is not None else at.hour
        # The default's note inside the sentence, before its full stop.
        key = (
            "reminders.status.time"
            if chat.reminder_hour is not None
            else "reminders.status.time_default"
        )
        lines.append(t(lang, key, time=clock(hour, at.minute)))
        lines.append(t(lang, "reminders.status.ready"))
    else:
        lines.append(t(lang, "reminders.status.off"))
    lines.append(
        t(lang, "reminders.status.howto", time=clock(7, svc.settings.REMINDER_TIME.minute))
    )
    # One line per notice, marked as its button is.
    notice_lines = [t(lang, "notices.heading")]
    for name in NOTICES:
        notice_lines.append(
            t(
                lang,
                "notices.line",
                mark="✅" if name in chat.notices else "⬜",
                name=t(lang, f"notices.name.{name}"),
                what=t(lang, f"notices.what.{name}"),
            )
        )
    lines.append("\n".join(notice_lines))
    op = "off" if chat.reminders_enabled else "on"
    specs: list[tuple[str, Payload]] = [(t(lang, f"reminders.button.{op}"), ReminderChoice(op))]
    for preset in PRESETS:
        label = t(lang, "reminders.button.days", days=", ".join(str(day) for day in preset))
        if chat.reminders_enabled and tuple(days) == preset:
            label = f"✓ {label}"
        specs.append((label, ReminderChoice("days", preset)))
    for name in NOTICES:
        on = name in chat.notices
        label = f"{'✅' if on else '⬜'} {t(lang, f'notices.name.{name}')}"
        specs.append((label, ReminderChoice("notice", notice=name, on=not on)))
    minute = svc.settings.REMINDER_TIME.minute
    for hour in HOUR_PRESETS:
        label = t(lang, "reminders.button.hour", time=clock(hour, minute))
        if chat.reminder_hour == hour:
            label = f"✓ {label}"
        specs.append((label, ReminderChoice("hour", hour=hour)))
    toggle, *rest = await callback_buttons(update, context, specs)
    presets, rest = rest[: len(PRESETS)], rest[len(PRESETS) :]
    notices, hours = rest[: len(NOTICES)], rest[len(NOTICES) :]
    rows = [[toggle], presets[:2], presets[2:], hours, *([button] for button in notices)]
    await reply(update, context, "\n\n".join(lines), buttons=rows)


async def reminders_command(update: Update, context: Context) -> None:
    lang = context.lang
    svc = context.services
    chat_id = context.chat_id
    words = [word.lower() for word in (context.args or [])]
    if not words:
        await _status(update, context)
        return
    if len(words) == 1 and words[0] in WORDS_ON | WORDS_OFF:
        op = "on" if words[0] in WORDS_ON else "off"
        await chats.set_reminders(svc, chat_id, enabled=op == "on")
        await _status(update, context, t(lang, "reminders.saved.days"))
        return
    minute = context.services.settings.REMINDER_TIME.minute
    hour = parse_hour(words, minute)
    if isinstance(hour, BadTime):
        await reply(update, context, _bad_time(lang, hour, minute))
        return
    if hour is not None:
        await chats.set_reminder_hour(svc, chat_id, hour)
        await _status(update, context, t(lang, "reminders.saved.days"))
        return
    days = parse_days(words)
    if days is None:
        await reply(update, context, t(lang, "reminders.invalid", max=MAX_VALUES, limit=MAX_DAY))
        return
    # Choosing days means wanting reminders, so it turns them on as well.
    await chats.set_reminders(svc, chat_id, enabled=True, days=days)
    await _status(update, context, t(lang, "reminders.saved.days"))


def _bad_time(lang: str, bad: BadTime, minute: int) -> str:
    """Why the time cannot be used, with times that can."""
    if bad.hour is None:
        return t(lang, "reminders.bad_time", last=clock(23, minute), example=clock(7, minute))
    return t(
        lang,
        "reminders.on_the_hour",
        earlier=clock(bad.hour, minute),
        later=clock((bad.hour + 1) % 24, minute),
    )


async def reminders_button(update: Update, context: Context) -> None:
    ref = await resolve_callback(update, context)
    if ref is None:
        return
    lang = context.lang
    svc = context.services
    choice = decode(ref.payload, ReminderChoice)
    op = choice.op if choice is not None else None
    if op in ("on", "off"):
        await chats.set_reminders(svc, ref.chat_id, enabled=op == "on")
        await _status(update, context, t(lang, "reminders.saved.days"))
    elif op == "days":
        days = parse_days([str(day) for day in (choice.days if choice else None) or ()])
        if days is None:
            await reply(update, context, t(lang, "reminders.expired_button"))
            return
        await chats.set_reminders(svc, ref.chat_id, enabled=True, days=days)
        await _status(update, context, t(lang, "reminders.saved.days"))
    elif op == "hour" and choice is not None and choice.hour is not None and 0 <= choice.hour < 24:
        await chats.set_reminder_hour(svc, ref.chat_id, choice.hour)
        await _status(update, context, t(lang, "reminders.saved.days"))
    elif op == "notice" and choice is not None and choice.notice in NOTICES:
        chat = await chats.settings(svc, ref.chat_id)
        wanted = {choice.notice} if choice.on else set()
        enabled = (chat.notices - {choice.notice}) | wanted
        await chats.set_notices(svc, ref.chat_id, frozenset(enabled))
        await _status(update, context, t(lang, "reminders.saved.days"))
    else:
        await reply(update, context, t(lang, "reminders.expired_button"))


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("reminders", reminders_command),
        CallbackQueryHandler(reminders_button, pattern=rf"^{ReminderChoice.ACTION}:"),
    ]
