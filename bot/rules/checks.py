"""The polling plan: the next day a card must be checked, from the last status seen.

Every `/v3/user` call reaches the library's own circulation system, so the sweep asks only for
the cards that can need the patron. From the last status seen on day `seen`, the next check is
the first day from `start` on which something can be due:

- a loan: its first threshold day (due date minus the largest threshold), then each further
  threshold day and the first overdue day, and nothing after it (the overdue reminder is sent
  once per due date; a renewal is a new due date at least `min_loan_days` after the renewal
  day, which the bound for anything new covers); with a due date that could not be read,
  every day (its reminder is keyed by the text, which can change any day);
- a hold still waiting: every day, since a hold can become ready on any day;
- a hold ready for pick-up: its last pick-up day (every day when that is unknown);
- anything new: a loan taken after the check is due `min_loan_days` later at the earliest, so
  its first reminder falls `min_loan_days - largest threshold` days after `seen` at the soonest.
  That bounds how long any card is left alone (`POLL_MIN_LOAN_DAYS`, default 7).

`start` is `seen + 1` after a sweep (that day's reminders are settled) and `seen` after a
command, whose status may hold something the sweep has not yet sent today. The plan is pure:
the store keeps its result per card (`services.checks`), and the sweep claims only cards
planned for the day.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence

from bot.library.models import BorrowerStatus, Hold, Loan
from bot.rules.urgency import hold_is_ready

DEFAULT_MIN_LOAN_DAYS = 7


def due_of(loan: Loan) -> dt.date | None:
    """The loan's due date when it could be read (the one place the plan reads it)."""
    due = loan.due_date
    return due if isinstance(due, dt.date) else None


def last_pick_up_day(hold: Hold) -> dt.date | None:
    last = hold.pick_up_expiry_date
    return last if isinstance(last, dt.date) else None


def loan_check(due: dt.date | None, start: dt.date, days: Sequence[int]) -> dt.date | None:
    """The first day from `start` on which this loan can be reminded; None when none is left
    (past its first overdue day). `days`: distinct thresholds, largest first, as `next_check`
    passes them, so the reminder days come in order."""
    if due is None:
        return start  # unreadable: daily
    for day in days:
        remind = due - dt.timedelta(days=day)
        if remind >= start:
            return remind
    overdue = due + dt.timedelta(days=1)
    return overdue if overdue >= start else None


def hold_check(hold: Hold, start: dt.date) -> dt.date | None:
    """Waiting: daily. Ready: its last pick-up day (daily when unknown); past: nothing."""
    if not hold_is_ready(hold):
        return start
    last = last_pick_up_day(hold)
    if last is None:
        return start
    return last if last >= start else None


def new_loan_check(seen: dt.date, days: Sequence[int], min_loan_days: int) -> dt.date:
    """The first day a loan taken on or after `seen` can be reminded: never before `seen + 1`."""
    lead = min_loan_days - max(days, default=0)
    return seen + dt.timedelta(days=max(1, lead))


def due_today(status: BorrowerStatus, day: dt.date, days: Sequence[int]) -> bool:
    """Whether anything can be reminded on `day`: a ready hold, or a loan within its first
    threshold or overdue (or with an unreadable due date); a superset of the sweep's keys."""
    if any(hold_is_ready(hold) for hold in status.orders):
        return True
    reach = max(days, default=-1)
    for loan in status.loans:
        due = due_of(loan)
        if due is None or (due - day).days <= reach or due < day:
            return True
    return False


def next_check(
    status: BorrowerStatus,
    *,
    seen: dt.date,
    days: Iterable[int],
    min_loan_days: int = DEFAULT_MIN_LOAN_DAYS,
    swept: bool = True,
) -> dt.date:
    """The next day the card must be checked, given the status seen on day `seen`.

    `swept`: that day's reminders were settled by the sweep (so the plan starts the day after);
    a command passes False, and the plan is `seen` itself when something is due that day.
    """
    thresholds = tuple(sorted(set(days), reverse=True))
    if not swept and due_today(status, seen, thresholds):
        return seen  # the sweep may not have sent it yet; its keys keep it to once
    start = seen + dt.timedelta(days=1) if swept else seen
    plan = new_loan_check(seen, thresholds, min_loan_days)
    for loan in status.loans:
        when = loan_check(due_of(loan), start, thresholds)
        if when is not None:
            plan = min(plan, when)
            if plan == start:
                return start
    for hold in status.orders:
        when = hold_check(hold, start)
        if when is not None:
            plan = min(plan, when)
            if plan == start:
                return start
    return plan
