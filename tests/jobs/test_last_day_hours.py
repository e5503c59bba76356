"""The last pick-up day names that day's opening hours, from the library's dated hours
(`/v3/library`, the platform's library schema), not the weekly free text (issue 25)."""

from __future__ import annotations

from bot.texts.formatting import format_date
from tests.fixtures.patrons import KAREN
from tests.jobs.conftest import Rig

CHAT = 2651


async def test_the_last_pick_up_day_gives_that_days_hours(rig: Rig) -> None:
    last_day = rig.day(2)  # Karen's ready hold's last day
    # The library changes that day's hours (and says why): the nudge must follow.
    for pages in rig.sandbox.content.items["library"].values():
        for page in pages:
            for entry in page["opening_hours"]:
                if entry["date"] == last_day.isoformat():
                    entry.update(start_time="12:00", end_time="15:30", notice="Personalemøde")
    await rig.connect(CHAT, KAREN, language="en")
    await rig.sweep()
    await rig.sweep(today=last_day)
    [told] = [text for text in rig.texts(CHAT) if "Last day to pick up: today" in text]
    when = format_date(last_day, "en", today=last_day)
    assert f"🕘 Open {when}: 12:00–15:30\nPersonalemøde" in told
    assert "as the library publishes them" not in told  # not the weekly free text


async def test_without_dated_hours_the_weekly_text_is_shown(rig: Rig) -> None:
    for pages in rig.sandbox.content.items["library"].values():
        for page in pages:
            page["opening_hours"] = []  # a library site that publishes no dated hours
    await rig.connect(CHAT + 1, KAREN, language="en")
    await rig.sweep()
    await rig.sweep(today=rig.day(2))
    [told] = [text for text in rig.texts(CHAT + 1) if "Last day to pick up: today" in text]
    assert "Opening hours, as the library publishes them:\nMon-Fri 08-20\nSat-Sun 10-16" in told
    assert "🕘 Open" not in told
