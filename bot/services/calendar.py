"""Keeping a chat's calendar feed current between statuses: a renewal moves its event.

Statuses themselves are kept by `services.checks` (commands) and the sweep; this covers
what the bot learns without one, so the feed follows a renewal at once.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging

from bot.rules import calendar
from storage.store import Store

log = logging.getLogger(__name__)


async def renewed(store: Store, chat_id: int, loan_id: str, due: dt.date, number: int = 1) -> None:
    """The loan is now due on `due`: move its event (best effort, the next status fixes it)."""
    try:
        text = await store.calendar.entries_of(chat_id, number)
        if text is None:
            return
        uid = calendar.loan_uid(loan_id)
        entries = [
            dataclasses.replace(entry, day=due) if entry.uid == uid else entry
            for entry in calendar.loads(text)
        ]
        await store.calendar.remember(
            {(chat_id, number): calendar.dumps(calendar.ordered(entries))}
        )
    except Exception:
        log.warning("calendar: could not move a renewed loan of chat %s", chat_id, exc_info=True)
