"""What a reminder is: its kind (the digest's section) and its key, which the reminder ledger
keeps exactly once and so must never change form."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from bot.jobs.notices import daily_refusals
from bot.library.models import BorrowerStatus, Hold, Loan
from bot.rules.reminders import Kind, Reminder, candidates, card_key, due_reminders
from bot.rules.renewals import due_key
from storage.store import Refusal

TODAY = date(2026, 3, 10)


def _status() -> BorrowerStatus:
    return BorrowerStatus(
        loans=[
            Loan(loan_id="soon", due_date=TODAY + timedelta(days=3)),
            Loan(loan_id="late", due_date=TODAY - timedelta(days=2)),
            Loan(loan_id="odd", due_date="31/02/2026"),
            Loan(loan_id="far", due_date=TODAY + timedelta(days=30)),
        ],
        orders=[
            Hold(order_id="H1", status="Available for pickup"),
            Hold(order_id="H2", status="Active", hold_queue_position="2"),
        ],
    )


def test_each_reminder_has_its_kind_and_the_key_it_always_had() -> None:
    found = due_reminders(_status(), TODAY, (3, 1))
    assert [(r.kind, r.key) for r in found] == [
        (Kind.OVERDUE, "loan:late:2026-03-08:overdue"),
        (Kind.DUE, "loan:soon:2026-03-13:3"),
        (Kind.UNREADABLE, "loan:odd:unreadable:" + found[2].key.rsplit(":", 1)[1]),
        (Kind.READY, "hold:H1:ready"),
    ]
    assert len(found[2].key.rsplit(":", 1)[1]) == 12
    # The untyped view (the benchmark's oracle) is the same keys in the same order.
    assert [key for key, _ in candidates(_status(), TODAY, (3, 1))] == [r.key for r in found]
    # Card 1 keeps the keys it had before a chat could hold several cards.
    assert card_key(1, found[0].key) == found[0].key
    assert card_key(2, found[0].key) == "c2:" + found[0].key


def test_a_refused_loan_is_reminded_daily_in_place_of_its_usual_reminder() -> None:
    status = _status()
    late = status.loans[1]
    found = due_reminders(status, TODAY, (3, 1))
    refusal = Refusal(
        "late", due_key(late), "Renewal Not Allowed", datetime(2026, 3, 1, tzinfo=UTC)
    )
    daily = daily_refusals(status.loans, found, {"late": refusal}, TODAY)
    assert daily[0] == Reminder(Kind.REFUSED, "loan:late:2026-03-08:refused:2026-03-10", late)
    assert daily[1:] == found[1:]
    # Without a refusal that still applies, nothing changes.
    assert daily_refusals(status.loans, found, {}, TODAY) == found
