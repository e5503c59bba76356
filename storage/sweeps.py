"""The daily sweep's bookkeeping on account rows: leases (which worker has a card), the day a
card was swept, and the polling plan (`next_check`, the first day the card is due again).

These statements are the sweep's hot path: they run per batch of patrons, not per patron.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import Row, and_, literal, or_, select, true, tuple_, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.expression import Executable

from storage.accounts import Account, Accounts, CardKey
from storage.chats import ChatSettings, settings_of
from storage.database import Database, Repository, chunks, execute_all
from storage.tables import ACCOUNT, CHAT

_KEY = tuple_(ACCOUNT.c.chat_id, ACCOUNT.c.card)


def plan_statements(
    cards: Sequence[CardKey], plans: Mapping[CardKey, date | None]
) -> list[Executable]:
    """UPDATEs setting `next_check`, grouped by day: a few days cover a whole batch."""
    by_day: dict[date | None, list[CardKey]] = {}
    for key in cards:
        if key in plans:
            by_day.setdefault(plans[key], []).append(key)
    return [
        update(ACCOUNT).where(_KEY.in_(chunk)).values(next_check=day)
        for day, keys in sorted(by_day.items(), key=lambda item: item[0] or date.min)
        for chunk in chunks(keys)
    ]


class Sweeps(Repository):
    def __init__(self, database: Database, now: Callable[[], datetime], accounts: Accounts) -> None:
        super().__init__(database, now)
        self._accounts = accounts
        self._postgres = database.dialect == "postgresql"

    async def claim_sweep_batch(
        self,
        day: date,
        worker: str,
        limit: int,
        lease: timedelta,
        *,
        after: CardKey | None = None,
    ) -> list[tuple[Account, ChatSettings]]:
        """Lease up to `limit` cards due for `day`'s sweep, in (chat, card) order.

        Leased rows (also this worker's own) are skipped until `finish_sweeps` or until the
        lease runs out, so a card that fails is retried after its lease, not in a loop.
        `after` (the last card of the previous batch) starts the scan there, so a sweep
        reads each row once instead of passing over every finished one again per batch.
        """
        now = self._now()
        candidates = (
            select(ACCOUNT.c.chat_id, ACCOUNT.c.card)
            .select_from(ACCOUNT.outerjoin(CHAT, CHAT.c.chat_id == ACCOUNT.c.chat_id))
            .where(
                tuple_(literal(after[0]), literal(after[1])) < _KEY if after else true(),
                or_(ACCOUNT.c.swept_on.is_(None), ACCOUNT.c.swept_on != day),
                or_(ACCOUNT.c.lease_until.is_(None), ACCOUNT.c.lease_until <= now),
                # The polling plan: cards planned for a later day are left alone today.
                or_(ACCOUNT.c.next_check.is_(None), ACCOUNT.c.next_check <= day),
                or_(
                    CHAT.c.chat_id.is_(None),
                    and_(CHAT.c.active == true(), CHAT.c.reminders_enabled == true()),
                ),
            )
            .order_by(ACCOUNT.c.chat_id, ACCOUNT.c.card)
            .limit(limit)
        )
        if self._postgres:
            # Rows another sweeper is claiming right now are skipped, not waited for.
            candidates = candidates.with_for_update(of=ACCOUNT, skip_locked=True)
        claim = (
            update(ACCOUNT)
            .where(_KEY.in_(candidates))
            .values(lease_owner=worker, lease_until=now + lease)
            .returning(*ACCOUNT.c)
        )

        def work(conn: Connection) -> tuple[list[Row[Any]], dict[int, ChatSettings]]:
            rows = sorted(conn.execute(claim).all(), key=lambda row: (row.chat_id, row.card))
            return rows, settings_of(conn, [int(row.chat_id) for row in rows])

        rows, settings = await self._run(work)
        batch: list[tuple[Account, ChatSettings]] = []
        for row in rows:
            account = self._accounts.open(row)
            if account is not None:
                batch.append((account, settings[account.chat_id]))
        return batch

    async def finish_sweeps(
        self,
        cards: Sequence[CardKey],
        day: date,
        next_checks: Mapping[CardKey, date] | None = None,
    ) -> None:
        """Mark these cards swept for `day` and end their leases, in one transaction.

        `next_checks` ((chat, card) -> day) writes each card's polling plan in the same
        transaction, one UPDATE per planned day; a card without one keeps the plan it had.
        """
        unique = list(dict.fromkeys(cards))
        if not unique:
            return
        statements: list[Executable] = [
            update(ACCOUNT)
            .where(_KEY.in_(chunk))
            .values(swept_on=day, lease_owner=None, lease_until=None)
            for chunk in chunks(unique)
        ]
        statements.extend(plan_statements(unique, next_checks or {}))
        await self._run(lambda conn: execute_all(conn, statements))

    async def set_next_checks(self, next_checks: Mapping[CardKey, date | None]) -> None:
        """Replace the polling plan of these cards (None: the next sweep checks them)."""
        statements = plan_statements(list(next_checks), next_checks)
        if statements:
            await self._run(lambda conn: execute_all(conn, statements))
