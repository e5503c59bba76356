"""The polling plan in the store: the sweep calls a card only on its planned day, writes the next
plan, and a command's fresh status replaces it (sandbox, Telegram stand-in, real SQLite)."""

from __future__ import annotations

from datetime import date, timedelta

from sqlalchemy import select

from storage.store import Store
from storage.tables import CARD
from tests.fixtures.bot import BotHarness
from tests.fixtures.chat import command
from tests.fixtures.patrons import KAREN, LITTLE_PRINCE, OLE
from tests.jobs.conftest import Rig

KAREN_CHAT = 601  # loans due today and tomorrow: checked daily
OLE_CHAT = 602  # nothing on loan: left alone until a new loan could need a reminder
USER_CALLS = "platform GET /v3/user"


async def planned(store: Store, chat_id: int) -> date | None:
    query = select(CARD.c.next_check).where(CARD.c.chat_id == chat_id)
    found: date | None = await store.database.run(lambda conn: conn.execute(query).scalar())
    return found


async def test_a_card_planned_away_is_not_called_until_its_day(rig: Rig) -> None:
    await rig.connect(KAREN_CHAT, KAREN)
    await rig.connect(OLE_CHAT, OLE)
    today = rig.sandbox.today

    def day(offset: int) -> date:
        return today + timedelta(days=offset)

    first = await rig.sweep(today=day(0))
    assert first.patrons == 2
    assert await planned(rig.store, KAREN_CHAT) == day(1)
    assert await planned(rig.store, OLE_CHAT) == day(4)  # 7-day loan period less 3 days

    # After the sweep Ole borrows a book for the shortest loan period.
    rig.sandbox.patron_data(OLE).loans.append(
        {"loanId": "9900001", "dueDate": day(7).isoformat(), "title": "Kort lån", "creator": "X"}
    )
    for offset in (1, 2, 3):
        calls = rig.sandbox.calls[USER_CALLS]
        report = await rig.sweep(today=day(offset))
        assert report.patrons == 1  # Karen only
        assert rig.sandbox.calls[USER_CALLS] == calls + 1
    assert rig.telegram.sent(OLE_CHAT) == []

    calls = rig.sandbox.calls[USER_CALLS]
    report = await rig.sweep(today=day(4))
    assert report.patrons == 2 and rig.sandbox.calls[USER_CALLS] == calls + 2
    [reminder] = rig.telegram.sent(OLE_CHAT)  # the 3-day reminder, on its day
    assert "Kort lån" in reminder.text
    assert await planned(rig.store, OLE_CHAT) == day(6)  # the 1-day reminder next


async def test_every_card_is_called_once_per_day_however_many_sweeps(rig: Rig) -> None:
    await rig.connect(KAREN_CHAT, KAREN)
    await rig.connect(OLE_CHAT, OLE)
    await rig.sweep()
    calls = rig.sandbox.calls[USER_CALLS]
    again = await rig.sweep()
    assert again.patrons == 0 and rig.sandbox.calls[USER_CALLS] == calls


async def test_a_command_refreshes_the_plan(bot: BotHarness) -> None:
    token = bot.sandbox.issue_token(OLE)
    code = await bot.store.create_pending_link(OLE_CHAT, token, None, {"uniqueId": OLE})
    assert await bot.store.complete_link(OLE_CHAT, code) is not None
    bot.telegram.add_chat(OLE_CHAT, language_code="en")
    today = bot.sandbox.today
    assert await planned(bot.store, OLE_CHAT) is None  # new: the next sweep checks it

    before = len(bot.telegram.sent(OLE_CHAT))
    await bot.telegram.send_text(OLE_CHAT, "/loans")
    await bot.next_message(OLE_CHAT, before)
    assert await planned(bot.store, OLE_CHAT) == today + timedelta(days=4)

    # A hold became ready: the command's status shows it, so today's sweep must look.
    bot.sandbox.patron_data(OLE).orders.append(
        {
            "orderId": "9900002",
            "status": "Available for pickup",
            "pickUpAgency": "DK-710100",
            "pickUpExpiryDate": (today + timedelta(days=6)).isoformat(),
            "title": "Klar bog",
        }
    )
    before = len(bot.telegram.sent(OLE_CHAT))
    await bot.telegram.send_text(OLE_CHAT, "/holds")
    await bot.next_message(OLE_CHAT, before)
    assert await planned(bot.store, OLE_CHAT) == today


async def test_new_thresholds_drop_the_plan(rig: Rig) -> None:
    await rig.connect(OLE_CHAT, OLE)
    await rig.sweep()
    assert await planned(rig.store, OLE_CHAT) == rig.sandbox.today + timedelta(days=4)
    await rig.store.set_reminders(OLE_CHAT, days=[6, 0])  # a 6-day reminder needs checks sooner
    assert await planned(rig.store, OLE_CHAT) is None
    report = await rig.sweep(today=rig.sandbox.today + timedelta(days=1))
    assert report.patrons == 1
    assert await planned(rig.store, OLE_CHAT) == rig.sandbox.today + timedelta(days=2)


async def test_an_order_makes_the_next_sweep_check_the_card(bot: BotHarness) -> None:
    await bot.connect(OLE_CHAT, OLE)
    await command(bot, OLE_CHAT, "/loans")
    today = bot.sandbox.today
    assert await planned(bot.store, OLE_CHAT) == today + timedelta(days=4)
    [ask] = await command(bot, OLE_CHAT, f"/order {LITTLE_PRINCE}")
    done = await bot.tap(OLE_CHAT, ask, "📥 Ja, bestil")
    assert done is not None and "er bestilt" in done.text
    assert await planned(bot.store, OLE_CHAT) == today  # its waiting hold keeps it daily then
