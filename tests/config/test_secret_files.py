"""Secrets from files: `<NAME>_FILE` for the bot token, the client secret, the keys and the
webhook secret, as container and Kubernetes secrets are mounted; the file wins over `<NAME>`."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config.settings import (
    SECRET_FILE_VARIABLES,
    SettingsError,
    load_settings,
    new_key,
)
from tests.fixtures.cli import library_bot


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in SECRET_FILE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(f"{name}_FILE", raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env


def test_each_secret_is_read_from_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    keys = [new_key(), new_key()]
    contents = {
        "TELEGRAM_BOT_TOKEN": "123456:file-token\n",
        "CLIENT_SECRET": "from-a-file\n",
        "TOKEN_KEYS": "\n".join(keys) + "\n",  # one a line, as a mounted secret may hold them
        "WEBHOOK_SECRET": "hook-secret",
    }
    for name, content in contents.items():
        path = tmp_path / name.lower()
        path.write_text(content)
        monkeypatch.setenv(f"{name}_FILE", str(path))
    settings = load_settings()
    assert settings.TELEGRAM_BOT_TOKEN is not None and settings.CLIENT_SECRET is not None
    assert settings.WEBHOOK_SECRET is not None
    assert settings.TELEGRAM_BOT_TOKEN.get_secret_value() == "123456:file-token"
    assert settings.CLIENT_SECRET.get_secret_value() == "from-a-file"
    assert [key.get_secret_value() for key in settings.TOKEN_KEYS] == keys
    assert settings.WEBHOOK_SECRET.get_secret_value() == "hook-secret"


def test_the_file_wins_over_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "secret").write_text("from-the-file\n")
    monkeypatch.setenv("CLIENT_SECRET", "from-the-environment")
    monkeypatch.setenv("CLIENT_SECRET_FILE", str(tmp_path / "secret"))
    settings = load_settings()
    assert settings.CLIENT_SECRET is not None
    assert settings.CLIENT_SECRET.get_secret_value() == "from-the-file"


def test_a_file_named_in_dotenv_is_read(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("42:dotenv-file-token")
    (tmp_path / ".env").write_text(f"TELEGRAM_BOT_TOKEN_FILE={tmp_path / 'token'}\n")
    settings = load_settings()
    assert settings.TELEGRAM_BOT_TOKEN is not None
    assert settings.TELEGRAM_BOT_TOKEN.get_secret_value() == "42:dotenv-file-token"


def test_a_missing_file_is_an_error_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOKEN_KEYS_FILE", str(tmp_path / "absent"))
    with pytest.raises(SettingsError, match=r"^TOKEN_KEYS_FILE: cannot read .*absent"):
        load_settings()


def test_a_bad_key_in_the_file_is_one_line_from_the_command(tmp_path: Path) -> None:
    (tmp_path / "keys").write_text("not-a-key\n")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "TOKEN_KEYS_FILE": str(tmp_path / "keys"),
    }
    done = library_bot("rotate-keys", env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "TOKEN_KEYS" in done.stderr, done.stderr
    assert "not-a-key" not in done.stderr
