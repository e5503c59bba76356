"""What counts as the database being away, and that its going and coming back are told once."""

from __future__ import annotations

import logging
import sqlite3

import pytest
from sqlalchemy.exc import IntegrityError, OperationalError

from storage.database import Availability, is_unavailable


def _wrapped(error: Exception) -> OperationalError:
    return OperationalError("SELECT 1", {}, error)


def test_what_counts_as_the_database_being_away() -> None:
    assert is_unavailable(ConnectionRefusedError(111, "Connect call failed"))
    assert is_unavailable(TimeoutError())
    assert is_unavailable(_wrapped(sqlite3.OperationalError("database is locked")))
    # A statement of ours that is wrong is not an outage.
    assert not is_unavailable(_wrapped(sqlite3.OperationalError("no such table: chat")))
    assert not is_unavailable(IntegrityError("INSERT", {}, sqlite3.IntegrityError("UNIQUE")))
    assert not is_unavailable(ValueError("not a database error"))


def test_going_away_and_coming_back_are_told_once(caplog: pytest.LogCaptureFixture) -> None:
    availability = Availability()
    caplog.set_level(logging.INFO, logger="storage.database")
    availability.answered()
    for _ in range(5):
        availability.failed(ConnectionRefusedError(111, "Connect call failed"))
    availability.failed(ValueError("a bug, not an outage"))
    assert availability.down
    for _ in range(3):
        availability.answered()
    assert not availability.down
    assert [r.getMessage().split(":")[0] for r in caplog.records] == [
        "database unavailable",
        "database available again after 0 s",
    ]
