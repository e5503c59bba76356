"""Shelf watches (table `shelf_watch`): "tell me when it is on the shelf at <branch>".

A watch belongs to one card of one chat, and dies with it (`Store.remove_card`,
`Store.forget_chat`). A check claims a watch before it sends its ping (`claim`), and deletes it
once sent (`done`): two checks never both ping, and a failed send is released to the next.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import Row, Select, delete, func, insert, or_, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from storage.database import Repository
from storage.tables import SHELF_WATCH

# At most this many watches per chat (the 10).
MAX_WATCHES = 10
# A claim older than this was a process that died mid-send: the watch is checked again.
CLAIM_LEASE = timedelta(minutes=10)
PID_MAX = 100
BRANCH_MAX = 200
TITLE_MAX = 200


@dataclass(frozen=True)
class Watch:
    chat_id: int
    number: int
    pid: str
    branch: str
    agency: str
    title: str
    created_at: datetime


class Watches(Repository):
    async def add(
        self, chat_id: int, number: int, pid: str, branch: str, agency: str, title: str
    ) -> Literal["added", "exists", "full"]:
        """Keep a watch for the card, title and branch, unless the chat has `MAX_WATCHES`."""
        values = {
            "chat_id": chat_id,
            "number": number,
            "pid": pid[:PID_MAX],
            "branch": branch[:BRANCH_MAX],
            "agency": agency[:16],
            "title": title[:TITLE_MAX],
            "created_at": self._now(),
        }
        key = (
            SHELF_WATCH.c.chat_id == chat_id,
            SHELF_WATCH.c.number == number,
            SHELF_WATCH.c.pid == values["pid"],
            SHELF_WATCH.c.branch == values["branch"],
        )
        count = (
            select(func.count()).select_from(SHELF_WATCH).where(SHELF_WATCH.c.chat_id == chat_id)
        )

        def work(conn: Connection) -> Literal["added", "exists", "full"]:
            if conn.execute(select(SHELF_WATCH.c.chat_id).where(*key)).first() is not None:
                return "exists"
            if (conn.execute(count).scalar() or 0) >= MAX_WATCHES:
                return "full"
            conn.execute(insert(SHELF_WATCH).values(**values))
            return "added"

        return await self._run(work)

    async def of_chat(self, chat_id: int) -> list[Watch]:
        statement = (
            select(SHELF_WATCH)
            .where(SHELF_WATCH.c.chat_id == chat_id)
            .order_by(SHELF_WATCH.c.created_at, SHELF_WATCH.c.title)
        )
        return await self._watches(statement)

    async def of_chats(self, chat_ids: Sequence[int]) -> list[Watch]:
        """The watches of these chats (a sweep's batch: most chats have none)."""
        if not chat_ids:
            return []
        statement = select(SHELF_WATCH).where(SHELF_WATCH.c.chat_id.in_(list(chat_ids)))
        return await self._watches(statement)

    async def end(self, watches: Sequence[Watch]) -> None:
        """End these watches (their titles were borrowed or ordered), in one transaction."""
        if not watches:
            return

        def work(conn: Connection) -> None:
            for watch in watches:
                conn.execute(delete(SHELF_WATCH).where(*_key(watch)))

        await self._run(work)

    async def remove(self, chat_id: int, number: int, pid: str, branch: str) -> bool:
        """Stop one watch; False when it was gone already (fired, ended or removed)."""
        statement = delete(SHELF_WATCH).where(
            SHELF_WATCH.c.chat_id == chat_id,
            SHELF_WATCH.c.number == number,
            SHELF_WATCH.c.pid == pid,
            SHELF_WATCH.c.branch == branch,
        )
        return await self._run(lambda conn: conn.execute(statement).rowcount > 0)

    async def to_check(self) -> list[Watch]:
        """Every watch no live check is sending for, oldest first."""
        stale = self._now() - CLAIM_LEASE
        statement = (
            select(SHELF_WATCH)
            .where(or_(SHELF_WATCH.c.claimed_at.is_(None), SHELF_WATCH.c.claimed_at < stale))
            .order_by(SHELF_WATCH.c.created_at)
        )
        return await self._watches(statement)

    async def claim(self, watch: Watch) -> bool:
        """Take the watch for its ping; False when another check has it (or it is gone)."""
        now = self._now()
        statement = (
            update(SHELF_WATCH)
            .where(
                *_key(watch),
                or_(
                    SHELF_WATCH.c.claimed_at.is_(None),
                    SHELF_WATCH.c.claimed_at < now - CLAIM_LEASE,
                ),
            )
            .values(claimed_at=now)
        )
        return await self._run(lambda conn: conn.execute(statement).rowcount == 1)

    async def release(self, watch: Watch) -> None:
        """The ping was not sent: the next check tries again."""
        statement = update(SHELF_WATCH).where(*_key(watch)).values(claimed_at=None)
        await self._run(lambda conn: conn.execute(statement))

    async def done(self, watch: Watch) -> None:
        """The ping went (or the watch ended): it is gone."""
        statement = delete(SHELF_WATCH).where(*_key(watch))
        await self._run(lambda conn: conn.execute(statement))

    async def end_titles(self, chat_id: int, number: int, pids: Sequence[str]) -> None:
        """End the card's watches of these titles (ordered: nothing left to wait for)."""
        if not pids:
            return
        statement = delete(SHELF_WATCH).where(
            SHELF_WATCH.c.chat_id == chat_id,
            SHELF_WATCH.c.number == number,
            SHELF_WATCH.c.pid.in_(list(pids)),
        )
        await self._run(lambda conn: conn.execute(statement))

    async def _watches(self, statement: Select[Any]) -> list[Watch]:
        rows = await self._read(lambda conn: conn.execute(statement).all())
        return [_watch(row) for row in rows]


def _key(watch: Watch) -> tuple[ColumnElement[bool], ...]:
    return (
        SHELF_WATCH.c.chat_id == watch.chat_id,
        SHELF_WATCH.c.number == watch.number,
        SHELF_WATCH.c.pid == watch.pid,
        SHELF_WATCH.c.branch == watch.branch,
    )


def _watch(row: Row[Any]) -> Watch:
    mapping = row._mapping
    return Watch(
        chat_id=int(mapping["chat_id"]),
        number=int(mapping["number"]),
        pid=mapping["pid"],
        branch=mapping["branch"],
        agency=mapping["agency"],
        title=mapping["title"],
        created_at=mapping["created_at"],
    )
