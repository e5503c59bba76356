"""The notices no library sends by itself, each turned on or off per chat in /reminders.

- `refused`: a loan the library refused to renew, on its due day and every day it is overdue
  (key `loan:<id>:<due>:refused:<day>`, so at most once a day);
- `queue` (opt-in): a waiting hold moved up the queue (key `queue:<order id>:<position>`);
- `fees`: a fee that was not there before (key `fee:<fee id>`); the fees present when the
  notice is first seen are recorded silently, so only later ones are "new";
- `pickup`: a ready hold's last pick-up day, that morning (key `hold:<id>:lastday:<day>`),
  with the branch's opening hours as the library publishes them;
- `orders`: an order placed through the bot that has not shown up in /v3/user after
  `ORDER_GRACE` (key `order:<pid>:<placed>`), told once.

The keys go to the reminder ledger like every reminder, which keeps each to exactly once.
Which notices a chat has on is the chat's setting (`storage.chats.NOTICES`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable, Mapping, Sequence

from bot.library.models import BorrowerStatus, Debt, Hold, Loan
from bot.rules.checks import last_pick_up_day
from bot.rules.urgency import hold_is_ready, sort_holds

# How long an order placed through the bot may take to show up in /v3/user.
ORDER_GRACE = dt.timedelta(hours=24)
PLACED_FORMAT = "%Y%m%d%H%M"
UNSURE = "?"


def plan_days(thresholds: Sequence[int], enabled: frozenset[str]) -> tuple[int, ...]:
    """The days the polling plan checks a loan: a refused loan is reminded on its due day."""
    days = set(thresholds) | ({0} if "refused" in enabled else set())
    return tuple(sorted(days, reverse=True))


def refused_key(loan: Loan, today: dt.date) -> str | None:
    """The key of today's ⛔ reminder of a loan the library refused to renew, if it is due."""
    due = loan.due_date
    if not isinstance(due, dt.date) or due > today:
        return None
    return f"loan:{loan.loan_id}:{due.isoformat()}:refused:{today.isoformat()}"


def last_day_keys(holds: Iterable[Hold], today: dt.date) -> list[tuple[str, Hold]]:
    """(key, hold) for each ready hold whose last pick-up day is today."""
    return [
        (f"hold:{hold.order_id}:lastday:{today.isoformat()}", hold)
        for hold in sort_holds(list(holds))
        if hold_is_ready(hold) and last_pick_up_day(hold) == today
    ]


def queue_position(hold: Hold) -> int | None:
    """A waiting hold's place in the queue, when the library sent a whole number."""
    if hold_is_ready(hold):
        return None
    text = (hold.hold_queue_position or "").strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) < 7 else None


def queue_positions(holds: Iterable[Hold]) -> dict[str, int]:
    """Order id -> queue position, for the waiting holds that have one."""
    found: dict[str, int] = {}
    for hold in holds:
        position = queue_position(hold)
        if position is not None:
            found[hold.order_id] = position
    return found


def queue_moves(holds: Iterable[Hold], seen: Mapping[str, int]) -> list[tuple[str, Hold]]:
    """(key, hold) for each waiting hold now nearer the front than when last seen."""
    moved: list[tuple[str, Hold]] = []
    for hold in holds:
        position = queue_position(hold)
        before = seen.get(hold.order_id)
        if position is not None and before is not None and position < before:
            moved.append((f"queue:{hold.order_id}:{position}", hold))
    return moved


def faust(material: str | None) -> str:
    """The record number a pid ends in (`870970-basis:29318871` -> `29318871`)."""
    return (material or "").strip().rsplit(":", 1)[-1]


def order_shown(pid: str, status: BorrowerStatus) -> bool:
    """Whether an order for `pid` shows in the status: a hold (or already a loan) of it."""
    wanted = faust(pid)
    things: list[Hold | Loan] = [*status.orders, *status.loans]
    return any(faust(thing.title_id) == wanted for thing in things if thing.title_id)


def placed_text(placed: dt.datetime) -> str:
    return placed.astimezone(dt.UTC).strftime(PLACED_FORMAT)


def unsure_text(placed: str) -> str:
    """A title's claim (`placed_text`) marked: the order's answer was lost, so whether it went
    in is unknown."""
    return placed + UNSURE


def is_unsure(text: str | None) -> bool:
    return bool(text) and str(text).endswith(UNSURE)


def placed_time(text: str | None) -> dt.datetime | None:
    try:
        return dt.datetime.strptime((text or "").removesuffix(UNSURE), PLACED_FORMAT).replace(
            tzinfo=dt.UTC
        )
    except ValueError:
        return None


def order_check_day(placed: dt.datetime, tz: dt.tzinfo) -> dt.date:
    """The first day on which the order can be overdue to show (a sweep that day may still be
    early: then the day after)."""
    return (placed + ORDER_GRACE).astimezone(tz).date()


def order_overdue(placed: dt.datetime, today: dt.date, now: dt.datetime, tz: dt.tzinfo) -> bool:
    """Whether an order placed at `placed` should have shown up by the sweep of `today`."""
    check = order_check_day(placed, tz)
    return check < today or (check == today and now >= placed + ORDER_GRACE)


def fee_id(debt: Debt) -> str:
    """A short digest naming one fee (its date, amount, currency and title): stored instead of
    the fee itself, and the same in every status that shows it."""
    when = debt.date.isoformat() if isinstance(debt.date, dt.date) else str(debt.date or "")
    raw = "\x1f".join((when, debt.amount.strip(), debt.currency.strip(), debt.title.strip()))
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def new_fees(debts: Iterable[Debt], seen: Iterable[str]) -> list[tuple[str, Debt]]:
    """(key, fee) for each fee not among those seen before."""
    known = set(seen)
    found: dict[str, Debt] = {}
    for debt in debts:
        ident = fee_id(debt)
        if ident not in known:
            found.setdefault(f"fee:{ident}", debt)
    return list(found.items())
