"""Telegram's per-chat and per-group limits shared by the processes of one bot (issue 36).

Each chat's limit is a GCRA bucket (`bot.telegram.ratelimit`): its theoretical arrival time
(`tat`) is all the state it has. Here that time is one row per chat, taken a turn at a time
by one atomic upsert that returns the turn, so two processes never both take the same slot:
no lock held across a send, no read-then-write. The statement also returns the bot's pause
(the row `BOT`), written by whichever process Telegram answered 429, so every process honours
it at its next send.

With `every` given, the same transaction also takes the bot's own turn (the row `PACE`, one
every `every` seconds, from the chat's turn on): Telegram counts a bot's messages in a
one-second window, so every process's sends are spaced out together, exactly, however many
processes share the budget, rather than each pacing its own share evenly and their sends
bunching in a window where they happen to meet.

With `within` given (the sweep's digests), no turn is taken while the bot's turns are booked
further ahead than that: a reply asks for the bot's next turn, after every turn booked, so what
may be booked ahead bounds how long a reply waits behind the digests of every process.

Telegram lets a bot send about 30 messages a second, so this is at most about 60 row writes a
second however many processes or chats there are; rows whose bucket has drained mean the same
as no row and are pruned (`prune`), so the table holds only the chats sent to in the last
seconds (a burst's span at most), not every chat.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from sqlalchemy import and_, case, delete, func, literal, select
from sqlalchemy.engine import Connection

from storage.database import Repository
from storage.tables import SEND_PACE

BOT = "*"
PACE = "@"


class Turn(NamedTuple):
    """A turn asked for: seconds until it (not `taken`: until one may be asked for again),
    seconds the bot is still paused, and whether it was taken."""

    wait: float
    paused: float
    taken: bool


class Pace(Repository):
    async def turn(
        self,
        key: str,
        emission: float,
        span: float,
        every: float | None = None,
        lead: float = 0.0,
        within: float | None = None,
    ) -> Turn:
        """Take `key`'s next turn in a bucket refilled one every `emission` seconds that holds
        `span` seconds' worth beyond one, and with `every`, the bot's next turn from then on
        (one every `every` seconds over all chats), not before `lead` seconds from now. A turn
        taken is the chat's (and the bot's) even if it is never used. With `within`, none is
        taken while the bot's turns (or its pause) reach further than `within` seconds from
        now: then the wait is until they do not.

        `lead` is the caller's round trip to here: a bot's turn that has passed by the time
        its answer arrives would be sent late, and reach Telegram together with the turns
        after it."""
        now = self._now().timestamp()
        tat = SEND_PACE.c.tat
        bot, pace = SEND_PACE.alias("bot"), SEND_PACE.alias("pace")
        paused = select(bot.c.tat).where(bot.c.key == BOT).scalar_subquery()
        booked = select(pace.c.tat).where(pace.c.key == PACE).scalar_subquery()
        chat = self._insert(SEND_PACE)
        if within is None:
            chat = chat.values(key=key, tat=now + emission)
        else:
            limit = now + within
            room = and_(func.coalesce(booked, 0.0) <= limit, func.coalesce(paused, 0.0) <= limit)
            source = select(literal(key), literal(now + emission)).where(room)
            chat = chat.from_select(["key", "tat"], source)
        statement = chat.on_conflict_do_update(
            index_elements=["key"], set_={"tat": case((tat > now, tat), else_=now) + emission}
        ).returning(tat, paused)

        def work(conn: Connection) -> tuple[float, Any, bool]:
            row = conn.execute(statement).one_or_none()
            if row is None:  # booked too far ahead: nothing taken
                ahead, until = conn.execute(select(booked, paused)).one()
                free_at = max(float(ahead or 0.0), float(until or 0.0)) - (within or 0.0)
                return free_at, until, False
            turn_at = max(now, float(row[0]) - emission - span)
            if every is not None:
                # Not before a pause ends: the turns of the sends held up by it are spaced out
                # from its end, rather than all falling due at once.
                turn_at = max(turn_at, float(row[1] or 0.0), now + lead)
                bots = (
                    self._insert(SEND_PACE)
                    .values(key=PACE, tat=turn_at + every)
                    .on_conflict_do_update(
                        index_elements=["key"],
                        set_={"tat": case((tat > turn_at, tat), else_=turn_at) + every},
                    )
                    .returning(tat)
                )
                turn_at = float(conn.execute(bots).scalar_one()) - every
            return turn_at, row[1], True

        turn_at, until, taken = await self._run(work)
        return Turn(max(0.0, turn_at - now), max(0.0, float(until or now) - now), taken)

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
