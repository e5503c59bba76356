"""Releases an operator can tell apart: the version in pyproject.toml (the one place it is
written) is the newest section of CHANGELOG.md, each release's section has a higher version than
the one before it, and `--version` and `library_bot_build_info` say the installed one."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from prometheus_client import generate_latest

from bot.cli import main
from bot.services.metrics import Metrics

ROOT = Path(__file__).resolve().parent.parent
# `## [0.4.0] - 2026-11-27`, or `- Unreleased` for the release being made.
SECTION = re.compile(r"^## \[(\d+)\.(\d+)\.(\d+)\] - (\d{4}-\d\d-\d\d|Unreleased)$", re.MULTILINE)


def _declared() -> str:
    version: str = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    return version


def _sections() -> list[tuple[tuple[int, int, int], str]]:
    text = (ROOT / "CHANGELOG.md").read_text()
    found = [((int(a), int(b), int(c)), when) for a, b, c, when in SECTION.findall(text)]
    # Every release heading has the form above (none slipped past the pattern).
    assert len(found) == len(re.findall(r"^## ", text, re.MULTILINE))
    return found


def test_the_newest_changelog_section_is_the_declared_version() -> None:
    (newest, _), *_ = _sections()
    assert ".".join(map(str, newest)) == _declared()


def test_each_release_raises_the_version_and_only_the_newest_may_be_unreleased() -> None:
    sections = _sections()
    versions = [version for version, _ in sections]
    assert versions == sorted(set(versions), reverse=True)
    assert all(when != "Unreleased" for _, when in sections[1:])
    dates = [when for _, when in sections if when != "Unreleased"]
    assert dates == sorted(dates, reverse=True)


def test_version_flag_says_the_declared_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"library-bot {_declared()}"


def test_build_info_metric_says_the_declared_version() -> None:
    exposed = generate_latest(Metrics().registry).decode()
    assert f'library_bot_build_info{{version="{_declared()}"}} 1.0' in exposed
