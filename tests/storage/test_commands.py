"""`library-bot migrate` and `library-bot rotate-keys`, as an operator runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from storage.migrate import database_revision, head_revision
from storage.store import Store
from tests.fixtures.database import key_text, new_key


def _library_bot(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("library-bot")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "bot"]
    clean = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "TOKEN_KEYS"}}
    return subprocess.run(  # noqa: S603
        [*command, *args],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_migrate_creates_the_schema(tmp_path: Path) -> None:
    result = _library_bot(["migrate"], tmp_path, DATABASE_URL="sqlite:///bot.db")
    assert result.returncode == 0, result.stderr
    head = head_revision()
    assert f"revision {head}" in result.stdout
    assert await database_revision(f"sqlite:///{tmp_path / 'bot.db'}") == head
    again = _library_bot(["migrate"], tmp_path, DATABASE_URL="sqlite:///bot.db")
    assert again.returncode == 0 and f"revision {head}" in again.stdout


async def test_rotate_keys_reencrypts(tmp_path: Path) -> None:
    url = "sqlite:///bot.db"
    assert _library_bot(["migrate"], tmp_path, DATABASE_URL=url).returncode == 0
    old, new = new_key(), new_key()
    store = await Store.open(f"sqlite:///{tmp_path / 'bot.db'}", [old])
    code = await store.create_pending_link(5, "secret-token", None, {})
    await store.complete_link(5, code)
    await store.close()
    keys = f"{key_text(new)},{key_text(old)}"
    result = _library_bot(["rotate-keys"], tmp_path, DATABASE_URL=url, TOKEN_KEYS=keys)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "re-encrypted 1 token under the newest key"
    result = _library_bot(["rotate-keys"], tmp_path, DATABASE_URL=url, TOKEN_KEYS=keys)
    assert result.stdout.strip() == "re-encrypted 0 tokens under the newest key"
    store = await Store.open(f"sqlite:///{tmp_path / 'bot.db'}", [new])
    card = await store.cards.get(5)
    await store.close()
    assert card is not None and card.token == "secret-token"


@pytest.mark.parametrize("keys", [None, ""])
def test_rotate_keys_without_keys_is_one_line_exit_2(tmp_path: Path, keys: str | None) -> None:
    env = {"DATABASE_URL": "sqlite:///bot.db"}
    if keys is not None:
        env["TOKEN_KEYS"] = keys
    result = _library_bot(["rotate-keys"], tmp_path, **env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "TOKEN_KEYS" in lines[0]
    assert result.stdout == ""


async def test_rotate_keys_that_cannot_open_a_token_is_not_done(tmp_path: Path) -> None:
    """The key a token was sealed under is no longer in TOKEN_KEYS: exit 1 and one line
    saying so, so a script that removes the old key after a success keeps it."""
    url = "sqlite:///bot.db"
    assert _library_bot(["migrate"], tmp_path, DATABASE_URL=url).returncode == 0
    gone, kept, new = new_key(), new_key(), new_key()
    for key, chat_id in ((gone, 5), (kept, 6)):
        store = await Store.open(f"sqlite:///{tmp_path / 'bot.db'}", [key])
        await store.complete_link(chat_id, await store.create_pending_link(chat_id, "t", None, {}))
        await store.close()
    keys = f"{key_text(new)},{key_text(kept)}"
    result = _library_bot(["rotate-keys"], tmp_path, DATABASE_URL=url, TOKEN_KEYS=keys)
    assert result.returncode == 1, result.stderr
    assert result.stdout.strip() == "re-encrypted 1 token under the newest key"
    [line] = [line for line in result.stderr.splitlines() if " CRITICAL " in line]
    assert "1 token left as it was: sealed under a key TOKEN_KEYS no longer holds" in line
