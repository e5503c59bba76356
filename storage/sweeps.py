"""The daily sweep's bookkeeping on the cards' rows: leases (which worker has a card), the day a
card was swept, and the polling plan (`next_check`, the first day the card is due again).

These statements are the sweep's hot path: they run per batch of patrons, not per patron.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Row,
    and_,
    bindparam,
    exists,
    false,
    func,
    or_,
    select,
    true,
    tuple_,
    update,
)
from sqlalchemy.engine import Connection
from sqlalchemy.sql import FromClause
from sqlalchemy.sql.expression import Executable

from storage.cards import Card, CardKey, Cards
from storage.chats import ChatSettings, settings_of
from storage.database import Database, Repository, chunks, execute_all
from storage.tables import CARD, CHAT

_KEY = tuple_(CARD.c.chat_id, CARD.c.number)


def plan_statements(
    cards: Sequence[CardKey], plans: Mapping[CardKey, date | None]
) -> list[Executable]:
    """UPDATEs setting `next_check`, grouped by day: a few days cover a whole batch."""
    by_day: dict[date | None, list[CardKey]] = {}
    for key in cards:
        if key in plans:
            by_day.setdefault(plans[key], []).append(key)
    return [
        update(CARD).where(_KEY.in_(chunk)).values(next_check=day)
        for day, keys in sorted(by_day.items(), key=lambda item: item[0] or date.min)
        for chunk in chunks(keys)
    ]


_MARK = (
    update(CARD)
    .where(CARD.c.chat_id == bindparam("k_chat"), CARD.c.number == bindparam("k_card"))
    .values(first_due=bindparam("first_due"), hold_ready=bindparam("hold_ready"))
)


def mark_rows(
    cards: Sequence[CardKey], marks: Mapping[CardKey, tuple[date | None, bool]]
) -> list[dict[str, Any]]:
    """The parameters of `_MARK`, one row a card: one executemany, not a statement each."""
    return [
        {
            "k_chat": key[0],
            "k_card": key[1],
            "first_due": marks[key][0],
            "hold_ready": marks[key][1],
        }
        for key in cards
        if key in marks
    ]


_WITH_CHAT = CARD.outerjoin(CHAT, CHAT.c.chat_id == CARD.c.chat_id)


def _unswept(day: date, hour: int | None = None, default_hour: int = 0) -> ColumnElement[bool]:
    """Cards `day`'s sweep still has to do, leased or not (select from `_WITH_CHAT`); with
    `hour`, only those of chats whose reminder hour (else `default_hour`) has come."""
    due_hour = (
        func.coalesce(CHAT.c.reminder_hour, default_hour) <= hour if hour is not None else true()
    )
    return and_(
        due_hour,
        _card_unswept(day),
        or_(
            CHAT.c.chat_id.is_(None),
            and_(CHAT.c.active == true(), CHAT.c.reminders_enabled == true()),
        ),
    )


def _card_unswept(day: date, card: FromClause = CARD) -> ColumnElement[bool]:
    """What of `_unswept` is the card's own (of `card`, the table or an alias of it)."""
    return and_(
        # A lapsed card has no token to ask the library with: it waits for a login.
        card.c.lapsed_at.is_(None),
        or_(card.c.swept_on.is_(None), card.c.swept_on != day),
        # The polling plan: cards planned for a later day are left alone today.
        or_(card.c.next_check.is_(None), card.c.next_check <= day),
    )


# A pass's order: the most urgent first, by what the card's last check saw (`first_due`,
# `hold_ready`): a hold ready for pick-up, a loan overdue, due today, due tomorrow, the rest.
RANKS = 5


def urgency(rank: int, day: date, card: FromClause = CARD) -> ColumnElement[bool]:
    """The cards (of `card`, the table or an alias of it) of urgency `rank` (0 the most
    urgent) on `day`; every card has one."""
    if rank == 0:
        return card.c.hold_ready == true()
    due = card.c.first_due
    waiting = card.c.hold_ready == false()
    if rank == 1:
        return and_(waiting, due < day)
    if rank in (2, 3):
        return and_(waiting, due == day + timedelta(days=rank - 2))
    return and_(waiting, or_(due.is_(None), due > day + timedelta(days=1)))


