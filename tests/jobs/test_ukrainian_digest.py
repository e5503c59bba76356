"""Messages nobody asked for (the digest, the last pick-up day) in Ukrainian."""

from __future__ import annotations

import re

from bot.texts.formatting import format_date
from tests.fixtures.patrons import JONAS, KAREN
from tests.jobs.conftest import Rig

CHAT = 2611


async def test_the_digest_follows_a_ukrainian_telegram_app(rig: Rig) -> None:
    await rig.connect(CHAT, JONAS)
    await rig.store.chats.set_language(CHAT, None)  # never chose one with /language
    await rig.store.chats.set_telegram_language(CHAT, "uk")  # as every update leaves it
    await rig.sweep()
    [digest] = rig.telegram.sent(CHAT)
    lines = digest.text.splitlines()
    assert lines[0] == "🔔 Нагадування від вашого бібліотечного бота"
    assert "Скоро повертати" in lines and "Можна забрати" in lines
    # Jonas's loan is due in three days, his hold waits four: few (2-4) is "дні".
    assert re.fullmatch(
        r"Henrik Pontoppidan · повернути до \d{1,2} [а-яіїєґ]+\. \(через 3 дні\)",
        lines[lines.index("🟡 Lykke-Per") + 1],
    ), lines
    assert lines[-1] == "Вимкнути нагадування або вибрати дні можна через /reminders."
    buttons = [button.text for row in digest.buttons for button in row]
    assert buttons == ["Продовжити: Lykke-Per", "Продовжити ці"]


async def test_the_last_pick_up_day_shows_the_english_opening_hours(rig: Rig) -> None:
    """The platform publishes Danish and English hours, no Ukrainian: the English ones."""
    await rig.connect(CHAT + 1, KAREN, language="uk")
    await rig.sweep()
    await rig.sweep(today=rig.day(2))  # the ready hold's last day
    [told] = [
        text for text in rig.texts(CHAT + 1) if "Останній день, щоб забрати: сьогодні" in text
    ]
    # That day's hours, from the library's dated hours (`/v3/library`), with a Ukrainian date.
    last_day = rig.day(2)
    hours = "10:00–16:00" if last_day.weekday() >= 5 else "08:00–20:00"
    assert f"🕘 Відчинено {format_date(last_day, 'uk', today=last_day)}: {hours}" in told
