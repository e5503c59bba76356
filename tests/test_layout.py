"""README's layout table and docs/architecture.md match the package as it is: every layer, and
every module of every layer (docs/architecture.md, "Modules"); and the tests share helpers
through tests/fixtures (or a conftest), never by importing another test module."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "bot"
# The package roots whose every module docs/architecture.md names (the one place to change
# when the packages move).
PACKAGE_ROOTS = (PACKAGE, ROOT / "storage", ROOT / "sandbox")
# Directories named as a whole: Alembic's scripts.
WHOLE = frozenset({"migrations"})
_BACKTICKED = re.compile(r"`([^`]+)`")


def _table_paths(markdown: str, heading: str) -> list[str]:
    section = markdown.split(heading, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)`", section, re.MULTILINE)


def _package_parts() -> set[str]:
    """Every subpackage and top-level module of the bot, and the other two packages, as README
    names them."""
    parts = {f"bot/{p.name}/" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    parts |= {
        f"bot/{p.name}"
        for p in PACKAGE.glob("*.py")
        if p.name not in {"__init__.py", "__main__.py"}
    }
    return parts | {"storage/", "sandbox/"}


def test_readme_layout_names_every_part_of_the_package_and_nothing_else() -> None:
    listed = _table_paths((ROOT / "README.md").read_text(), "## Layout")
    in_package = {path for path in listed if path.split("/")[0] in {"bot", "storage", "sandbox"}}
    assert in_package == _package_parts()
    for path in listed:
        for part in path.split(", "):
            assert (ROOT / part.strip("`")).exists(), path


def test_architecture_names_every_layer() -> None:
    listed = _table_paths((ROOT / "docs" / "architecture.md").read_text(), "## Layers")
    assert set(listed) == _package_parts()


def test_the_checked_layers_are_the_documented_ones_in_the_same_order() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    layers = next(
        contract["layers"]
        for contract in config["tool"]["importlinter"]["contracts"]
        if contract["type"] == "layers"
    )
    # Independent siblings ("bot.jobs | bot.telegram") are documented as neighbouring rows.
    checked = [module.strip() for layer in layers for module in layer.split("|")]
    documented = _table_paths((ROOT / "docs" / "architecture.md").read_text(), "## Layers")
    assert checked == [
        path.removesuffix("/").removesuffix(".py").replace("/", ".") for path in documented
    ]


def _modules() -> list[tuple[str, str]]:
    """Every module and subpackage under the roots as (its package's path, its own name):
    ("bot/telegram/handlers/", "borrower"), ("bot/telegram/", "handlers/"), ("storage/", "store"),
    ("bot/", "cli")."""
    found: list[tuple[str, str]] = []
    for root in PACKAGE_ROOTS:
        for path in sorted(root.rglob("*.py")):
            parts = (root.name, *path.relative_to(root).parts)
            if path.name in ("__init__.py", "__main__.py") and len(parts) == 2:
                continue
            if any(part in WHOLE for part in parts[:-1]):
                inner = parts.index(next(p for p in parts if p in WHOLE))
                found.append(("/".join(parts[:inner]) + "/", parts[inner] + "/"))
                continue
            if path.name == "__init__.py":
                found.append(("/".join(parts[:-2]) + "/", parts[-2] + "/"))
            else:
                found.append(("/".join(parts[:-1]) + "/", path.stem))
    return sorted(set(found))


def _named_by_owner(markdown: str) -> dict[str, set[str]]:
    """Each table row's or list item's backticked names (a list item with its wrapped lines),
    keyed by its first one, its subject: `telegram/`, `telegram/handlers/`."""
    items: list[str] = []
    for line in markdown.splitlines():
        if line.startswith("  ") and items and items[-1].startswith("- "):
            items[-1] += " " + line.strip()
        else:
            items.append(line)
    named: dict[str, set[str]] = {}
    for item in items:
        names = _BACKTICKED.findall(item)
        if names:
            named.setdefault(names[0], set()).update(names[1:])
    return named


def test_architecture_names_every_module_of_every_layer() -> None:
    """A module counts as named when a line about its package (the line's first backticked
    name, e.g. `bot/telegram/handlers/`) names it in backticks, or anywhere by its path."""
    markdown = (ROOT / "docs" / "architecture.md").read_text()
    by_owner = _named_by_owner(markdown)
    everywhere = set(_BACKTICKED.findall(markdown))
    missing = []
    for parent, name in _modules():
        path = parent + name
        dotted = path.strip("/").replace("/", ".")
        listed = (
            name in by_owner.get(parent, set())
            or path in everywhere
            or f"{path}.py" in everywhere
            or dotted in everywhere
        )
        if not listed:
            missing.append(path)
    assert not missing, f"docs/architecture.md does not name: {missing}"


def _imported_modules(path: Path) -> set[str]:
    """Every module `path` imports, dotted (`from a.b import c` gives a.b and a.b.c)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            package = path.relative_to(ROOT).parent.parts
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join((*base, *([node.module] if node.module else [])))
            found.add(module)
            found |= {f"{module}.{alias.name}" for alias in node.names}
    return found


def test_no_test_module_imports_another() -> None:
    """A helper two test modules share lives in tests/fixtures or a conftest (issue 23): importing
    it from a test module runs that module's tests' imports and hides where the helper is."""
    tests = ROOT / "tests"
    offenders = []
    for path in sorted(tests.rglob("*.py")):
        for module in sorted(_imported_modules(path)):
            parts = module.split(".")
            if parts[0] == "tests" and any(part.startswith("test_") for part in parts[1:]):
                offenders.append(f"{path.relative_to(ROOT)} imports {module}")
    assert not offenders, "\n".join(offenders)
