"""What a sweep leaves for the next pass's order, and its leases kept while it works."""

from __future__ import annotations

import asyncio
from datetime import date, timedelta

from tests.fixtures.patrons import JONAS, KAREN, OLE
from tests.fixtures.storage import rows
from tests.jobs.conftest import Rig

KAREN_CHAT, JONAS_CHAT, OLE_CHAT = 531, 532, 533


async def test_a_sweep_keeps_what_orders_the_next_pass(rig: Rig) -> None:
    for chat_id, patron in ((KAREN_CHAT, KAREN), (JONAS_CHAT, JONAS), (OLE_CHAT, OLE)):
        await rig.connect(chat_id, patron)
    await rig.sweep()
    found = {
        int(str(chat_id)): (None if due is None else date.fromisoformat(str(due)), bool(ready))
        for chat_id, due, ready in await rows(
            rig.store, "SELECT chat_id, first_due, hold_ready FROM card"
        )
    }
    karen_due, _ = found[KAREN_CHAT]
    assert karen_due is not None and karen_due < rig.sandbox.today  # overdue: first in line
    assert found[JONAS_CHAT] == (rig.day(3), True)  # a hold ready: before even that
    assert found[OLE_CHAT] == (None, False)  # nothing on loan, nothing ready: last


async def test_a_slow_sweep_keeps_its_lease_by_heartbeat(rig: Rig) -> None:
    await rig.connect(KAREN_CHAT, KAREN)
    rig.sandbox.faults.latency["platform"] = 4.0  # the card stays at work a while
    lease = timedelta(seconds=0.6)  # renewed every 0.2 s
    sweeping = asyncio.create_task(rig.sweep(lease=lease, worker="slow"))

    async def lease_until() -> object:
        [(until,)] = await rows(rig.store, "SELECT lease_until FROM card")
        return until

    async with asyncio.timeout(10):
        while (first := await lease_until()) is None:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        while (later := await lease_until()) == first:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
    assert later is not None and str(later) > str(first)  # renewed while at work
    report = await sweeping
    assert report.messages == 1 and len(rig.telegram.sent(KAREN_CHAT)) == 1
    assert await lease_until() is None  # finished: the lease ended with it


async def test_a_pass_running_into_the_next_hour_becomes_that_hours_pass(rig: Rig) -> None:
    await rig.connect(KAREN_CHAT, KAREN)
    await rig.connect(JONAS_CHAT, JONAS)
    await rig.store.chats.set_reminder_hour(KAREN_CHAT, 8)
    await rig.store.chats.set_reminder_hour(JONAS_CHAT, 9)
    read: list[int] = []

    def hours() -> tuple[date, int, int]:
        # 8 o'clock for the first batch, then the clock turns 9 while the pass still runs.
        read.append(8 if not read else 9)
        return rig.sandbox.today, read[-1], 24

    report = await rig.sweep(hours=hours, batch_size=1, concurrency=1)
    assert report.patrons == 2  # Jonas's hour came during the pass: not left to a next one
    assert len(rig.telegram.sent(KAREN_CHAT)) == len(rig.telegram.sent(JONAS_CHAT)) == 1
