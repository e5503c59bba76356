"""What the notices compare against (table `notice_seen`): per chat, `queue:<order id>` with
the queue position last seen and `fee:<fee id>` for each fee known (a digest, never the fee).

The sweep reads a chat's entries only when a notice needs them, and writes what it saw with
the patrons it finishes, one transaction per batch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.engine import Connection
from sqlalchemy.sql.expression import Executable

from library_bot.storage.database import Repository
from library_bot.storage.tables import CHAT, NOTICE_SEEN


@dataclass
class Seen:
    """What a status showed, to keep: each kind given replaces the chat's entries of that kind
    (`queue` positions by order id, `fees` ids); `fees_known` marks the fees recorded."""

    queue: dict[str, int] | None = None
    fees: set[str] | None = None
    fees_known: bool = False


class NoticeSeen(Repository):
    async def seen(self, chat_id: int) -> dict[str, str | None]:
        """The chat's entries: item -> value."""
        statement = select(NOTICE_SEEN.c.item, NOTICE_SEEN.c.value).where(
            NOTICE_SEEN.c.chat_id == chat_id
        )
        return await self._run(
            lambda conn: {row.item: row.value for row in conn.execute(statement)}
        )

    async def keep(self, seen: Mapping[int, Seen]) -> None:
        """Replace the kinds given per chat with what was seen, in one transaction."""
        if not seen:
            return
        now = self._now()

        def work(conn: Connection) -> None:
            for chat_id, what in seen.items():
                rows: list[dict[str, object]] = []
                if what.queue is not None:
                    conn.execute(_drop(chat_id, "queue:"))
                    rows += [
                        {"chat_id": chat_id, "item": f"queue:{order}"[:300], "value": str(pos)}
                        for order, pos in what.queue.items()
                    ]
                if what.fees is not None:
                    conn.execute(_drop(chat_id, "fee:"))
                    rows += [
                        {"chat_id": chat_id, "item": f"fee:{ident}", "value": None}
                        for ident in what.fees
                    ]
                if rows:
                    conn.execute(self._insert(NOTICE_SEEN).values(rows))
                if what.fees_known:
                    conn.execute(
                        self._insert(CHAT)
                        .values(chat_id=chat_id, created_at=now, updated_at=now, fees_known=True)
                        .on_conflict_do_update(
                            index_elements=["chat_id"], set_={"fees_known": True}
                        )
                    )

        await self._run(work)


def _drop(chat_id: int, prefix: str) -> Executable:
    return delete(NOTICE_SEEN).where(
        NOTICE_SEEN.c.chat_id == chat_id, NOTICE_SEEN.c.item.startswith(prefix, autoescape=True)
    )
