"""The faces (`bot.telegram`, `bot.web`) reach storage only through the actions
(`bot.actions`): import-linter forbids them to import `storage`, and this test that they read
a `.store` anywhere, so the contract is not dodged through `Services.store`."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FACES = (ROOT / "bot" / "telegram", ROOT / "bot" / "web")


def store_reads(source: str) -> list[int]:
    """The lines of `source` that read an attribute named `store` (`services.store`,
    `context.services.store.cards`, `getattr` aside)."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and node.attr == "store"
    )


def test_the_check_sees_a_store_read() -> None:
    assert store_reads("x = context.services.store.cards.of_chat(1)\n") == [1]
    assert store_reads("from bot.actions import cards\nawait cards.of_chat(svc, 1)\n") == []


def test_no_face_reads_the_store() -> None:
    modules = [path for face in FACES for path in sorted(face.rglob("*.py"))]
    assert len(modules) > 20  # the faces are where this test looks
    found = {
        str(path.relative_to(ROOT)): lines
        for path in modules
        if (lines := store_reads(path.read_text()))
    }
    assert found == {}, f"faces reading .store (use an action of bot.actions): {found}"
