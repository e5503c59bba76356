"""What the bot keeps from each status a command fetched: the card's polling plan
(`rules.checks`) and, when the chat has one, its calendar feed's entries.

The sweep writes both with the reminders it settles; a command that fetched the status
updates them for free, and an order placed through the bot asks for a check tomorrow.
"""

from __future__ import annotations

import datetime as dt
import logging

from bot.config.settings import Settings
from bot.library.models import BorrowerStatus
from bot.rules import calendar, notices
from bot.rules.checks import next_check
from storage.store import Card, ChatSettings, Store

log = logging.getLogger(__name__)


async def refresh_plan(
    store: Store,
    settings: Settings,
    card: Card,
    status: BorrowerStatus,
    *,
    chat: ChatSettings | None = None,
) -> None:
    """A command fetched the status: plan from it, for free, and write it only when it moved.

    Best effort: the plan only saves calls, and a failure here must not spoil the patron's
    answer. `chat` is the chat's settings when the caller has them already.
    """
    today = dt.datetime.now(settings.timezone).date()
    try:
        if chat is None:
            chat = await store.chats.chat(card.chat_id)
        plan = next_check(
            status,
            seen=today,
            days=notices.plan_days(chat.thresholds(settings.REMINDER_DAYS), chat.notices),
            min_loan_days=settings.POLL_MIN_LOAN_DAYS,
            swept=False,
        )
        if card.order_check is not None:  # an order placed through the bot is watched
            plan = min(plan, max(card.order_check, today))
        if plan != card.next_check:
            await store.sweeps.set_next_checks({card.key: plan})
        if chat.has_calendar:
            await store.calendar.remember({card.key: calendar.dumps(calendar.entries(status))})
    except Exception:
        log.warning("polling: could not keep the status of chat %s", card.chat_id, exc_info=True)


async def watch_order(
    store: Store, settings: Settings, chat_id: int, pid: str, number: int = 1
) -> None:
    """An order placed through the bot: should it not show up in /v3/user within a day, the
    sweep tells the patron (`rules.notices`). Best effort, and only while the notice is on."""
    try:
        chat = await store.chats.chat(chat_id)
        if "orders" not in chat.notices:
            return
        placed = dt.datetime.now(dt.UTC)
        check = notices.order_check_day(placed, settings.timezone)
        await store.notices.watch_order(chat_id, pid, notices.placed_text(placed), check, number)
    except Exception:
        log.warning("notices: could not watch an order of chat %s", chat_id, exc_info=True)


async def check_soon(store: Store, settings: Settings, chat_id: int, number: int = 1) -> None:
    """Something changed that the last status does not show (an order was placed): the next
    sweep checks the card, and from then on its waiting hold keeps it daily."""
    today = dt.datetime.now(settings.timezone).date()
    try:
        await store.sweeps.set_next_checks({(chat_id, number): today})
    except Exception:
        log.warning("polling: could not plan a check of chat %s", chat_id, exc_info=True)
