"""README's layout table and docs/architecture.md match the package as it is."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "bot"


def _table_paths(markdown: str, heading: str) -> list[str]:
    section = markdown.split(heading, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)`", section, re.MULTILINE)


def _package_parts() -> set[str]:
    """Every subpackage and top-level module of the package, as README names them."""
    parts = {f"bot/{p.name}/" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    parts |= {
        f"bot/{p.name}"
        for p in PACKAGE.glob("*.py")
        if p.name not in {"__init__.py", "__main__.py"}
    }
    return parts


def test_readme_layout_names_every_part_of_the_package_and_nothing_else() -> None:
    listed = _table_paths((ROOT / "README.md").read_text(), "## Layout")
    in_package = {path for path in listed if path.startswith("bot/")}
    assert in_package == _package_parts()
    for path in listed:
        for part in path.split(", "):
            assert (ROOT / part.strip("`")).exists(), path


def test_architecture_names_every_layer() -> None:
    listed = _table_paths((ROOT / "docs" / "architecture.md").read_text(), "## Layers")
    names = {f"bot/{path}" for path in listed}
    assert names == _package_parts()


def test_the_checked_layers_are_the_documented_ones_in_the_same_order() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    layers = next(
        contract["layers"]
        for contract in config["tool"]["importlinter"]["contracts"]
        if contract["type"] == "layers"
    )
    documented = _table_paths((ROOT / "docs" / "architecture.md").read_text(), "## Layers")
    assert layers == ["bot." + path.removesuffix("/").removesuffix(".py") for path in documented]
