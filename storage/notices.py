"""What the notices compare against (table `notice_seen`): per card, `queue:<order id>` with
the queue position last seen and `fee:<fee id>` for each fee known (a digest, never the fee);
`placed:<record number>`, the titles ordered through the bot (`claim_order`), and
`renewed:<loan id>`, the day a loan was last renewed through the bot (`claim_renewal`), kept in
the same per-card table so they go with the card and with `/forget`.

The sweep reads a card's entries only when a notice needs them, and writes what it saw with
the patrons it finishes, one transaction per batch.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from sqlalchemy import and_, bindparam, delete, false, insert, not_, or_, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.expression import Executable

from storage.cards import CardKey, of_card
from storage.database import Repository
from storage.tables import CARD, NOTICE_SEEN


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


# A loan renewed through the bot (`claim_renewal`) -> the day, `YYYYMMDD`; for a renewal whose
# answer was lost, then `?`, the due date it was sent at (`YYYYMMDD`), `?` and when (UTC,
# `YYYYMMDDHHMM`): 30 characters, fixed widths, so a string comparison orders the moments.
RENEWED = "renewed:"
UNANSWERED = "?"
# Binds name the card's number `number_`: SQLAlchemy keeps a column's own name for the SET of
# an UPDATE (`_MARK_KNOWN`), and one name serves every statement here.
# A card's entries of one kind (`kind` is its prefix and `%`; the prefixes hold no wildcard).
_DROP_KIND = delete(NOTICE_SEEN).where(
    NOTICE_SEEN.c.chat_id == bindparam("chat"),
    NOTICE_SEEN.c.number == bindparam("number_"),
    NOTICE_SEEN.c.item.like(bindparam("kind")),
)
_OF_CARD = (CARD.c.chat_id == bindparam("chat")) & (CARD.c.number == bindparam("number_"))
_MARK_KNOWN = update(CARD).where(_OF_CARD).values(fees_known=True)
_SET_CHECK = update(CARD).where(_OF_CARD).values(order_check=bindparam("day"))
# Built once: the sweep reads a card's entries per card.
_SEEN = select(NOTICE_SEEN.c.item, NOTICE_SEEN.c.value).where(
    NOTICE_SEEN.c.chat_id == bindparam("chat"), NOTICE_SEEN.c.number == bindparam("number_")
)


def _placed(title: str) -> str:
    return f"placed:{title}"[:300]


def _renewal(loan_id: str) -> str:
    return f"{RENEWED}{loan_id}"[:300]


def _day(day: date) -> str:
    return day.strftime("%Y%m%d")


@dataclass(frozen=True)
class Unanswered:
    """A renewal of the day whose answer was lost: the due date it was sent at, and when."""

    due: date
    at: datetime


def _unanswered_prefix(day: date, due: date) -> str:
    return f"{_day(day)}{UNANSWERED}{due:%Y%m%d}{UNANSWERED}"


def _unanswered(day: date, due: date, at: datetime) -> str:
    """A claim of `day` whose renewal, sent at due date `due`, got no answer at `at`."""
    return f"{_unanswered_prefix(day, due)}{at.astimezone(UTC):%Y%m%d%H%M}"


def _unanswered_of(value: str) -> Unanswered | None:
    """What `_unanswered` wrote, else None (a plain claim)."""
    _, mark, rest = value.partition(UNANSWERED)
    if not mark:
        return None
    due, _, at = rest.partition(UNANSWERED)
    moment = datetime.strptime(at, "%Y%m%d%H%M").replace(tzinfo=UTC)
    return Unanswered(datetime.strptime(due, "%Y%m%d").date(), moment)


def of_seen(chat_id: int, number: int) -> ColumnElement[bool]:
    return (NOTICE_SEEN.c.chat_id == chat_id) & (NOTICE_SEEN.c.number == number)


class NoticeSeen(Repository):
    async def seen(self, chat_id: int, number: int = 1) -> dict[str, str | None]:
        """The card's entries: item -> value."""
        values = {"chat": chat_id, "number_": number}
        return await self._run(
            lambda conn: {row.item: row.value for row in conn.execute(_SEEN, values)}
        )

    async def watch_order(
        self, chat_id: int, pid: str, placed: str, check: date, number: int = 1
    ) -> None:
        """An order placed through the bot, to tell of should it not show up: its pid and
        when (`rules.notices.placed_text`); the card's next check is `check` at the latest."""
        item = f"order:{pid}"[:300]
        key = ["chat_id", "number", "item"]

        def work(conn: Connection) -> None:
            conn.execute(
                self._insert(NOTICE_SEEN)
                .values(chat_id=chat_id, number=number, item=item, value=placed)
                .on_conflict_do_update(index_elements=key, set_={"value": placed})
            )
            where = of_card(chat_id, number)
            before = conn.execute(select(CARD.c.order_check).where(where)).scalar()
            day = check if before is None else min(before, check)
            conn.execute(update(CARD).where(where).values(order_check=day))

        await self._run(work)

    async def claim_order(self, chat_id: int, title: str, placed: str, number: int = 1) -> bool:
        """Claim title `title` (a record number) for one order of the card, before it is sent:
        True for the one caller that claimed it, False when it is claimed already. Atomic: the
        primary key decides, so two racing confirmations place one order."""
        statement = (
            self._insert(NOTICE_SEEN)
            .values(chat_id=chat_id, number=number, item=_placed(title), value=placed)
            .on_conflict_do_nothing(index_elements=["chat_id", "number", "item"])
        )
        return bool(await self._run(lambda conn: conn.execute(statement).rowcount == 1))

    async def claim_renewal(
        self,
        chat_id: int,
        loan_id: str,
        day: date,
        number: int = 1,
        *,
        due: date | None = None,
        settled: timedelta = timedelta(0),
    ) -> bool:
        """Claim the card's loan `loan_id` for one renewal on `day`, before it is sent: True for
        the one caller that claimed it, False when that day's is claimed already. Atomic: a row
        of an earlier day is taken over in the same statement, and so is that day's claim whose
        answer was lost (`hold_unanswered`) at least `settled` ago when it was sent at the
        loan's due date `due`, as read afresh: the renewal it sent did not happen."""
        day_ = _day(day)
        unanswered = NOTICE_SEEN.c.value.startswith(f"{day_}{UNANSWERED}")
        retry: ColumnElement[bool] = false()
        if due is not None:
            latest = _unanswered(day, due, self._now() - settled)
            prefix = _unanswered_prefix(day, due)
            retry = NOTICE_SEEN.c.value.startswith(prefix) & (NOTICE_SEEN.c.value <= latest)
        statement = (
            self._insert(NOTICE_SEEN)
            .values(chat_id=chat_id, number=number, item=_renewal(loan_id), value=day_)
            .on_conflict_do_update(
                index_elements=["chat_id", "number", "item"],
                set_={"value": day_},
                where=and_(NOTICE_SEEN.c.value != day_, or_(not_(unanswered), retry)),
            )
        )
        return bool(await self._run(lambda conn: conn.execute(statement).rowcount == 1))

    async def hold_unanswered(
        self, chat_id: int, dues: Mapping[str, date], day: date, number: int = 1
    ) -> None:
        """Keep the claims of `day` of loans whose renewal got no answer (loan id -> the due
        date it was sent at): it may have been done, so only a read showing that due date
        still, once the library has surely finished with it, lets the loan be claimed again
        that day."""
        if not dues:
            return
        now = self._now()

        def work(conn: Connection) -> None:
            for loan_id, due in dues.items():
                conn.execute(
                    update(NOTICE_SEEN)
                    .where(
                        of_seen(chat_id, number),
                        NOTICE_SEEN.c.item == _renewal(loan_id),
                        NOTICE_SEEN.c.value == _day(day),
                    )
                    .values(value=_unanswered(day, due, now))
                )

        await self._run(work)

    async def renewed(
        self, chat_id: int, day: date, number: int = 1
    ) -> dict[str, Unanswered | None]:
        """The card's loans claimed for a renewal on `day` (`claim_renewal`): each with None,
        or, when its renewal's answer was lost, with the due date it was sent at and when."""
        day_ = _day(day)
        statement = select(NOTICE_SEEN.c.item, NOTICE_SEEN.c.value).where(
            of_seen(chat_id, number),
            NOTICE_SEEN.c.item.like(f"{RENEWED}%"),
            or_(NOTICE_SEEN.c.value == day_, NOTICE_SEEN.c.value.startswith(f"{day_}{UNANSWERED}")),
        )
        rows = await self._run(lambda conn: list(conn.execute(statement)))
        return {row.item.removeprefix(RENEWED): _unanswered_of(row.value) for row in rows}

    async def release_renewals(
        self, chat_id: int, loan_ids: Collection[str], day: date, number: int = 1
    ) -> None:
        """Let the loans be renewed again on `day`: they were not renewed."""
        if not loan_ids:
            return
        statement = delete(NOTICE_SEEN).where(
            of_seen(chat_id, number),
            NOTICE_SEEN.c.item.in_([_renewal(loan_id) for loan_id in loan_ids]),
            NOTICE_SEEN.c.value == _day(day),
        )
        await self._run(lambda conn: conn.execute(statement))

    @staticmethod
    def expired(now: datetime) -> Executable:
        """The renewal claims of days gone by, with a day's margin for the bot's time zone:
        they decide nothing now."""
        before = _day(now.date() - timedelta(days=1))
        return delete(NOTICE_SEEN).where(
            NOTICE_SEEN.c.item.like(f"{RENEWED}%"), NOTICE_SEEN.c.value < before
        )

    async def ordered(self, chat_id: int, title: str, number: int = 1) -> str | None:
        """When title `title` was claimed for an order of the card (`claim_order`), or None."""
        statement = select(NOTICE_SEEN.c.value).where(
            of_seen(chat_id, number), NOTICE_SEEN.c.item == _placed(title)
        )
        found: str | None = await self._run(lambda conn: conn.execute(statement).scalar())
        return found

    async def restate_order(
        self, chat_id: int, title: str, placed: str, value: str, number: int = 1
    ) -> None:
        """Give the claim of title `title` made with `placed` the value `value` (a newer claim
        is left as it is)."""
        statement = (
            update(NOTICE_SEEN)
            .where(
                of_seen(chat_id, number),
                NOTICE_SEEN.c.item == _placed(title),
                NOTICE_SEEN.c.value == placed,
            )
            .values(value=value)
        )
        await self._run(lambda conn: conn.execute(statement))

    async def release_order(
        self, chat_id: int, title: str, number: int = 1, *, placed: str | None = None
    ) -> None:
        """Let the title be ordered again: its order was refused, or (`placed`: only that claim,
        not a newer one) it no longer shows on the card."""
        statement = delete(NOTICE_SEEN).where(
            of_seen(chat_id, number), NOTICE_SEEN.c.item == _placed(title)
        )
        if placed is not None:
            statement = statement.where(NOTICE_SEEN.c.value == placed)
        await self._run(lambda conn: conn.execute(statement))

    async def keep(self, seen: Mapping[CardKey, Seen]) -> None:
        """Replace the kinds given per card with what was seen: one statement per kind for all
        the cards (the sweep's batch), not one per card."""
        if not seen:
            return
        rows: list[dict[str, object]] = []
        drops: list[dict[str, object]] = []
        marks: list[dict[str, object]] = []
        checks: list[dict[str, object]] = []
        for (chat_id, number), what in seen.items():
            owner: dict[str, object] = {"chat_id": chat_id, "number": number}
            where: dict[str, object] = {"chat": chat_id, "number_": number}
            if what.queue is not None:
                drops.append({**where, "kind": "queue:%"})
                rows += [
                    {**owner, "item": f"queue:{order}"[:300], "value": str(pos)}
                    for order, pos in what.queue.items()
                ]
            if what.fees is not None:
                drops.append({**where, "kind": "fee:%"})
                rows += [{**owner, "item": f"fee:{ident}", "value": None} for ident in what.fees]
            if what.orders is not None:
                drops.append({**where, "kind": "order:%"})
                checks.append({**where, "day": what.order_check})
                rows += [
                    {**owner, "item": f"order:{pid}"[:300], "value": placed}
                    for pid, placed in what.orders.items()
                ]
            if what.fees_known:
                marks.append(where)

        # One compiled statement each, run for many rows (executemany): a multi-row VALUES is
        # compiled afresh for every batch size, which cost more than the sweep's other writes.
        def work(conn: Connection) -> None:
            if drops:
                conn.execute(_DROP_KIND, drops)
            if rows:
                conn.execute(insert(NOTICE_SEEN), rows)
            if marks:
                conn.execute(_MARK_KNOWN, marks)
            if checks:
                conn.execute(_SET_CHECK, checks)

        await self._run(work)
