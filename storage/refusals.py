"""Refused renewals (table `renewal_refusal`): a loan the library would not renew, with its
reason as sent, so the bot stops offering it while the due date holds. Kept per card: two
cards of a family may borrow at different libraries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, delete, select
from sqlalchemy.engine import Connection

from storage.cards import CardKey
from storage.database import Repository, chunks
from storage.tables import RENEWAL_REFUSAL

# How long a refused renewal is remembered (while the due date stays the same): after that
# the bot offers the loan again, as a reservation may have been cancelled meanwhile.
REFUSAL_TTL = timedelta(days=7)


# Built once (a statement costs more to build than to run); the chats' IN list expands at
# execution.
_OF_CHATS = select(RENEWAL_REFUSAL).where(
    RENEWAL_REFUSAL.c.chat_id.in_(bindparam("chats", expanding=True)),
    RENEWAL_REFUSAL.c.refused_at > bindparam("since"),
)
_OF_CHAT = select(RENEWAL_REFUSAL).where(
    RENEWAL_REFUSAL.c.chat_id == bindparam("chat_id"),
    RENEWAL_REFUSAL.c.refused_at > bindparam("since"),
)


@dataclass(frozen=True)
class Refusal:
    """A renewal the library refused: the reason as sent, for the loan's due date then."""

    loan_id: str
    due: str
    reason: str
    refused_at: datetime


class Refusals(Repository):
    async def record_refusal(
        self, chat_id: int, loan_id: str, due: str, reason: str, number: int = 1
    ) -> None:
        """Remember that the library refused to renew `loan_id` (due `due`), and why."""
        values = {"due": due[:64], "reason": reason[:200], "refused_at": self._now()}
        statement = (
            self._insert(RENEWAL_REFUSAL)
            .values(chat_id=chat_id, number=number, loan_id=loan_id[:300], **values)
            .on_conflict_do_update(index_elements=["chat_id", "number", "loan_id"], set_=values)
        )
        await self._run(lambda conn: conn.execute(statement))

    async def refusals(self, chat_id: int, number: int = 1) -> dict[str, Refusal]:
        """Loan id -> the refusal still remembered (younger than `REFUSAL_TTL`)."""
        return (await self._read(lambda conn: self.of_chat(conn, chat_id))).get(number, {})

    async def refusals_many(self, cards: Sequence[CardKey]) -> dict[CardKey, dict[str, Refusal]]:
        """`refusals` for several cards in one query per chunk of chats (the sweep's groups)."""
        found: dict[CardKey, dict[str, Refusal]] = {}
        wanted = set(cards)
        chats = list(dict.fromkeys(chat_id for chat_id, _ in cards))
        if not chats:
            return found
        since = self._now() - REFUSAL_TTL

        def work(conn: Connection) -> None:
            for chunk in chunks(chats):
                for row in conn.execute(_OF_CHATS, {"chats": list(chunk), "since": since}):
                    key = (int(row.chat_id), int(row.number))
                    if key in wanted:
                        found.setdefault(key, {})[row.loan_id] = refusal_of(row._mapping)

        await self._read(work)
        return found

    def of_chat(self, conn: Connection, chat_id: int) -> dict[int, dict[str, Refusal]]:
        """Inside a transaction: card number -> loan id -> the refusals still remembered."""
        found: dict[int, dict[str, Refusal]] = {}
        values = {"chat_id": chat_id, "since": self._now() - REFUSAL_TTL}
        for row in conn.execute(_OF_CHAT, values):
            found.setdefault(int(row.number), {})[row.loan_id] = refusal_of(row._mapping)
        return found

    async def clear_refusal(self, chat_id: int, loan_id: str, number: int = 1) -> None:
        statement = delete(RENEWAL_REFUSAL).where(
            RENEWAL_REFUSAL.c.chat_id == chat_id,
            RENEWAL_REFUSAL.c.number == number,
            RENEWAL_REFUSAL.c.loan_id == loan_id,
        )
        await self._run(lambda conn: conn.execute(statement))


def refusal_of(row: Mapping[Any, Any]) -> Refusal:
    """The refusal of a row's values (its `_mapping`, or the refusal's part of a joined row)."""
    return Refusal(row["loan_id"], row["due"], row["reason"], row["refused_at"])
