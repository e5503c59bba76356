"""Telegram's per-chat and per-group limits shared by the processes of one bot (issue 36).

Each chat's limit is a GCRA bucket (`bot.telegram.ratelimit`): its theoretical arrival time
(`tat`) is all the state it has. Here that time is one row per chat, taken a turn at a time
by one atomic upsert that returns the turn, so two processes never both take the same slot:
no lock held across a send, no read-then-write. The statement also returns the bot's pause
(the row `BOT`), written by whichever process Telegram answered 429, so every process honours
it at its next send.

Telegram lets a bot send about 30 messages a second, so this is at most about 30 row writes a
second however many processes or chats there are; rows whose bucket has drained mean the same
as no row and are pruned (`prune`), so the table holds only the chats sent to in the last
seconds (a burst's span at most), not every chat.
"""

from __future__ import annotations

from sqlalchemy import case, delete, select
from sqlalchemy.engine import Connection

from storage.database import Repository
from storage.tables import SEND_PACE

BOT = "*"


class Pace(Repository):
    async def turn(self, key: str, emission: float, span: float) -> tuple[float, float]:
        """Take `key`'s next turn in a bucket refilled one every `emission` seconds that holds
        `span` seconds' worth beyond one: (seconds until that turn, seconds the bot is still
        paused). A turn taken is the chat's even if it is never used."""
        now = self._now().timestamp()
        tat = SEND_PACE.c.tat
        bot = SEND_PACE.alias("bot")
        paused = select(bot.c.tat).where(bot.c.key == BOT).scalar_subquery()
        statement = (
            self._insert(SEND_PACE)
            .values(key=key, tat=now + emission)
            .on_conflict_do_update(
                index_elements=["key"], set_={"tat": case((tat > now, tat), else_=now) + emission}
            )
            .returning(SEND_PACE.c.tat, paused)
        )

        def work(conn: Connection) -> tuple[float, float | None]:
            row = conn.execute(statement).one()
            return float(row[0]), None if row[1] is None else float(row[1])

        new_tat, until = await self._run(work)
        turn_at = new_tat - emission - span
        return max(0.0, turn_at - now), max(0.0, (until or now) - now)

    async def hold(self, key: str | None, seconds: float) -> None:
        """No turn for `key` (None: for anyone) before `seconds` from now; for a chat,
        `seconds` counts its bucket's span too."""
        key = BOT if key is None else key
        until = self._now().timestamp() + seconds
        tat = SEND_PACE.c.tat
        statement = (
            self._insert(SEND_PACE)
            .values(key=key, tat=until)
            .on_conflict_do_update(
                index_elements=["key"], set_={"tat": case((tat > until, tat), else_=until)}
            )
        )
        await self._run(lambda conn: conn.execute(statement))

    async def prune(self) -> int:
        """Forget the buckets that have drained (as good as new); how many."""
        now = self._now().timestamp()
        statement = delete(SEND_PACE).where(SEND_PACE.c.tat < now)
        return await self._run(lambda conn: max(conn.execute(statement).rowcount, 0))
