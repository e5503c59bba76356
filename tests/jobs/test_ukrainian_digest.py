"""The reminder digest, a message nobody asked for, in the Ukrainian of the patron's app."""

from __future__ import annotations

import re

from tests.fixtures.patrons import JONAS
from tests.jobs.conftest import Rig

CHAT = 2611


async def test_the_digest_follows_a_ukrainian_telegram_app(rig: Rig) -> None:
    await rig.connect(CHAT, JONAS)
    await rig.store.set_language(CHAT, None)  # never chose one with /language
    await rig.store.set_telegram_language(CHAT, "uk")  # as every update leaves it
    await rig.sweep()
    [digest] = rig.telegram.sent(CHAT)
    lines = digest.text.splitlines()
    assert lines[0] == "🔔 Нагадування від бібліотеки"
    assert "Скоро повертати" in lines and "Можна забрати" in lines
    # Jonas's loan is due in three days, his hold waits four: few (2-4) is "дні".
    assert re.fullmatch(
        r"Henrik Pontoppidan · повернути до \d{1,2} [а-яіїєґ]+\. \(через 3 дні\)",
        lines[lines.index("🟡 Lykke-Per") + 1],
    ), lines
    assert lines[-1] == "Вимкнути нагадування або вибрати дні можна через /reminders."
    buttons = [button.text for row in digest.buttons for button in row]
    assert buttons == ["Продовжити: Lykke-Per", "Продовжити всі"]
