"""compose.yaml sets only variables the settings read, takes every secret from a mounted file,
and its bot environment (with the files in place) is one `library-bot run` accepts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.cli import BOT_VARIABLES
from bot.config.settings import SECRET_FILE_VARIABLES, Settings, load_settings, new_key

ROOT = Path(__file__).resolve().parent.parent
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text())
BOT_SERVICES = [
    name for name, service in COMPOSE["services"].items() if service.get("image") == "library-bot"
]


def _read_by_settings() -> set[str]:
    names: set[str] = set()
    for name, field in Settings.model_fields.items():
        names.add(name)
        alias = field.validation_alias
        if alias is not None:
            names.update(str(choice) for choice in getattr(alias, "choices", [alias]))
    return names | {f"{name}_FILE" for name in SECRET_FILE_VARIABLES}


def _secret_mounts(service: dict[str, Any]) -> dict[str, str]:
    return {f"/run/secrets/{name}": name for name in service.get("secrets", [])}


def test_the_bot_services_are_there() -> None:
    assert BOT_SERVICES == ["migrate", "bot"]
    assert COMPOSE["services"]["db"]["image"].endswith("postgres:16")


@pytest.mark.parametrize("name", BOT_SERVICES)
def test_every_variable_set_is_one_the_settings_read(name: str) -> None:
    environment = COMPOSE["services"][name]["environment"]
    unknown = set(environment) - _read_by_settings()
    assert unknown == set(), f"{name} sets variables nothing reads: {sorted(unknown)}"
    # Secrets only through files, each file one of the service's mounted secrets.
    assert not set(environment) & set(SECRET_FILE_VARIABLES), name
    mounts = _secret_mounts(COMPOSE["services"][name])
    for variable, value in environment.items():
        if variable.endswith("_FILE"):
            assert value in mounts, f"{name}: {variable} names {value}, which is not mounted"
            assert mounts[value] in COMPOSE["secrets"], value


def test_volume_health_checks_and_order() -> None:
    services = COMPOSE["services"]
    assert "db-data" in COMPOSE["volumes"]
    assert "db-data:/var/lib/postgresql/data" in services["db"]["volumes"]
    assert "pg_isready" in str(services["db"]["healthcheck"]["test"])
    assert "/readyz" in str(services["bot"]["healthcheck"]["test"])
    assert services["migrate"]["command"] == ["migrate"]
    assert services["bot"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert services["migrate"]["depends_on"]["db"]["condition"] == "service_healthy"


def _interpolate(value: str, dotenv: dict[str, str]) -> str:
    """Compose's `${NAME:?message}` and `${NAME:-default}`, from the `.env` beside it."""

    def one(match: re.Match[str]) -> str:
        name, op, rest = match.group(1), match.group(2), match.group(3)
        if dotenv.get(name):
            return dotenv[name]
        assert op == ":-", f"{name} is required by compose.yaml: {rest}"
        return rest

    return re.sub(r"\$\{(\w+)(:[-?])([^}]*)\}", one, str(value))


def test_the_bot_environment_is_one_run_accepts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = COMPOSE["services"]["bot"]
    secrets = {
        "telegram_bot_token": "123456:compose-token",
        "client_secret": "compose-client-secret",
        "token_keys": new_key(),
        "database_url": "postgresql://library_bot:pw@db:5432/library_bot",
    }
    for name, content in secrets.items():
        (tmp_path / name).write_text(content + "\n")
    dotenv = {
        "OAUTH_URL": "https://login.example.dk",
        "AUTH_URL": "https://auth.example.dk",
        "PLATFORM_URL": "https://platform.example.dk",
        "CLIENT_ID": "client",
        "PUBLIC_URL": "https://library-bot.example.dk",
    }
    for variable in list(_read_by_settings()):
        monkeypatch.delenv(variable, raising=False)
    for variable, value in service["environment"].items():
        text = _interpolate(value, dotenv)
        if variable.endswith("_FILE"):
            text = str(tmp_path / text.removeprefix("/run/secrets/"))
        monkeypatch.setenv(variable, text)
    monkeypatch.chdir(tmp_path)
    settings = load_settings()
    settings.require(*BOT_VARIABLES, command="run")
    assert secrets["database_url"] == settings.DATABASE_URL
    assert settings.PUBLIC_URL == "https://library-bot.example.dk"
    assert settings.LOGIN_URL is None and settings.HTTPS_PROXY is None
    assert settings.LOG_FORMAT == "json"
