"""The locks pin what is installed, with hashes, satisfy pyproject.toml, stay past the known
advisories, and are what the venv, the container, CI and the documented installs use."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "constraints.txt"  # everything, the dev tools included
RUNTIME_LOCK = ROOT / "requirements.txt"  # what a server or the container installs
# The last affected and the first fixed version of the newest advisories we know of
# (docs/deployment.md, "Dependencies").
ADVISORIES = {
    "aiohttp": (Version("3.14.3"), Version("3.14.4")),
    "cryptography": (Version("49.0.0"), Version("50.0.0")),
}
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")


def _locked(path: Path) -> dict[str, tuple[Version, int]]:
    """name -> (version, number of hashes) of a `uv pip compile --generate-hashes` file."""
    pins: dict[str, tuple[Version, int]] = {}
    current: str | None = None
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _PIN.match(line)
        if match:
            current = canonicalize_name(match.group(1))
            pins[current] = (Version(match.group(2)), 0)
            continue
        assert stripped.startswith("--hash=sha256:") and current, f"{path.name}: {line!r}"
        version, hashes = pins[current]
        pins[current] = (version, hashes + 1)
    return pins


def _pins(path: Path = LOCK) -> dict[str, Version]:
    return {name: version for name, (version, _) in _locked(path).items()}


def _requirements(*, dev: bool = True) -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = list(project["dependencies"])
    if dev:
        # Not `bench`: aiogram, the bench's anchor, asks for an older pydantic than the lock's,
        # so `make bench` installs it beside the lock (Makefile, BENCH_STAMP).
        extras = project["optional-dependencies"]
        listed += [item for name, extra in extras.items() if name != "bench" for item in extra]
    return [Requirement(item) for item in listed]


def test_every_pin_carries_hashes() -> None:
    for path in (LOCK, RUNTIME_LOCK):
        for name, (_, hashes) in _locked(path).items():
            assert hashes >= 1, f"{path.name}: {name} has no hash: run `make lock`"


def test_every_requirement_is_pinned_within_its_range() -> None:
    for path, dev in ((LOCK, True), (RUNTIME_LOCK, False)):
        pins = _pins(path)
        for requirement in _requirements(dev=dev):
            name = canonicalize_name(requirement.name)
            assert name in pins, f"{name} is not in {path.name}: run `make lock`"
            assert pins[name] in requirement.specifier, f"{name} {pins[name]}: run `make lock`"
        # The tools that install and build the package are locked too.
        assert "pip" in pins and "setuptools" in pins, path.name


def test_the_runtime_lock_is_the_full_lock_without_the_dev_tools() -> None:
    full, runtime = _pins(LOCK), _pins(RUNTIME_LOCK)
    assert {name: full.get(name) for name in runtime} == runtime
    for tool in ("pytest", "mypy", "ruff", "playwright", "hypothesis", "aiosqlite"):
        assert tool in full and tool not in runtime, tool


def test_unused_packages_are_not_installed() -> None:
    # The rate-limiter extra of python-telegram-bot brought aiolimiter, never imported.
    for path in (LOCK, RUNTIME_LOCK):
        assert "aiolimiter" not in _pins(path)
    package = ROOT / "bot"
    sources = "\n".join(p.read_text() for p in package.rglob("*.py"))
    assert not re.search(r"^\s*(import|from) (aiolimiter|aiosqlite)\b", sources, re.MULTILINE)


def test_floors_are_past_the_known_advisories() -> None:
    pins = _pins()
    ranges = {canonicalize_name(r.name): r.specifier for r in _requirements()}
    for name, (affected, fixed) in ADVISORIES.items():
        assert pins[name] >= fixed
        assert affected not in ranges[name] and fixed in ranges[name], name


def test_the_installed_packages_are_the_pinned_ones() -> None:
    pins = _pins()
    for distribution in distributions():
        name = canonicalize_name(distribution.metadata["Name"])
        if name in pins:
            assert Version(distribution.version) == pins[name], f"{name}: run `make`"


def test_every_install_uses_a_lock_with_hashes() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "LOCK := constraints.txt" in makefile and "RUNTIME_LOCK := requirements.txt" in makefile
    assert "--require-hashes --requirement $(LOCK)" in makefile
    assert "--no-deps --no-build-isolation -e ." in makefile
    assert "$(STAMP): pyproject.toml $(LOCK)" in makefile and "pytest" in makefile
    containerfile = (ROOT / "deploy" / "Containerfile").read_text()
    installs = containerfile.count("pip install")
    assert installs >= 2
    assert containerfile.count("--require-hashes --requirement requirements.txt") == 1
    # The package itself as a release is built: its wheel, by the lock's setuptools, unfetched.
    assert containerfile.count("deploy/build-wheel /opt/library-bot/bin/python /tmp/dist") == 1
    assert containerfile.count("--no-deps /tmp/dist/library_bot-") == installs - 1
    assert (
        "--no-deps --no-build-isolation --no-index" in (ROOT / "deploy" / "build-wheel").read_text()
    )
    # One argument names the base image (a digest is passed with --build-arg, see its header).
    (image,) = re.findall(r"^ARG PYTHON_IMAGE=(\S+)$", containerfile, re.MULTILINE)
    assert re.fullmatch(r"docker\.io/library/python:3\.11-slim(@sha256:[0-9a-f]{64})?", image)
    froms = [line for line in containerfile.splitlines() if line.startswith("FROM ")]
    assert froms and all(line.startswith("FROM ${PYTHON_IMAGE}") for line in froms), froms
    for doc in ("docs/deployment.md", "deploy/library-bot.service"):
        text = (ROOT / doc).read_text()
        assert "--require-hashes --requirement requirements.txt" in text, doc
        assert "deploy/build-wheel /opt/library-bot/bin/python" in text, doc
    assert "make test" in (ROOT / ".ci" / "run").read_text()
