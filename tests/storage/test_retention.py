"""How long things are kept (docs/reliability.md, "What is stored about a patron"): the hourly
purge."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import timedelta

from storage.store import BLOCKED_CHAT_RETENTION, CALLBACK_TTL, REMINDER_HISTORY, Store
from tests.fixtures.storage import FakeClock, rows

OpenStore = Callable[..., AbstractAsyncContextManager[Store]]


async def test_reminder_history_is_kept_90_days(open_store: OpenStore, clock: FakeClock) -> None:
    async with open_store() as store:
        await store.reminder_log.mark_sent(1, ["loan:L1:2026-01-23:3"])
        clock.advance(REMINDER_HISTORY - timedelta(days=1))
        await store.reminder_log.mark_sent(1, ["loan:L2:2026-04-23:3"])
        assert await store.purge_expired() == 0
        clock.advance(timedelta(days=1))
        assert await store.purge_expired() == 1
        assert await rows(store, "SELECT key FROM reminder_log") == [("loan:L2:2026-04-23:3",)]


async def test_buttons_are_kept_a_day(open_store: OpenStore, clock: FakeClock) -> None:
    async with open_store() as store:
        [button] = await store.callbacks.put_callbacks(1, [("renew", {"loan_id": "L1"})])
        clock.advance(CALLBACK_TTL)
        assert await store.callbacks.callback(button, 1) is None
        assert await store.purge_expired() == 1
        assert await rows(store, "SELECT id FROM callback_ref") == []


async def test_renewal_claims_go_once_their_day_is_past(
    open_store: OpenStore, clock: FakeClock
) -> None:
    async with open_store() as store:
        today = clock.now.date()
        assert await store.notices.claim_renewal(1, "L1", today)
        clock.advance(timedelta(days=1))
        assert await store.purge_expired() == 0  # a day's margin for the time zones
        clock.advance(timedelta(days=1))
        assert await store.notices.claim_renewal(1, "L2", clock.now.date())
        assert await store.purge_expired() == 1
        assert await rows(store, "SELECT item FROM notice_seen") == [("renewed:L2",)]


async def test_settings_of_a_chat_that_blocked_the_bot_go_after_90_days(
    open_store: OpenStore, clock: FakeClock
) -> None:
    async with open_store() as store:
        await store.chats.set_language(1, "en")  # still talking to the bot: kept
        await store.chats.set_language(2, "en")
        await store.chats.set_active(2, False)  # blocked the bot
        await store.chats.set_language(3, "en")
        await store.chats.set_active(3, False)  # blocked, but still connected
        code = await store.create_pending_link(3, "token-3", None, {"uniqueId": "u-3"})
        assert await store.complete_link(3, code) is not None
        clock.advance(BLOCKED_CHAT_RETENTION - timedelta(minutes=1))
        assert await store.purge_expired() == 0
        clock.advance(timedelta(minutes=1))
        assert await store.purge_expired() == 1
        assert (await store.chats.chat(2)).language is None
        assert (await store.chats.chat(1)).language == "en" and (
            await store.chats.chat(3)
        ).language == "en"
