"""Settings values an operator writes in more than one way, read alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config.settings import load_settings


@pytest.mark.parametrize("days", ["3,1,0", "3, 1, 0", "3 1 0", " 0,3 , 1 "])
def test_reminder_days_by_commas_or_spaces(days: str) -> None:
    assert load_settings(_env_file=None, REMINDER_DAYS=days).REMINDER_DAYS == [3, 1, 0]


def test_a_caller_that_reads_no_env_file_is_not_stopped_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text("not a valid line\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert load_settings(_env_file=None, PORT=8081).PORT == 8081
