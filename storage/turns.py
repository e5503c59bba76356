"""Each chat's turn, shared by the processes of one bot (issue 36, part 2).

A process takes an update of a chat here as it receives it (before the webhook answers 200),
and hands it back once handled. An update is handled when no lower `update_id` of its chat is
still taken: Telegram numbers a bot's updates in increasing order, so the chat's updates are
handled one at a time and in order, whichever process received each. A turn is held until
`held_until`, which its process renews while it lives: a process that dies blocks its chats
for at most that long.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from sqlalchemy import and_, delete, exists, or_, select, update
from sqlalchemy.engine import Connection

from storage.database import IN_CHUNK, Repository
from storage.tables import CHAT_TURN

Turn = tuple[int, int]  # (chat_id, update_id)


class Turns(Repository):
    async def take(self, chat_id: int, update_id: int, worker: str, hold: timedelta) -> bool:
        """Take the update's turn for `worker`; False when a live process has it already (a
        delivery Telegram repeated). A turn whose holder stopped renewing it is taken over."""
        now = self._now()
        statement = (
            self._insert(CHAT_TURN)
            .values(chat_id=chat_id, update_id=update_id, worker=worker, held_until=now + hold)
            .on_conflict_do_update(
                index_elements=["chat_id", "update_id"],
                set_={"worker": worker, "held_until": now + hold},
                where=CHAT_TURN.c.held_until <= now,
            )
            .returning(CHAT_TURN.c.worker)
        )
        return await self._run(lambda conn: conn.execute(statement).first() is not None)

    async def is_next(self, chat_id: int, update_id: int) -> bool:
        """Whether no lower update of the chat is still taken by a live process."""
        turn = CHAT_TURN
        earlier = exists().where(
            turn.c.chat_id == chat_id,
            turn.c.update_id < update_id,
            turn.c.held_until > self._now(),
        )
        return not await self._run(lambda conn: bool(conn.execute(select(earlier)).scalar()))

    async def hand_back(self, turns: Iterable[Turn], worker: str) -> None:
        """The updates are handled (or dropped): the chats' next updates may go."""
        keys = list(turns)

        def work(conn: Connection) -> None:
            for start in range(0, len(keys), IN_CHUNK):
                chunk = keys[start : start + IN_CHUNK]
                conn.execute(
                    delete(CHAT_TURN).where(
                        CHAT_TURN.c.worker == worker,
                        or_(
                            *(
                                and_(CHAT_TURN.c.chat_id == chat, CHAT_TURN.c.update_id == number)
                                for chat, number in chunk
                            )
                        ),
                    )
                )

        if keys:
            await self._run(work)

    async def renew(self, worker: str, hold: timedelta) -> None:
        """Keep `worker`'s turns for `hold` from now (its heartbeat), and forget the turns
        of processes that stopped renewing theirs."""
        now = self._now()

        def work(conn: Connection) -> None:
            conn.execute(
                update(CHAT_TURN).where(CHAT_TURN.c.worker == worker).values(held_until=now + hold)
            )
            conn.execute(delete(CHAT_TURN).where(CHAT_TURN.c.held_until <= now))

        await self._run(work)

    async def leave(self, worker: str) -> None:
        """`worker` stops: its chats' next updates go at once."""
        await self._run(
            lambda conn: conn.execute(delete(CHAT_TURN).where(CHAT_TURN.c.worker == worker))
        )
