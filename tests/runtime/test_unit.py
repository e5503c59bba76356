"""The systemd unit (deploy/library-bot.service): hardened to 2.5 or better by
`systemd-analyze security`, its paths those of the deployment guide, and its sandbox one the bot
starts and serves in.

systemd is not the init of a test machine, so the unit itself cannot be started here. What can
stop the bot under it is checked instead, on a real `library-bot run` traced by strace: every
system call it makes is one the unit's `SystemCallFilter=` allows (the groups as this
machine's `systemd-analyze syscall-filter` lists them), every socket of a family its
`RestrictAddressFamilies=` allows, and every file it writes is in the unit's `ReadWritePaths=`
(its working directory) or its private /tmp.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from tests.fixtures.patrons import KAREN
from tests.runtime.conftest import bot_process, connected_database, process_environment

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "deploy" / "library-bot.service"
GUIDE = ROOT / "docs" / "deployment.md"
# Where the guide puts the source (section 2A); the unit's Documentation= points into it.
SOURCE = "/usr/local/src/library-bot/"
ANALYZE = shutil.which("systemd-analyze")
STRACE = shutil.which("strace")
CHAT = 7701


def _unit() -> configparser.SectionProxy:
    # strict=False: a unit may repeat a key (SystemCallFilter=); the last one is kept here.
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(UNIT.read_text())
    return parser["Service"]


def _unit_values(key: str) -> list[str]:
    """Every value of `key=` in the unit, repeated keys included, in order."""
    return re.findall(rf"^{key}=(.*)$", UNIT.read_text(), re.MULTILINE)


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")
def test_the_unit_scores_2_5_or_better() -> None:
    assert ANALYZE is not None
    done = subprocess.run(  # noqa: S603
        [ANALYZE, "security", "--offline=true", str(UNIT)],
        capture_output=True,
        text=True,
        check=False,
    )
    found = re.search(r"Overall exposure level for \S+: (\d+\.\d)", done.stdout)
    assert found, done.stdout + done.stderr
    assert float(found.group(1)) <= 2.5, done.stdout


def test_the_unit_s_paths_are_the_guide_s() -> None:
    service = _unit()
    guide = GUIDE.read_text()
    writable = service["ReadWritePaths"].split()
    assert service["WorkingDirectory"] in writable
    assert service["ProtectSystem"] == "strict"
    # The user the guide makes, with the working directory as its home.
    assert (
        f"useradd --system --home-dir {service['WorkingDirectory']} --create-home "
        f"{service['User']}" in guide
    )
    assert f"{service['EnvironmentFile']}\n" in guide or f"{service['EnvironmentFile']} " in guide
    # The command the guide's venv installs.
    assert service["ExecStart"] == "/opt/library-bot/bin/library-bot run"
    assert "python3 -m venv /opt/library-bot" in guide
    # Every SQLite file the guide and the example configuration name is writable by the unit.
    example = (ROOT / "deploy" / "library-bot.env.example").read_text()
    sqlite = re.findall(r"sqlite(?:\+aiosqlite)?:///(/[^\s`'\"]+)", guide + example)
    assert sqlite
    for path in sqlite:
        assert any(Path(path).is_relative_to(place) for place in writable), path


def test_the_unit_s_documentation_exists() -> None:
    (documentation,) = _unit_values(r"Documentation")
    assert documentation.startswith(f"file://{SOURCE}")
    assert (ROOT / documentation.removeprefix(f"file://{SOURCE}")).is_file()
    assert f"with the source in `{SOURCE.rstrip('/')}`" in GUIDE.read_text()


def _groups() -> dict[str, set[str]]:
    """`systemd-analyze syscall-filter`'s groups: their members, groups and calls alike."""
    assert ANALYZE is not None
    listing = subprocess.run(  # noqa: S603
        [ANALYZE, "syscall-filter"], capture_output=True, text=True, check=True
    ).stdout
    groups: dict[str, set[str]] = {}
    current: set[str] = set()
    for line in listing.splitlines():
        if line.startswith("@"):
            current = groups.setdefault(line.strip(), set())
        elif (entry := line.strip()) and not entry.startswith("#"):
            current.add(entry)
    return groups


def _calls(name: str, groups: dict[str, set[str]]) -> Iterator[str]:
    for member in groups.get(name, {name}):
        if member.startswith("@"):
            yield from _calls(member, groups)
        else:
            yield member


