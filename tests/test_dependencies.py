"""constraints.txt pins what is installed, satisfies pyproject.toml, stays past the known
advisories, and is what the venv, the container and CI install from."""

from __future__ import annotations

import tomllib
from importlib.metadata import distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
# The last affected and the first fixed version of the newest advisories we know of
# (docs/deployment.md, "Dependencies").
ADVISORIES = {
    "aiohttp": (Version("3.14.3"), Version("3.14.4")),
    "cryptography": (Version("49.0.0"), Version("50.0.0")),
}


def _pins() -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, version = line.partition("==")
        assert sep, f"not an exact pin: {line!r}"
        pins[canonicalize_name(name)] = Version(version)
    return pins


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = project["dependencies"] + [
        item for extra in project["optional-dependencies"].values() for item in extra
    ]
    return [Requirement(item) for item in listed]


def test_every_requirement_is_pinned_within_its_range() -> None:
    pins = _pins()
    for requirement in _requirements():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} is not in constraints.txt: run `make lock`"
        assert pins[name] in requirement.specifier, f"{name} {pins[name]}: run `make lock`"


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


def test_venv_container_and_ci_install_from_the_constraints() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "--constraint $(LOCK)" in makefile and "LOCK := constraints.txt" in makefile
    assert "pytest" in makefile and "$(STAMP): pyproject.toml $(LOCK)" in makefile
    containerfile = (ROOT / "deploy" / "Containerfile").read_text()
    assert "COPY pyproject.toml README.md constraints.txt" in containerfile
    installs = containerfile.count("pip install")
    assert installs >= 2 and containerfile.count("--constraint constraints.txt") == installs
    assert "make test" in (ROOT / ".ci" / "run").read_text()
