"""/reminders as issue 25 asks: one line per notice, the bot's default called the bot's, the
"0 = on the day" note only with a 0, and the time of day the reminders come."""

from __future__ import annotations

from bot.texts import t
from storage.store import NOTICES
from tests.fixtures.bot import BotHarness
from tests.fixtures.patrons import JONAS, KAREN
from tests.jobs.conftest import Rig

CHAT = 2561
EARLY, LATE = 2571, 2572


async def test_one_line_per_notice_and_the_bots_default(bot: BotHarness) -> None:
    bot.add_chat(CHAT, language_code="en")
    status = await bot.send(CHAT, "/reminders")
    lines = status.text.splitlines()
    assert "3, 1 and 0 days before the due date (0 = on the day)" in status.text
    assert "(the bot's default)" in status.text and "library's default" not in status.text
    heading = lines.index("Notices (✅ on, ⬜ off; tap a button to change):")
    chat = await bot.store.chats.chat(CHAT)
    for offset, name in enumerate(NOTICES, start=1):
        mark = "✅" if name in chat.notices else "⬜"
        assert lines[heading + offset] == (
            f"{mark} {t('en', f'notices.name.{name}')}: {t('en', f'notices.what.{name}')}"
        )
    chosen = await bot.send(CHAT, "/reminders 5 2")
    assert "5 and 2 days before the due date, and when" in chosen.text
    [days] = [line for line in chosen.text.splitlines() if line.startswith("🔔 Reminders are on")]
    assert "0 = on the day" not in days and "default" not in days


async def test_danish_status_names_the_bot(bot: BotHarness) -> None:
    bot.add_chat(CHAT + 1, language_code="da")
    status = await bot.send(CHAT + 1, "/reminders 7 3")
    assert "0 = på selve afleveringsdagen" not in status.text
    default = await bot.send(CHAT + 1, "/reminders 3 1 0")
    assert "(0 = på selve afleveringsdagen)" in default.text


async def test_the_patron_chooses_the_time_of_day(bot: BotHarness) -> None:
    bot.add_chat(CHAT + 2, language_code="en")
    minute = f"{bot.settings.REMINDER_TIME.minute:02d}"
    status = await bot.send(CHAT + 2, "/reminders")
    default = f"⏰ They come at about {bot.settings.REMINDER_TIME.hour:02d}:{minute}"
    assert f"{default} (the bot's default)." in status.text.splitlines()
    typed = await bot.send(CHAT + 2, f"/reminders 7:{minute}")
    assert f"⏰ They come at about 07:{minute}." in typed.text.splitlines()
    assert (await bot.store.chats.chat(CHAT + 2)).reminder_hour == 7
    tapped = await bot.tap(CHAT + 2, typed, f"⏰ 18:{minute}")
    assert tapped is not None and f"⏰ They come at about 18:{minute}." in tapped.text
    assert f"✓ ⏰ 18:{minute}" in buttons_of(tapped)
    assert (await bot.store.chats.chat(CHAT + 2)).reminder_hour == 18
    danish = await bot.send(CHAT + 2, "/reminders kl. 6")
    assert (await bot.store.chats.chat(CHAT + 2)).reminder_hour == 6 and "06:" in danish.text


async def test_a_time_is_read_as_written_or_refused_in_words_about_times(
    bot: BotHarness,
) -> None:
    """7:30 is not quietly 07:00, and 25:00 is not answered about days; nothing is saved."""
    chat = CHAT + 3
    bot.add_chat(chat, language_code="en")
    minute = bot.settings.REMINDER_TIME.minute
    mm = f"{minute:02d}"
    await bot.send(chat, f"/reminders 8:{mm}")
    assert (await bot.store.chats.chat(chat)).reminder_hour == 8
    off = 30 if minute != 30 else 15
    earlier, later = (7, 8) if off > minute else (6, 7)
    told = await bot.send(chat, f"/reminders 7:{off}")
    assert told.text == (
        f"Reminders go out once an hour (0{earlier}:{mm}, 0{later}:{mm} and so on), so I "
        f"cannot send them at that exact time. Choose 0{earlier}:{mm} or 0{later}:{mm}, "
        f"e.g. /reminders 0{later}:{mm}."
    )
    for typed in ("25:00", "7:75", "kl. 24", "at seven"):
        bad = await bot.send(chat, f"/reminders {typed}")
        assert bad.text.startswith("That is not a time of day. Give a time from 00:00 to 23:"), (
            typed
        )
        assert "days" not in bad.text
    assert (await bot.store.chats.chat(chat)).reminder_hour == 8
    # Danes write 7.30 and "kl. 7.30": the hour is taken when the minutes are the sweep's.
    danish = await bot.send(chat, f"/reminders kl. 6.{mm}")
    assert (await bot.store.chats.chat(chat)).reminder_hour == 6 and "06:" in danish.text
    await bot.send(chat, f"/reminders 21.{mm}")
    assert (await bot.store.chats.chat(chat)).reminder_hour == 21
    wrong_days = await bot.send(chat, "/reminders 5.2.0")  # days, badly written: about days
    assert wrong_days.text.startswith("I did not understand that. Give up to 5 whole numbers")
    days = await bot.send(chat, "/reminders 5 2 0")  # days stay days
    assert "5, 2 and 0 days before" in days.text


def buttons_of(message: object) -> list[str]:
    return [button.text for row in message.buttons for button in row]  # type: ignore[attr-defined]


async def test_the_hourly_sweep_honours_each_chats_hour_exactly_once(rig: Rig) -> None:
    """The hourly pass (`jobs.schedule`): a chat is swept once a day, at the first pass at or
    after its hour; chats that chose none at `REMINDER_TIME`'s hour."""
    await rig.connect(EARLY, JONAS)
    await rig.connect(LATE, KAREN)
    await rig.store.chats.set_reminder_hour(LATE, 18)
    await rig.sweep(hour=8, default_hour=9)
    assert rig.texts(EARLY) == [] and rig.texts(LATE) == []  # nobody's hour yet
    await rig.sweep(hour=9, default_hour=9)
    assert len(rig.texts(EARLY)) == 1 and rig.texts(LATE) == []
    for hour in (10, 17):
        await rig.sweep(hour=hour, default_hour=9)
    assert len(rig.texts(EARLY)) == 1 and rig.texts(LATE) == []
    await rig.sweep(hour=18, default_hour=9)
    late = len(rig.texts(LATE))
    assert late >= 1 and len(rig.texts(EARLY)) == 1
    await rig.sweep(hour=23, default_hour=9)  # a later pass the same day: nothing again
    assert len(rig.texts(LATE)) == late and len(rig.texts(EARLY)) == 1
