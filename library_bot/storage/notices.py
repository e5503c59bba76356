"""What the notices compare against (table `notice_seen`): per chat, `queue:<order id>` with
the queue position last seen and `fee:<fee id>` for each fee known (a digest, never the fee).

The sweep reads a chat's entries only when a notice needs them, and writes what it saw with
the patrons it finishes, one transaction per batch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

from sqlalchemy import bindparam, delete, insert, select
from sqlalchemy.engine import Connection

from library_bot.storage.database import Repository
from library_bot.storage.tables import CHAT, NOTICE_SEEN


@dataclass
class Seen:
    """What a status showed, to keep: each kind given replaces the chat's entries of that kind
    (`queue` positions by order id, `fees` ids); `fees_known` marks the fees recorded."""

    queue: dict[str, int] | None = None
    fees: set[str] | None = None
    fees_known: bool = False
    # The orders placed through the bot still watched (pid -> placed), and the chat's next
    # check of them; given together.
    orders: dict[str, str] | None = None
    order_check: date | None = None


# A chat's entries of one kind (`kind` is its prefix and `%`; the prefixes hold no wildcard).
_DROP_KIND = delete(NOTICE_SEEN).where(
    NOTICE_SEEN.c.chat_id == bindparam("chat"), NOTICE_SEEN.c.item.like(bindparam("kind"))
)


class NoticeSeen(Repository):
    async def seen(self, chat_id: int) -> dict[str, str | None]:
        """The chat's entries: item -> value."""
        statement = select(NOTICE_SEEN.c.item, NOTICE_SEEN.c.value).where(
            NOTICE_SEEN.c.chat_id == chat_id
        )
        return await self._run(
            lambda conn: {row.item: row.value for row in conn.execute(statement)}
        )

    async def watch_order(self, chat_id: int, pid: str, placed: str, check: date) -> None:
        """An order placed through the bot, to tell of should it not show up: its pid and
        when (`rules.notices.placed_text`); the chat's next check is `check` at the latest."""
        now = self._now()
        item = f"order:{pid}"[:300]

        def work(conn: Connection) -> None:
            conn.execute(
                self._insert(NOTICE_SEEN)
                .values(chat_id=chat_id, item=item, value=placed)
                .on_conflict_do_update(index_elements=["chat_id", "item"], set_={"value": placed})
            )
            before = conn.execute(
                select(CHAT.c.order_check).where(CHAT.c.chat_id == chat_id)
            ).scalar()
            day = check if before is None else min(before, check)
            conn.execute(
                self._insert(CHAT)
                .values(chat_id=chat_id, created_at=now, updated_at=now, order_check=day)
                .on_conflict_do_update(index_elements=["chat_id"], set_={"order_check": day})
            )

        await self._run(work)

    async def keep(self, seen: Mapping[int, Seen]) -> None:
        """Replace the kinds given per chat with what was seen: one statement per kind for all
        the chats (the sweep's batch), not one per chat."""
        if not seen:
            return
        now = self._now()
        rows: list[dict[str, object]] = []
        dropped: dict[str, list[int]] = {"queue:": [], "fee:": [], "order:": []}
        known: list[int] = []
        checks: dict[int, date | None] = {}
        for chat_id, what in seen.items():
            if what.queue is not None:
                dropped["queue:"].append(chat_id)
                rows += [
                    {"chat_id": chat_id, "item": f"queue:{order}"[:300], "value": str(pos)}
                    for order, pos in what.queue.items()
                ]
            if what.fees is not None:
                dropped["fee:"].append(chat_id)
                rows += [
                    {"chat_id": chat_id, "item": f"fee:{ident}", "value": None}
                    for ident in what.fees
                ]
            if what.orders is not None:
                dropped["order:"].append(chat_id)
                checks[chat_id] = what.order_check
                rows += [
                    {"chat_id": chat_id, "item": f"order:{pid}"[:300], "value": placed}
                    for pid, placed in what.orders.items()
                ]
            if what.fees_known:
                known.append(chat_id)

        # One compiled statement each, run for many rows (executemany): a multi-row VALUES is
        # compiled afresh for every batch size, which cost more than the sweep's other writes.
        drops = [
            {"chat": chat_id, "kind": f"{prefix}%"}
            for prefix, chat_ids in dropped.items()
            for chat_id in chat_ids
        ]
        marks = [{"chat_id": chat_id, "now": now} for chat_id in known]
        order_checks = [
            {"chat_id": chat_id, "now": now, "day": day} for chat_id, day in checks.items()
        ]
        mark_known = (
            self._insert(CHAT)
            .values(
                chat_id=bindparam("chat_id"),
                created_at=bindparam("now"),
                updated_at=bindparam("now"),
                fees_known=True,
            )
            .on_conflict_do_update(index_elements=["chat_id"], set_={"fees_known": True})
        )
        insert_check = self._insert(CHAT).values(
            chat_id=bindparam("chat_id"),
            created_at=bindparam("now"),
            updated_at=bindparam("now"),
            order_check=bindparam("day"),
        )
        set_check = insert_check.on_conflict_do_update(
            index_elements=["chat_id"], set_={"order_check": insert_check.excluded.order_check}
        )

        def work(conn: Connection) -> None:
            if drops:
                conn.execute(_DROP_KIND, drops)
            if rows:
                conn.execute(insert(NOTICE_SEEN), rows)
            if marks:
                conn.execute(mark_known, marks)
            if order_checks:
                conn.execute(set_check, order_checks)

        await self._run(work)
