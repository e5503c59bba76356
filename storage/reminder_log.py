"""The reminder ledger (table `reminder_log`): per chat and reminder key, "intent" before a
message goes out and "sent" once Telegram took it, so that no reminder is sent twice."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from sqlalchemy import bindparam, delete, select, tuple_, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.expression import Executable

from storage.database import Repository, chunks
from storage.tables import REMINDER_LOG

# Reminder history: long enough that a loan or hold is not reminded twice for the same due
# date or pick-up; a loan still overdue after this gets its overdue reminder once more.
REMINDER_HISTORY = timedelta(days=90)

# The statement the sweep runs once per message it delivers, built once so that each run only
# binds values: building and keying it anew cost more CPU than the transaction's own work.
_MARK_SENT = (
    update(REMINDER_LOG)
    .where(
        REMINDER_LOG.c.chat_id == bindparam("chat"),
        REMINDER_LOG.c.key.in_(bindparam("keys", expanding=True)),
    )
    .values(state="sent", sent_at=bindparam("now"))
)


def _states(conn: Connection, pairs: Sequence[tuple[int, str]]) -> dict[int, dict[str, str]]:
    """Chat id -> key -> "intent" | "sent", for the (chat id, key) pairs that have an entry."""
    found: dict[int, dict[str, str]] = {}
    for chunk in chunks(pairs):
        rows = conn.execute(
            select(REMINDER_LOG.c.chat_id, REMINDER_LOG.c.key, REMINDER_LOG.c.state).where(
                tuple_(REMINDER_LOG.c.chat_id, REMINDER_LOG.c.key).in_(chunk)
            )
        )
        for row in rows:
            found.setdefault(int(row.chat_id), {})[row.key] = row.state
    return found


class ReminderLog(Repository):
    async def begin_reminders_many(
        self, keys: Mapping[int, Sequence[str]]
    ) -> dict[int, dict[str, str]]:
        """Record an intent for each key not yet sent, in one transaction for several chats;
        returns the states as they were before (chat id -> key -> "intent" | "sent")."""
        wanted = {chat_id: list(dict.fromkeys(chat_keys)) for chat_id, chat_keys in keys.items()}
        pairs = [(chat_id, key) for chat_id, chat_keys in wanted.items() for key in chat_keys]
        if not pairs:
            return {}
        now = self._now()

        def work(conn: Connection) -> dict[int, dict[str, str]]:
            found = _states(conn, pairs)
            pending = [
                (chat_id, key)
                for chat_id, key in pairs
                if found.get(chat_id, {}).get(key) != "sent"
            ]
            for chunk in chunks(pending):
                rows = [
                    {"chat_id": chat_id, "key": key, "state": "intent", "created_at": now}
                    for chat_id, key in chunk
                ]
                # Existing entries are untouched: an intent stays an intent, a sent key sent.
                conn.execute(
                    self._insert(REMINDER_LOG)
                    .values(rows)
                    .on_conflict_do_nothing(index_elements=["chat_id", "key"])
                )
            return found

        return await self._run(work)

    async def mark_sent(self, chat_id: int, keys: Sequence[str]) -> None:
        unique = list(dict.fromkeys(keys))
        if not unique:
            return
        now = self._now()

        def work(conn: Connection) -> None:
            for chunk in chunks(unique):
                # The intents are there (the sweep records them first), so this is an UPDATE;
                # a key sent without an intent is inserted afterwards.
                matched = conn.execute(
                    _MARK_SENT, {"chat": chat_id, "keys": list(chunk), "now": now}
                ).rowcount
                if matched < len(chunk):
                    conn.execute(
                        self._insert(REMINDER_LOG)
                        .values(
                            [
                                {
                                    "chat_id": chat_id,
                                    "key": key,
                                    "state": "sent",
                                    "created_at": now,
                                    "sent_at": now,
                                }
                                for key in chunk
                            ]
                        )
                        .on_conflict_do_nothing(index_elements=["chat_id", "key"])
                    )

        await self._run(work)

    @staticmethod
    def expired(now: datetime) -> Executable:
        return delete(REMINDER_LOG).where(REMINDER_LOG.c.created_at <= now - REMINDER_HISTORY)
