"""The sweep's notices (`rules.notices`): what changed since the card was last seen.

Queue moves and new fees are found by comparing a status with the card's entries in
`notice_seen`; orders placed through the bot are let go once they show, or told once when
they are overdue to. The entries are read only when a notice has something to compare, and
what was seen is handed back for the sweep to keep with the card when it is finished.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING

from bot.library.models import Loan
from bot.rules.notices import (
    fee_id,
    new_fees,
    order_check_day,
    order_overdue,
    order_shown,
    placed_time,
    queue_moves,
    queue_positions,
    refused_key,
)
from bot.rules.reminders import LOAN_KINDS, Kind, Reminder
from bot.rules.renewals import refusal_for
from bot.rules.urgency import sort_loans
from bot.texts.formatting import is_zero_amount
from storage.notices import Seen

if TYPE_CHECKING:
    from bot.library.models import BorrowerStatus
    from storage.store import Card, ChatSettings, Refusal, Store


@dataclass
class Noticed:
    """A card's notices of the day: the reminders found, what to keep as seen (None: nothing
    changed), and the day the card must be checked by (None: no earlier than planned)."""

    found: list[Reminder] = field(default_factory=list)
    seen: Seen | None = None
    check_by: date | None = None

    def check(self, day: date) -> None:
        self.check_by = day if self.check_by is None else min(self.check_by, day)


async def notices(
    store: Store,
    card: Card,
    chat: ChatSettings,
    status: BorrowerStatus,
    today: date,
    tz: tzinfo,
) -> Noticed:
    """Queue moves, new fees and overdue orders of one card."""
    noticed = Noticed()
    positions = queue_positions(status.orders) if "queue" in chat.notices else {}
    fees = {fee_id(debt) for debt in status.debt} if "fees" in chat.notices else set()
    compare_fees = bool(fees) and card.fees_known
    orders = card.order_check is not None and card.order_check <= today
    if card.order_check is not None and not orders:
        noticed.check(card.order_check)
    if not positions and not compare_fees and not orders:
        if "fees" in chat.notices and not card.fees_known:
            noticed.seen = Seen(fees=fees, fees_known=True)  # recorded, not told
        return noticed
    entries = await store.notices.seen(*card.key)
    seen = Seen()
    if orders:
        _orders(noticed, chat, status, entries, seen, today, tz)
    if positions:
        last = {
            item.removeprefix("queue:"): int(value)
            for item, value in entries.items()
            if item.startswith("queue:") and value is not None and value.isdigit()
        }
        noticed.found += [
            Reminder(Kind.QUEUE, key, hold) for key, hold in queue_moves(status.orders, last)
        ]
        # Written only when it moved: most days nothing does, and every card is swept.
        seen.queue = positions if positions != last else None
    if "fees" in chat.notices:
        if card.fees_known:
            known = [item.removeprefix("fee:") for item in entries if item.startswith("fee:")]
            owed = [debt for debt in status.debt if not is_zero_amount(debt.amount)]
            noticed.found += [Reminder(Kind.FEE, key, debt) for key, debt in new_fees(owed, known)]
            seen.fees = fees if fees != set(known) else None
        else:
            seen.fees, seen.fees_known = fees, True
    if seen != Seen():
        noticed.seen = seen
    return noticed


def _orders(
    noticed: Noticed,
    chat: ChatSettings,
    status: BorrowerStatus,
    entries: dict[str, str | None],
    seen: Seen,
    today: date,
    tz: tzinfo,
) -> None:
    """Orders placed through the bot: shown ones are let go, those overdue to show are told
    (once: their key) and let go, the rest stay watched with the day of their next check."""
    now = datetime.now(UTC)
    watched: dict[str, str] = {}
    check: date | None = None
    for item, value in entries.items():
        if not item.startswith("order:") or value is None:
            continue
        pid, placed = item.removeprefix("order:"), placed_time(value)
        if placed is None or order_shown(pid, status):
            continue
        if order_overdue(placed, today, now, tz):
            if "orders" in chat.notices:
                noticed.found.append(Reminder(Kind.ORDER, f"order:{pid}:{value}", pid))
            continue
        watched[pid] = value
        day = max(order_check_day(placed, tz), today + timedelta(days=1))
        check = day if check is None else min(check, day)
    seen.orders, seen.order_check = watched, check
    if check is not None:
        noticed.check(check)


def refusable(loans: list[Loan], today: date) -> list[Loan]:
    """The loans that would be reminded daily, should the library have refused to renew them."""
    return [loan for loan in loans if refused_key(loan, today)]


def daily_refusals(
    loans: list[Loan], found: list[Reminder], refusals: dict[str, Refusal], today: date
) -> list[Reminder]:
    """A loan the library refused to renew is reminded daily from its due day on: its reminder
    of the day takes the place of its usual one."""
    daily: dict[str, Reminder] = {}
    for loan in sort_loans(loans):
        key = refused_key(loan, today)
        if key is not None and refusal_for(loan, refusals) is not None:
            daily[loan.loan_id] = Reminder(Kind.REFUSED, key, loan)
    if not daily:
        return found
    kept: list[Reminder] = []
    for reminder in found:
        loan_id = reminder.thing.loan_id if isinstance(reminder.thing, Loan) else None
        if reminder.kind in LOAN_KINDS and loan_id in daily:
            kept.append(daily.pop(loan_id))
        else:
            kept.append(reminder)
    return kept + list(daily.values())