def _no_urgent_card(day: date) -> ColumnElement[bool]:
    """The chat has no card of a more urgent rank still to sweep on `day`: such a chat goes
    whole with that rank, even while the last rank is claimed beside the others (the sweep's
    second producer), and never as two digests."""
    other = CARD.alias("urgent")
    return ~exists().where(
        other.c.chat_id == CARD.c.chat_id,
        _card_unswept(day, other),
        or_(*(urgency(rank, day, other) for rank in range(RANKS - 1))),
    )


class Sweeps(Repository):
    def __init__(self, database: Database, now: Callable[[], datetime], cards: Cards) -> None:
        super().__init__(database, now)
        self._cards = cards
        self._postgres = database.dialect == "postgresql"

    async def claim_sweep_batch(
        self,
        day: date,
        worker: str,
        limit: int,
        lease: timedelta,
        *,
        after: int | None = None,
        rank: int | None = None,
        hour: int | None = None,
        default_hour: int = 0,
    ) -> list[tuple[Card, ChatSettings]]:
        """Lease the cards of up to `limit` chats' worth of cards due for `day`'s sweep, whole
        chats at a time (a chat's digest covers all its cards), in (chat, card) order.

        Leased rows (also this worker's own) are skipped until `finish_sweeps`, `release` or
        until the lease runs out (`renew` keeps it while the worker works), so a card that
        fails is retried after its lease, not in a loop. `after` (the last chat of the
        previous batch) starts the scan there, so a sweep reads each row once instead of
        passing over every finished one again per batch. `rank` (0 to `RANKS - 1`): only the
        chats with a card of that urgency (`urgency`), the cards of any urgency of those
        chats with them; None: every urgency. `hour`: the hour of the day now; only chats
        whose reminder hour (`default_hour` when they chose none) has come are claimed (None:
        every chat, as `remind --once`).
        """
        now = self._now()
        free = or_(CARD.c.lease_until.is_(None), CARD.c.lease_until <= now)
        due = _unswept(day, hour, default_hour)
        chats = (
            select(CARD.c.chat_id)
            .select_from(_WITH_CHAT)
            .where(
                CARD.c.chat_id > after if after is not None else true(),
                due,
                free,
                urgency(rank, day) if rank is not None else true(),
                _no_urgent_card(day) if rank == RANKS - 1 else true(),
            )
            .order_by(CARD.c.chat_id, CARD.c.number)
            .limit(limit)
        )
        if self._postgres:
            # Rows another sweeper is claiming right now are skipped, not waited for.
            chats = chats.with_for_update(of=CARD, skip_locked=True)

        def work(conn: Connection) -> tuple[list[Row[Any]], dict[int, ChatSettings]]:
            # The chats first (their rows of this rank locked), then every card of theirs
            # still due: a chat's digest covers all its cards.
            chosen = list(dict.fromkeys(int(chat_id) for chat_id in conn.scalars(chats)))
            if not chosen:
                return [], {}
            candidates = (
                select(CARD.c.chat_id, CARD.c.number)
                .select_from(_WITH_CHAT)
                .where(CARD.c.chat_id.in_(chosen), due, free)
            )
            if self._postgres:
                candidates = candidates.with_for_update(of=CARD, skip_locked=True)
            claim = (
                update(CARD)
                .where(_KEY.in_(candidates))
                .values(lease_owner=worker, lease_until=now + lease)
                .returning(*CARD.c)
            )
            rows = sorted(conn.execute(claim).all(), key=lambda row: (row.chat_id, row.number))
            return rows, settings_of(conn, [int(row.chat_id) for row in rows])

        rows, settings = await self._run(work)
        batch: list[tuple[Card, ChatSettings]] = []
        for row in rows:
            card = self._cards.open(row._mapping)
            if card is not None:
                batch.append((card, settings[card.chat_id]))
        return batch

    async def renew(self, cards: Sequence[CardKey], worker: str, lease: timedelta) -> set[CardKey]:
        """Extend `worker`'s leases of these cards by `lease` from now (the heartbeat of a
        sweep at work); the cards it still holds (a lease lost meanwhile is not taken back)."""
        until = self._now() + lease
        statements = [
            update(CARD)
            .where(_KEY.in_(chunk), CARD.c.lease_owner == worker)
            .values(lease_until=until)
            .returning(CARD.c.chat_id, CARD.c.number)
            for chunk in chunks(sorted(set(cards)))
        ]

        def work(conn: Connection) -> set[CardKey]:
            return {
                (int(row.chat_id), int(row.number))
                for statement in statements
                for row in conn.execute(statement).all()
            }

        return await self._run(work) if statements else set()

    async def release(self, cards: Sequence[CardKey], worker: str, hold: timedelta) -> None:
        """Leave `worker`'s unfinished cards to a retry after `hold` (by whichever sweep)."""
        until = self._now() + hold
        statements = [
            update(CARD)
            .where(_KEY.in_(chunk), CARD.c.lease_owner == worker)
            .values(lease_owner=None, lease_until=until)
            for chunk in chunks(sorted(set(cards)))
        ]
        if statements:
            await self._run(lambda conn: execute_all(conn, statements))

    async def stranded(self, day: date, hour: int | None = None, default_hour: int = 0) -> bool:
        """Whether a card of `day`'s sweep waits for a sweeper: never leased, or leased by a
        sweeper that stopped renewing it (a process died). Cards `release`d for a retry
        wait for their retry sweep."""
        now = self._now()
        query = (
            select(CARD.c.chat_id)
            .select_from(_WITH_CHAT)
            .where(
                _unswept(day, hour, default_hour),
                or_(
                    CARD.c.lease_until.is_(None),
                    and_(CARD.c.lease_owner.is_not(None), CARD.c.lease_until <= now),
                ),
            )
            .limit(1)
        )
        return await self._run(lambda conn: conn.execute(query).first()) is not None

    async def unswept(self, day: date, hour: int | None = None, default_hour: int = 0) -> int:
        """How many cards `day`'s sweep has not finished yet (leased ones included; with
        `hour`, of the chats whose hour has come): 0 once the day's sweep is done, so a
        process started late knows whether to catch up."""
        query = (
            select(func.count()).select_from(_WITH_CHAT).where(_unswept(day, hour, default_hour))
        )
        return int(await self._run(lambda conn: conn.execute(query).scalar_one()))

    async def progress(self, day: date, hour: int, default_hour: int) -> tuple[int, int | None]:
        """How far `day`'s sweep is at `hour`: the cards left of chats whose hour has come
        (leased ones included), and the earliest of their hours (None when none is left): the
        oldest reminder still owed."""
        query = (
            select(func.count(), func.min(func.coalesce(CHAT.c.reminder_hour, default_hour)))
            .select_from(_WITH_CHAT)
            .where(_unswept(day, hour, default_hour))
        )
        left, earliest = await self._run(lambda conn: conn.execute(query).one())
        return int(left), None if earliest is None else int(earliest)

    async def finish_sweeps(
        self,
        cards: Sequence[CardKey],
        day: date,
        next_checks: Mapping[CardKey, date] | None = None,
        marks: Mapping[CardKey, tuple[date | None, bool]] | None = None,
    ) -> None:
        """Mark these cards swept for `day` and end their leases, in one transaction.

        `next_checks` ((chat, card) -> day) writes each card's polling plan in the same
        transaction, one UPDATE per planned day; a card without one keeps the plan it had.
        `marks` ((chat, card) -> (first due date, a hold ready)): what orders the card in the
        next pass (`urgency`), in one executemany.
        """
        # In key order, as the leases' renewals and releases, chunk after chunk. Within one
        # statement the plan orders the row locks, so a sweep also writes its leases one at a
        # time (`jobs.sweep`), and a deadlock left runs again (`storage.database`).
        unique = sorted(set(cards))
        if not unique:
            return
        statements: list[Executable] = [
            update(CARD)
            .where(_KEY.in_(chunk))
            .values(swept_on=day, lease_owner=None, lease_until=None)
            for chunk in chunks(unique)
        ]
        statements.extend(plan_statements(unique, next_checks or {}))
        rows = mark_rows(unique, marks or {})

        def work(conn: Connection) -> None:
            execute_all(conn, statements)
            if rows:
                conn.execute(_MARK, rows)

        await self._run(work)

    async def set_next_checks(self, next_checks: Mapping[CardKey, date | None]) -> None:
        """Replace the polling plan of these cards (None: the next sweep checks them)."""
        statements = plan_statements(list(next_checks), next_checks)
        if statements:
            await self._run(lambda conn: execute_all(conn, statements))
