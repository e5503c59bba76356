"""The bot's processes run on uvloop (bot/runtime/loop.py), the tests on the same loop, and
where uvloop is missing (Windows has no build of it) the commands run on asyncio's own."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import uvloop

from bot.runtime import loop
from tests.fixtures.cli import python

ROOT = Path(__file__).resolve().parents[2]


async def running_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


def test_the_bot_runs_on_uvloop() -> None:
    assert isinstance(loop.run(running_loop()), uvloop.Loop)


async def test_the_tests_run_on_the_bot_s_loop() -> None:
    assert isinstance(asyncio.get_running_loop(), uvloop.Loop)


def test_every_command_starts_its_loop_through_the_runtime() -> None:
    # `library-bot run`, `remind --once`, `migrate`, `rotate-keys`, `demo` and `sandbox`.
    modules = sorted([*(ROOT / "bot").rglob("*.py"), *(ROOT / "sandbox").rglob("*.py")])
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in modules
        if path != ROOT / "bot" / "runtime" / "loop.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute)
        and node.attr in ("run", "Runner", "new_event_loop")
        and isinstance(node.value, ast.Name)
        and node.value.id == "asyncio"
    ]
    assert found == [], f"start the loop with bot.runtime.loop.run: {found}"


def test_without_uvloop_a_command_runs_on_asyncio_s_loop(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "sys.modules['uvloop'] = None  # as on Windows: not installed\n"
        "from bot.cli import main\n"
        "from bot.runtime import loop\n"
        "code = main(['migrate'])\n"
        "print(code, loop.LOOP_FACTORY)\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}",
    }
    done = python("-c", probe, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "database schema at revision" in done.stdout
    assert done.stdout.splitlines()[-1] == "0 None"
