"""Renewal refusals in words, and the window "renew all" covers."""

from __future__ import annotations

import datetime as dt

from bot.library.models import Loan
from bot.rules.renewals import due_key, refusal_for, renew_window
from bot.texts.render import reason_text
from storage.store import ChatSettings, Refusal

NOW = dt.datetime(2026, 11, 22, tzinfo=dt.UTC)


def test_library_texts_in_words_or_quoted() -> None:
    reserved = "Renewal Not Allowed - Item Has Outstanding Requests"
    assert reason_text(reserved, "en") == "reserved by another patron"
    assert reason_text(reserved, "da") == "reserveret af en anden låner"
    assert reason_text("Maximum Renewals Exceeded", "en").startswith("it has been renewed the most")
    # Anything else is quoted as the library sent it (escaped: it goes into HTML).
    assert reason_text("Agency authentication failed", "en") == (
        "the library said “Agency authentication failed”"
    )
    assert reason_text("<b>x</b>", "da") == "biblioteket svarede »&lt;b&gt;x&lt;/b&gt;«"
    assert reason_text("", "en") == "the library gave no reason"


def test_a_refusal_applies_while_the_due_date_is_the_same() -> None:
    loan = Loan(loan_id="L1", due_date=dt.date(2026, 11, 25))
    refusals = {"L1": Refusal("L1", "2026-11-25", "Maximum Renewals Exceeded", NOW)}
    assert refusal_for(loan, refusals) is refusals["L1"]
    renewed = Loan(loan_id="L1", due_date=dt.date(2026, 12, 22))
    assert refusal_for(renewed, refusals) is None
    assert due_key(Loan(loan_id="L2", due_date="snart")) == "snart"


def test_renew_window_is_the_largest_threshold_or_seven_days() -> None:
    assert renew_window(True, ChatSettings(1).thresholds((3, 1, 0))) == 3
    assert renew_window(True, ChatSettings(1, reminder_days=(10, 2)).thresholds((3, 1, 0))) == 10
    assert renew_window(False, (3, 1, 0)) == 7
