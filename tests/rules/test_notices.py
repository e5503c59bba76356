"""The notices' pure rules: keys, comparisons, and the days the polling plan must check."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from bot.library.models import BorrowerStatus, Debt, Hold, Loan
from bot.rules import notices
from bot.rules.polling import next_check

TODAY = date(2026, 1, 10)
CPH = ZoneInfo("Europe/Copenhagen")


def test_toggles_round_trip_and_defaults() -> None:
    assert notices.parse(None) == notices.DEFAULT_ON and "queue" not in notices.DEFAULT_ON
    assert notices.parse(notices.dump({"queue", "fees", "bogus"})) == {"queue", "fees"}
    assert notices.parse("") == frozenset()


def test_a_refused_loan_is_due_daily_from_its_due_day() -> None:
    def key(days: int) -> str | None:
        return notices.refused_key(Loan(loan_id="L1", due_date=TODAY + timedelta(days)), TODAY)

    assert key(1) is None
    assert key(0) == "loan:L1:2026-01-10:refused:2026-01-10"
    assert key(-3) == "loan:L1:2026-01-07:refused:2026-01-10"
    assert notices.refused_key(Loan(loan_id="L2", due_date="31/02/2026"), TODAY) is None


def test_the_plan_checks_a_refused_loans_due_day_when_no_threshold_does() -> None:
    status = BorrowerStatus(loans=[Loan(loan_id="L1", due_date=TODAY + timedelta(days=5))])
    seen = TODAY + timedelta(days=2)  # the 3-day reminder's day
    assert next_check(status, seen=seen, days=(3,)) == TODAY + timedelta(days=6)  # overdue
    planned = next_check(status, seen=seen, days=notices.plan_days((3,), notices.DEFAULT_ON))
    assert planned == TODAY + timedelta(days=5)  # its due day
    assert notices.plan_days((3,), frozenset()) == (3,)


def test_queue_moves_only_forward_and_only_for_numbers() -> None:
    holds = [
        Hold(order_id="A", status="Active", hold_queue_position="1"),
        Hold(order_id="B", status="Active", hold_queue_position="5"),
        Hold(order_id="C", status="Active", hold_queue_position="?"),
        Hold(order_id="D", status="Available for pickup", hold_queue_position="0"),
    ]
    assert notices.queue_positions(holds) == {"A": 1, "B": 5}
    moved = notices.queue_moves(holds, {"A": 4, "B": 3, "C": 9, "D": 2})
    assert [key for key, _ in moved] == ["queue:A:1"]


def test_a_fee_is_new_once_by_its_digest() -> None:
    fee = Debt(amount="45.50", currency="DKK", date=TODAY, title="Rødt & sort")
    other = Debt(amount="20.00", currency="DKK", date=TODAY, title="")
    assert notices.fee_id(fee) == notices.fee_id(Debt(**fee.model_dump()))
    assert len(notices.fee_id(fee)) == 16 and notices.fee_id(fee) != notices.fee_id(other)
    found = notices.new_fees([fee, other, fee], [notices.fee_id(other)])
    assert found == [(f"fee:{notices.fee_id(fee)}", fee)]


def test_an_order_is_overdue_to_show_a_day_after_it_was_placed() -> None:
    placed = datetime(2026, 1, 10, 14, 0, tzinfo=UTC)
    assert notices.placed_time(notices.placed_text(placed)) == placed
    assert notices.placed_time("garbage") is None
    assert notices.order_check_day(placed, CPH) == date(2026, 1, 11)
    before = datetime(2026, 1, 11, 13, 0, tzinfo=UTC)
    after = datetime(2026, 1, 11, 14, 0, tzinfo=UTC)
    assert not notices.order_overdue(placed, date(2026, 1, 11), before, CPH)
    assert notices.order_overdue(placed, date(2026, 1, 11), after, CPH)
    assert notices.order_overdue(placed, date(2026, 1, 12), before, CPH)
    status = BorrowerStatus(orders=[Hold(order_id="X", title_id="22677608")])
    assert notices.order_shown("870970-basis:22677608", status)
    assert not notices.order_shown("870970-basis:29318871", status)
