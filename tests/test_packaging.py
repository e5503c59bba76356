"""A plain install works: the sdist built from the checkout, a wheel built from that sdist
(`deploy/build-wheel`, as a release is), installed into a fresh venv with no make step, runs
`library-bot` and speaks Danish and English. A stale build/ in the checkout stays out of it.

Offline: the build uses this venv's setuptools (`--no-build-isolation`), the fresh venv gets
only the wheel (`--no-deps`) and borrows the dependencies from this venv's site-packages
through a `.pth` line (a path line, so the editable install's finder there is not loaded).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(  # noqa: S603
        [str(arg) for arg in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin directory of a fresh venv holding the package built from an sdist."""
    work = tmp_path_factory.mktemp("packaging")
    dist = work / "dist"
    # As a release is built (`make dist`, docs/deployment.md): the sdist, then the wheel from it.
    _run("sh", ROOT / "deploy" / "build-wheel", sys.executable, dist, cwd=work)
    (sdist,) = dist.glob("library_bot-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    assert any(name.endswith("texts/locale/da/LC_MESSAGES/messages.po") for name in names)
    assert any(name.endswith("/LICENSE") for name in names)
    (wheel,) = dist.glob("library_bot-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        members = archive.namelist()
    assert "bot/texts/locale/da/LC_MESSAGES/messages.po" in members
    assert "bot/py.typed" in members
    venv = work / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=work)
    python = venv / "bin" / "python"
    _run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        python,
        "install",
        "--quiet",
        "--no-deps",
        "--no-index",
        wheel,
        cwd=work,
    )
    fresh_site = Path(
        _run(
            python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=work
        ).strip()
    )
    (fresh_site / "borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # Test-only packages this venv has but an install does not get: found first, and absent.
    for module in ("aiosqlite", "pytest"):
        (fresh_site / f"{module}.py").write_text(
            f"raise ImportError('{module} is not installed')\n"
        )
    return venv / "bin"


def _env(tmp: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(tmp), "LANG": "C.UTF-8"}


def test_the_installed_package_is_not_the_checkout(installed: Path, tmp_path: Path) -> None:
    where = _run(
        installed / "python",
        "-c",
        "import bot; print(bot.__file__)",
        cwd=tmp_path,
        env=_env(tmp_path),
    )
    assert where.startswith(str(installed.parent)), where


def test_help_and_version_of_the_installed_script(installed: Path, tmp_path: Path) -> None:
    out = _run(installed / "library-bot", "--help", cwd=tmp_path, env=_env(tmp_path))
    assert "sandbox" in out and "generate-key" in out
    version = _run(installed / "library-bot", "--version", cwd=tmp_path, env=_env(tmp_path))
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert version.strip() == f"library-bot {declared}"


def test_the_installed_package_speaks_danish_and_english(installed: Path, tmp_path: Path) -> None:
    out = _run(
        installed / "python",
        "-c",
        "from bot.texts import t\nfor lang in ('da', 'en'): print(t(lang, 'common.yes'))",
        cwd=tmp_path,
        env=_env(tmp_path),
    )
    assert out.splitlines() == ["Ja", "Yes"]


def test_the_installed_package_migrates_sqlite_without_aiosqlite(
    installed: Path, tmp_path: Path
) -> None:
    env = {**_env(tmp_path), "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"}
    out = _run(installed / "library-bot", "migrate", cwd=tmp_path, env=env)
    assert "at revision" in out
    requires = _run(
        installed / "python",
        "-c",
        "from importlib.metadata import requires\n"
        "print([r for r in requires('library-bot') or [] if 'extra ==' not in r])",
        cwd=tmp_path,
        env=env,
    )
    assert "aiosqlite" not in requires and "aiolimiter" not in requires
    assert "python-telegram-bot[job-queue]" in requires


def test_the_installed_sandbox_starts(installed: Path, tmp_path: Path) -> None:
    sandbox = subprocess.Popen(  # noqa: S603
        [str(installed / "library-bot"), "sandbox"],
        cwd=tmp_path,
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert sandbox.stdout is not None
        lines: list[str] = []
        for line in sandbox.stdout:
            lines.append(line.strip())
            if line.startswith("patron "):
                break
        assert any(line.startswith("CLIENT_SECRET=") for line in lines), lines
        assert lines[-1].startswith("patron "), lines
    finally:
        os.kill(sandbox.pid, signal.SIGTERM)
        _, err = sandbox.communicate(timeout=60)
    assert sandbox.returncode == 0, err


def test_a_stale_build_folder_stays_out_of_the_wheel(tmp_path: Path) -> None:
    """A checkout upgraded in place keeps its build/ from the version before: the old
    `library_bot/` package (291 files when the layout changed) and modules since removed. The
    release's wheel must hold the package as it is now, and nothing of those."""
    tree = tmp_path / "checkout"
    tree.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, tree / name)
    for name in ("bot", "storage", "sandbox", "deploy"):
        shutil.copytree(
            ROOT / name, tree / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    stale = tree / "build" / "lib"
    for path in ("library_bot/__init__.py", "library_bot/bot.py", "bot/gone.py"):
        (stale / path).parent.mkdir(parents=True, exist_ok=True)
        (stale / path).write_text("STALE = True\n")
    (tree / "library_bot.egg-info").mkdir()
    (tree / "library_bot.egg-info" / "SOURCES.txt").write_text("library_bot/__init__.py\n")
    dist = tmp_path / "dist"
    _run("sh", tree / "deploy" / "build-wheel", sys.executable, dist, cwd=tmp_path)
    (wheel,) = dist.glob("library_bot-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        members = {name for name in archive.namelist() if ".dist-info/" not in name}
    shipped = {
        path.relative_to(tree).as_posix()
        for package in ("bot", "storage", "sandbox")
        for path in (tree / package).rglob("*")
        if path.is_file()
    }
    assert not any(name.startswith("library_bot/") or "gone" in name for name in members)
    assert {name.split("/")[0] for name in members} == {"bot", "storage", "sandbox"}
    # Every module of the package is in it, and nothing that is not in the tree.
    assert {name for name in shipped if name.endswith(".py")} <= members <= shipped
