"""The sweep keeps the calendar feeds it passes current, and only those."""

from __future__ import annotations

import datetime as dt

from bot.library.models import parse_library_date
from bot.rules import calendar
from tests.fixtures.patrons import KAREN, OLE
from tests.jobs.conftest import Rig


async def test_the_sweep_writes_the_entries_of_chats_with_a_feed(rig: Rig) -> None:
    await rig.connect(1, KAREN)
    await rig.connect(2, OLE)
    secret = await rig.store.calendar.create(1, {1: "[]"})
    await rig.sweep()
    feed = await rig.store.calendar.open(secret)
    assert feed is not None and feed.cards[0].entries is not None
    days = {entry.title: entry.day for entry in calendar.loads(feed.cards[0].entries)}
    for loan in rig.sandbox.patron_data(KAREN).loans:
        due = parse_library_date(loan["dueDate"])
        if isinstance(due, dt.date):
            assert days[loan["title"]] == due
    assert await rig.store.calendar.entries_of(2) is None  # no feed: nothing kept
