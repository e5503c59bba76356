"""The polling plan: each rule, and (hypothesis) that checking only on planned days sends every
reminder on the same day as checking every day would."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.library.models import BorrowerStatus, Hold, Loan
from bot.rules.polling import next_check
from bot.rules.reminders import candidates

SEEN = date(2026, 3, 2)
DAYS = (3, 1, 0)


def day(offset: int) -> date:
    return SEEN + timedelta(days=offset)


def status(loans: list[Loan] | None = None, holds: list[Hold] | None = None) -> BorrowerStatus:
    return BorrowerStatus(loans=loans or [], orders=holds or [])


def loan(due: date | str | None, loan_id: str = "L1") -> Loan:
    return Loan(loan_id=loan_id, due_date=due)


WAITING = Hold(order_id="H1", status="In process", hold_queue_position="2")


def ready(last: date | None) -> Hold:
    return Hold(order_id="H2", status="Available for pickup", pick_up_expiry_date=last)


def plan(found: BorrowerStatus, *, days: tuple[int, ...] = DAYS, **kwargs: object) -> date:
    return next_check(found, seen=SEEN, days=days, **kwargs)  # type: ignore[arg-type]


def test_nothing_due_waits_for_the_shortest_loan_less_the_largest_threshold() -> None:
    assert plan(status()) == day(4)  # a loan taken today is due in 7 days at the soonest
    assert plan(status(), min_loan_days=14) == day(11)
    assert plan(status(), days=(10, 0)) == day(1)  # thresholds beyond the loan period: daily


def test_a_loan_is_checked_on_each_threshold_day_and_its_first_overdue_day() -> None:
    assert plan(status([loan(day(20))])) == day(4)  # the new-loan bound comes first
    assert plan(status([loan(day(20))]), min_loan_days=30) == day(17)  # due minus 3
    assert plan(status([loan(day(3))])) == day(2)  # today's 3-day reminder is sent: the 1-day
    assert plan(status([loan(day(1))])) == day(1)
    assert plan(status([loan(day(0))])) == day(1)  # first overdue day
    # Its overdue reminder was sent: nothing more for it; a renewal is a new loan.
    assert plan(status([loan(day(-1))])) == day(4)
    assert plan(status([loan(day(-4))]), min_loan_days=30) == day(27)
    assert plan(status([loan("next Tuesday")])) == day(1)  # unreadable: daily


def test_holds_waiting_daily_ready_on_their_last_day() -> None:
    assert plan(status(holds=[WAITING]), min_loan_days=30) == day(1)
    assert plan(status(holds=[ready(day(5))]), min_loan_days=30) == day(5)
    assert plan(status(holds=[ready(None)]), min_loan_days=30) == day(1)
    assert plan(status(holds=[ready(day(-1))]), min_loan_days=30) == day(27)


def test_a_command_plans_today_when_something_may_not_be_sent_yet() -> None:
    assert plan(status(holds=[ready(day(5))]), swept=False) == SEEN
    assert plan(status([loan(day(2))]), swept=False) == SEEN
    assert plan(status([loan(day(20))]), swept=False) == day(4)


# --- the property: planned days lose nothing ---------------------------------------------------


@dataclass
class Card:
    """One card's truth; `events[d]` change it after day d's sweep."""

    loans: dict[str, date | None] = field(default_factory=dict)
    waiting: set[str] = field(default_factory=set)
    ready: dict[str, date] = field(default_factory=dict)

    def status(self) -> BorrowerStatus:
        return status(
            [loan(due, loan_id) for loan_id, due in self.loans.items()],
            [Hold(order_id=h, status="Reserved") for h in sorted(self.waiting)]
            + [
                Hold(order_id=h, status="Available for pickup", pick_up_expiry_date=last)
                for h, last in self.ready.items()
            ],
        )


# (day, kind, subject, period): kinds are "borrow", "renew", "return", "ready", "pick up".
Event = tuple[int, str, int, int]
HORIZON = 45


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[tuple[int, ...], int, Card, list[Event]]:
    days = tuple(draw(st.sets(st.integers(0, 10), max_size=4)))
    min_loan = draw(st.integers(1, 30))
    card = Card()
    for index in range(draw(st.integers(0, 3))):
        offset = draw(st.one_of(st.none(), st.integers(-5, 40)))
        card.loans[f"L{index}"] = None if offset is None else day(offset)
    for index in range(draw(st.integers(0, 2))):
        card.waiting.add(f"H{index}")
    events = draw(
        st.lists(
            st.tuples(
                st.integers(0, HORIZON),
                st.sampled_from(["borrow", "renew", "return", "ready", "pick up"]),
                st.integers(0, 5),
                st.integers(0, 30),
            ),
            max_size=12,
        )
    )
    return days, min_loan, card, events


def apply(card: Card, today: int, kind: str, subject: int, extra: int, min_loan: int) -> None:
    """One change the library makes; new due dates respect the shortest loan period."""
    due = day(today + min_loan + extra)
    if kind == "borrow":
        card.loans[f"N{today}-{subject}"] = due
    elif kind == "renew" and card.loans:
        card.loans[sorted(card.loans)[subject % len(card.loans)]] = due
    elif kind == "return" and card.loans:
        del card.loans[sorted(card.loans)[subject % len(card.loans)]]
    elif kind == "ready" and card.waiting:
        hold = sorted(card.waiting)[subject % len(card.waiting)]
        card.waiting.discard(hold)
        card.ready[hold] = day(today + 1 + extra % 10)
    elif kind == "pick up" and card.ready:
        del card.ready[sorted(card.ready)[subject % len(card.ready)]]


def first_sent(
    days: tuple[int, ...], min_loan: int, start: Card, events: list[Event], *, planned: bool
) -> dict[str, int]:
    """Key -> the day its reminder goes out, checking every day or only on planned days."""
    card = Card(dict(start.loans), set(start.waiting), dict(start.ready))
    sent: dict[str, int] = {}
    check = 0
    for today in range(HORIZON + 1):
        if not planned or today == check:
            found = card.status()
            for key, _ in candidates(found, day(today), sorted(days, reverse=True)):
                sent.setdefault(key, today)
            upcoming = next_check(found, seen=day(today), days=days, min_loan_days=min_loan)
            check = (upcoming - SEEN).days
            assert check > today
        for when, kind, subject, extra in events:
            if when == today:
                apply(card, today, kind, subject, extra, min_loan)
    return sent


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_planned_checks_send_every_reminder_on_its_day(
    scenario: tuple[tuple[int, ...], int, Card, list[Event]],
) -> None:
    days, min_loan, card, events = scenario
    daily = first_sent(days, min_loan, card, events, planned=False)
    assert first_sent(days, min_loan, card, events, planned=True) == daily