def _allowed() -> set[str]:
    """The calls the unit's SystemCallFilter= lines let through: the allow list, less what a
    later `~` line denies."""
    groups = _groups()
    allowed: set[str] = set()
    for value in _unit_values("SystemCallFilter"):
        deny = value.startswith("~")
        names = {call for name in value.removeprefix("~").split() for call in _calls(name, groups)}
        allowed = allowed - names if deny else allowed | names
    return allowed


# `1234  openat(AT_FDCWD, "/path", O_RDWR|O_CREAT|O_CLOEXEC, 0644) = 7`, or the same call
# `<... openat resumed>` when another thread's line came between.
_CALL = re.compile(r"^\d+\s+(?:<\.\.\. )?([a-z0-9_]+)(?:\(| resumed>)")
_WRITE_OPEN = re.compile(r'open(?:at)?\((?:AT_FDCWD|\d+), "([^"]+)", ([A-Z_|]+)')
_MADE = re.compile(r'(?:mkdir(?:at)?|rename(?:at2?)?|unlink(?:at)?)\((?:AT_FDCWD, )?"([^"]+)"')


def _written(line: str) -> str | None:
    """The path a traced call writes, if it is one that writes and it succeeded."""
    if line.rstrip().endswith(")") or " = -1 " in line:
        return None
    if (opened := _WRITE_OPEN.search(line)) and re.search(r"O_WRONLY|O_RDWR|O_CREAT", line):
        return opened.group(1)
    if made := _MADE.search(line):
        return made.group(1)
    return None


@pytest.mark.skipif(
    ANALYZE is None or STRACE is None, reason="systemd-analyze or strace is not installed"
)
async def test_the_bot_starts_and_serves_within_the_unit_s_sandbox(
    library_sandbox: Any, telegram: Any, tmp_path: Path
) -> None:
    assert STRACE is not None
    home = tmp_path / "var-lib-library-bot"  # WorkingDirectory= and ReadWritePaths=
    home.mkdir()
    url = f"sqlite:///{home / 'library-bot.db'}"
    key = await connected_database(url, library_sandbox, telegram, {CHAT: KAREN})
    trace = tmp_path / "trace"
    # The unit's process: its umask, no bytecode written into the (read-only) venv.
    env = {
        **process_environment(library_sandbox, telegram, url, key),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    wrapper = (STRACE, "-f", "-qq", "-s", "256", "-o", str(trace))
    async with bot_process(
        env, home, wrapper=wrapper, preexec_fn=lambda: os.umask(0o077), ready_within=120
    ) as running:
        async with httpx.AsyncClient(timeout=30) as http:
            assert (await http.get(f"{running.web_url}/livez")).status_code == 200
            assert (await http.get(f"{running.web_url}/readyz")).status_code == 200
        await telegram.send_text(CHAT, "/loans")
        await telegram.wait_for(CHAT, "Kongens fald", timeout=60)
        # SIGTERM to the bot itself, under the tracer, as systemd's stop sends it.
        (bot,) = psutil.Process(running.process.pid).children()
        bot.send_signal(signal.SIGTERM)
        assert await running.process.wait() == 0, "".join(running.lines)

    lines = trace.read_text().splitlines()
    made = {match.group(1) for line in lines if (match := _CALL.match(line))}
    # The trace saw the bot at work: files opened, its loop waiting (uvloop's libuv calls
    # epoll_pwait, asyncio's loop epoll_wait) and connections made and taken.
    assert {"openat", "connect", "accept4"} <= made
    assert made & {"epoll_pwait", "epoll_pwait2", "epoll_wait"}
    # What SystemCallFilter= would refuse with EPERM (SystemCallErrorNumber=). Run as root (as
    # tests here are), SQLite gives each new -wal/-shm file its database's owner (fchown, in
    # @privileged); it does so only as root, which the unit's User= never is.
    as_root = {"fchown"} if os.geteuid() == 0 else set()
    assert made - _allowed() - as_root == set()
    # What RestrictAddressFamilies= would refuse (EAFNOSUPPORT).
    families = set(re.findall(r"\bsocket\((AF_[A-Z0-9]+)", "\n".join(lines)))
    assert "AF_INET" in families
    assert families <= set(_unit()["RestrictAddressFamilies"].split())
    written = {path for line in lines if (path := _written(line)) is not None}
    outside = {
        path
        for path in written
        if not Path(path).is_relative_to(home)
        and not path.startswith(("/tmp/", "/var/tmp/", "/dev/"))  # PrivateTmp=, PrivateDevices=
    }
    assert outside == set()
    assert any(Path(path).is_relative_to(home) for path in written)  # the trace saw writes
