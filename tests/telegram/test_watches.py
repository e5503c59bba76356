"""Shelf watches: "🔔 Tell me when it is back at <branch>" under /where, /watches, and the check
that pings once when a copy is back on the shelf there."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import update

from storage.tables import SHELF_WATCH
from storage.watches import MAX_WATCHES
from tests.fixtures.bot import BotHarness
from tests.fixtures.chat import buttons, command
from tests.fixtures.jobs import shelf_checker, sweeper
from tests.fixtures.patrons import KAREN, OLE

FARM = "870970-basis:27247164"  # "Den afrikanske farm": lent out at Nørrebro
FARM_FAUST = "27247164"
NORREBRO = "DK-710117"
WAIT_NORREBRO = "🔔 Tell me when it is back at Nørrebro Bibliotek"
HOLDINGS = "platform GET /v3/holdingsitems"


async def watch_farm(bot: BotHarness, chat_id: int) -> None:
    await bot.connect(chat_id, OLE, language_code="en")
    [where] = await command(bot, chat_id, f"/where {FARM}")
    assert WAIT_NORREBRO in buttons(where)  # lent out there, none on its shelf
    await bot.tap(chat_id, where, WAIT_NORREBRO)
    told = await bot.telegram.wait_for(chat_id, "🔔 I will tell you", after=where.message_id)
    assert "Den afrikanske farm" in told.text and "Nørrebro Bibliotek" in told.text


async def test_a_watch_fires_once_when_the_copy_is_back(bot: BotHarness) -> None:
    await watch_farm(bot, 80)
    [listed] = await command(bot, 80, "/watches")
    assert "• Den afrikanske farm at Nørrebro Bibliotek, since " in listed.text
    async with shelf_checker(bot) as check:
        nothing = await check()
        assert (nothing.watches, nothing.calls, nothing.fired) == (1, 1, 0)
        before = len(bot.telegram.sent(80))
        bot.sandbox.shelves.put_back(FARM_FAUST, NORREBRO)
        fired = await check()
        assert fired.fired == 1
        ping = bot.telegram.sent(80)[-1]
        assert len(bot.telegram.sent(80)) == before + 1
        assert ping.text.startswith("🔔 Den afrikanske farm is on the shelf at Nørrebro Bibliotek")
        assert "You find it at: Voksen › Skønlitteratur › Blixen" in ping.text
        assert buttons(ping) == ["📥 Order it", "🗺 Where is it?"]
        # Never again: the watch is gone.
        again = await check()
        assert (again.watches, again.fired) == (0, 0)
    assert len(bot.telegram.sent(80)) == before + 1
    [empty] = await command(bot, 80, "/watches")
    assert empty.text.startswith("🔔 You are not waiting for any title.")


async def test_one_call_per_library_and_twenty_titles(bot: BotHarness) -> None:
    await watch_farm(bot, 81)
    await watch_farm(bot, 82)  # a second chat waiting for the same title at the same branch
    calls = bot.sandbox.calls[HOLDINGS]
    async with shelf_checker(bot) as check:
        report = await check()
    assert report.watches == 2 and report.calls == 1
    assert bot.sandbox.calls[HOLDINGS] == calls + 1


async def test_stop_a_watch_and_at_most_ten(bot: BotHarness) -> None:
    await watch_farm(bot, 83)
    [listed] = await command(bot, 83, "/watches")
    stop = next(label for label in buttons(listed) if label.startswith("✖ Stop: Den afrikanske"))
    await bot.tap(83, listed, stop)
    told = await bot.telegram.wait_for(83, "🔕", after=listed.message_id)
    assert "stopped waiting for Den afrikanske farm at Nørrebro Bibliotek" in told.text
    assert await bot.store.watches.of_chat(83) == []
    for number in range(MAX_WATCHES):
        assert await bot.store.watches.add(83, 1, f"870970-basis:{number}", "B", "DK-1", "T") == (
            "added"
        )
    assert await bot.store.watches.add(83, 1, FARM, "Nørrebro Bibliotek", "DK-710100", "F") == (
        "full"
    )


async def test_a_watch_ends_after_sixty_days_with_a_last_message(bot: BotHarness) -> None:
    await watch_farm(bot, 84)
    old = dt.datetime.now(dt.UTC) - dt.timedelta(days=61)
    statement = update(SHELF_WATCH).where(SHELF_WATCH.c.chat_id == 84).values(created_at=old)
    await bot.store.database.run(lambda conn: conn.execute(statement))
    async with shelf_checker(bot) as check:
        report = await check()
    assert report.ended == 1 and report.fired == 0
    last = bot.telegram.sent(84)[-1]
    assert last.text.startswith("🔕 Den afrikanske farm has not come back to the shelf")
    assert await bot.store.watches.of_chat(84) == []


async def test_a_watch_dies_with_its_card_and_with_an_order(bot: BotHarness) -> None:
    await watch_farm(bot, 85)
    await command(bot, 85, "/logout")
    assert await bot.store.watches.of_chat(85) == []
    await watch_farm(bot, 86)
    [ask] = await command(bot, 86, f"/order {FARM}")
    done = await bot.tap(86, ask, "📥 Yes, order it")
    assert done is not None and "is ordered" in done.text
    assert await bot.store.watches.of_chat(86) == []


async def test_a_watch_ends_when_the_card_borrows_the_title(bot: BotHarness) -> None:
    await watch_farm(bot, 87)
    # Borrowed at the library's counter, not through the bot: the sweep sees it on loan.
    due = bot.sandbox.today + dt.timedelta(days=28)
    bot.sandbox.patron_data(OLE).loans.append(
        {
            "loanId": "4999001",
            "dueDate": due.isoformat(),
            "title": "Den afrikanske farm",
            "creator": "Karen Blixen",
            "materialId": "527247164",
            "titleId": FARM_FAUST,
        }
    )
    async with sweeper(bot) as sweep:
        await sweep()
    assert await bot.store.watches.of_chat(87) == []
    async with shelf_checker(bot) as check:
        bot.sandbox.shelves.put_back(FARM_FAUST, NORREBRO)
        assert (await check()).fired == 0


async def test_a_card_that_borrows_the_title_is_not_set_waiting_for_it(bot: BotHarness) -> None:
    """Karen has Den afrikanske farm on loan: her watch of it would ping of a copy on the
    shelf while hers is at home, so the tap says there is nothing to wait for."""
    await bot.connect(88, KAREN, language_code="en")
    [where] = await command(bot, 88, f"/where {FARM}")
    await bot.tap(88, where, WAIT_NORREBRO)
    told = await bot.telegram.wait_for(88, "nothing to wait for", after=where.message_id)
    assert told.text == (
        "ℹ️ This card already has Den afrikanske farm on loan or on hold, so there is nothing "
        "to wait for. See /loans and /holds."
    )
    assert await bot.store.watches.of_chat(88) == []
