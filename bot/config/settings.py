"""Operator configuration, read from the environment and `.env` (see the operator contract)."""

from __future__ import annotations

import base64
import binascii
import difflib
import io
import logging
import os
import re
import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import time
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dotenv import dotenv_values
from pydantic import (
    AliasChoices,
    AnyHttpUrl,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from bot.config.proxies import Proxies, check_proxy_url
from storage.crypto import KEY_BYTES


class SettingsError(Exception):
    """A configuration problem, phrased as one line that names the variable."""


def encode_key(key: bytes) -> str:
    """A key as `TOKEN_KEYS` takes it: URL-safe base64 without padding (`decode_key` reverses)."""
    return base64.urlsafe_b64encode(key).decode("ascii").rstrip("=")


def new_key() -> str:
    """A fresh random `TOKEN_KEYS` entry (`library-bot generate-key`, the demo's key)."""
    return encode_key(secrets.token_bytes(KEY_BYTES))


def decode_key(text: str) -> bytes:
    """Decode one `TOKEN_KEYS` entry (URL-safe base64 of 32 random bytes)."""
    try:
        raw = base64.urlsafe_b64decode(text.strip() + "=" * (-len(text.strip()) % 4))
    except (binascii.Error, ValueError) as exc:
        raise ValueError(
            "each key must be URL-safe base64 (see `library-bot generate-key`)"
        ) from exc
    if len(raw) != KEY_BYTES:
        raise ValueError(
            f"each key must decode to {KEY_BYTES} bytes (see `library-bot generate-key`)"
        )
    return raw


def split_address(value: str) -> tuple[str, int]:
    """`host:port` (an IPv6 host in brackets, `[::1]:9100`) as a host and a port."""
    host, colon, port = value.strip().rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not colon or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError("must be host:port, like 127.0.0.1:9100 or [::1]:9100")
    return host, int(port)


# The secrets that may also come from a file named by `<NAME>_FILE`, as container and
# Kubernetes secrets arrive (mounted files, not environment variables). DATABASE_URL is one
# beyond the contract's four: it carries the database password.
SECRET_FILE_VARIABLES = (
    "TELEGRAM_BOT_TOKEN",
    "CLIENT_SECRET",
    "TOKEN_KEYS",
    "WEBHOOK_SECRET",
    "DATABASE_URL",
)


class SecretFiles(PydanticBaseSettingsSource):
    """`<NAME>_FILE` from the environment or `.env`: the value is that file's content.

    It comes before the environment among the sources, so `<NAME>_FILE` wins over `<NAME>`:
    the file is the deliberate choice of a deployment, a plain variable more likely a leftover.
    Surrounding white space (the newline `echo` writes) is dropped.
    """

    def __init__(self, settings_cls: type[BaseSettings], dotenv: Mapping[str, str | None]) -> None:
        super().__init__(settings_cls)
        self._pointers = {**dotenv, **os.environ}

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ reads all four at once

    def __call__(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for name in SECRET_FILE_VARIABLES:
            pointer = self._pointers.get(f"{name}_FILE")
            if not pointer:
                continue
            try:
                values[name] = Path(pointer).read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                raise SettingsError(f"{name}_FILE: cannot read {pointer}: {reason}") from None
        return values


def _url(value: str) -> str:
    """A service's or the bot's base address: paths are appended to it, so a query or a
    fragment would end up in the middle of every address made from it."""
    url = AnyHttpUrl(value)
    if url.query is not None or url.fragment is not None:  # a bare "?" or "#" too
        raise ValueError("must be a base address, without ? or #")
    return str(url).rstrip("/")


# What Telegram takes as a webhook's `secret_token`.
WEBHOOK_SECRET_FORM = re.compile(r"[A-Za-z0-9_-]{1,256}")


LogFormat = Literal["text", "json"]


class LogSettings(BaseSettings):
    """The two settings that say how to log, readable on their own: a configuration error
    elsewhere is still told in the configured format."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore", case_sensitive=True)

    LOG_FORMAT: LogFormat = "text"
    LOG_LEVEL: Literal["CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG"] = "INFO"

    @field_validator("LOG_LEVEL", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value


DOTENV = Path(".env")


class _Collected(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def _dotenv_warnings() -> Iterator[list[logging.LogRecord]]:
    """What python-dotenv warns of while reading (a line it cannot parse, which it then
    skips), collected instead of printed."""
    logger = logging.getLogger("dotenv.main")
    collected, propagate = _Collected(), logger.propagate
    logger.addHandler(collected)
    logger.propagate = False
    try:
        yield collected.records
    finally:
        logger.removeHandler(collected)
        logger.propagate = propagate


def check_dotenv(path: Path = DOTENV) -> None:
    """`.env` read strictly: a line python-dotenv would skip with a warning, or a file that is
    not UTF-8, stops the command here, as a malformed value does (a skipped `TOKEN_KEYS=` line
    would otherwise start the bot without what the operator meant it to have)."""
    if not path.is_file():
        return
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SettingsError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    with _dotenv_warnings() as warnings:
        dotenv_values(stream=io.StringIO(text))
    if warnings:
        line = re.search(r"line (\d+)", warnings[0].getMessage())
        raise SettingsError(f"{path}: line {line[1] if line else '?'} is not NAME=value")


def log_settings() -> LogSettings:
    """`LOG_FORMAT` and `LOG_LEVEL`, each at its default when it is itself the mistake (or
    when `.env` cannot be read: `check_dotenv` then says why, in that format)."""
    try:
        with _dotenv_warnings():
            return LogSettings()
    except (UnicodeDecodeError, OSError):
        return LogSettings(_env_file=None)
    except ValidationError as exc:
        defaults = {
            str(error["loc"][0]): LogSettings.model_fields[str(error["loc"][0])].default
            for error in exc.errors()
            if error["loc"]
        }
        return LogSettings(**defaults)


class Settings(LogSettings):
    """Every variable of the operator contract, plus a few tuning knobs of our own."""

    TELEGRAM_BOT_TOKEN: SecretStr | None = None
    TELEGRAM_API_URL: str = "https://api.telegram.org"
    TELEGRAM_LINK_URL: str = "https://t.me"
    # Telegram's test environment (`/bot<token>/test/<method>`, PTB's documented base URL for
    # it): there, and only there, a Mini App may be opened at a plain-http `PUBLIC_URL`. The
    # demo's stand-in is addressed so.
    TELEGRAM_TEST_ENVIRONMENT: bool = False
    OAUTH_URL: str | None = None
    AUTH_URL: str | None = None
    LOGIN_URL: str | None = None
    PLATFORM_URL: str | None = None
    CLIENT_ID: str | None = None
    CLIENT_SECRET: SecretStr | None = None
    PUBLIC_URL: str | None = None
    HOST: str = "0.0.0.0"
    PORT: int = Field(default=8080, ge=0, le=65535)
    DATABASE_URL: str = "sqlite+aiosqlite:///library-bot.db"
    TOKEN_KEYS: Annotated[list[SecretStr], NoDecode] = Field(default_factory=list)
    WEBHOOK_SECRET: SecretStr | None = None
    # `host:port` of a listener of its own for `/metrics`; the public one then has none.
    METRICS_ADDRESS: str | None = None
    REMINDER_DAYS: Annotated[list[int], NoDecode] = Field(default_factory=lambda: [3, 1, 0])
    REMINDER_TIME: time = time(9, 0)
    BOT_TIMEZONE: str = "Europe/Copenhagen"
    # Our own knobs, not in the contract.
    LIBRARY_TIMEOUT: float = Field(default=8.0, gt=0, le=60)
    SWEEP_CONCURRENCY: int = Field(default=32, ge=1, le=1000)
    # Seconds a sweeping process holds a card without renewing it: a dead process's cards are
    # taken over after this, and looked for as often (`jobs.sweep`), so within twice it.
    SWEEP_LEASE: float = Field(default=45.0, ge=1, le=600)
    # The shortest loan period a new loan can have: bounds how long the sweep leaves a card alone.
    POLL_MIN_LOAN_DAYS: int = Field(default=7, ge=1, le=365)
    # Messages per second over all chats, the bot's: processes on one PostgreSQL share it
    # (`runtime.budget`); 0 sends unpaced (a local Bot API server, benchmarks). The default is
    # `bot.telegram.ratelimit.SEND_RATE`'s: Telegram's 30 less room for sends that reach it
    # off their turns.
    TELEGRAM_SEND_RATE: float = Field(default=27.5, ge=0, le=1000)
    # Forward proxies for the Bot API and the library services (see `bot.config.proxies`);
    # the lower
    # case spelling wins, as in curl and urllib.
    HTTPS_PROXY: str | None = Field(
        default=None, validation_alias=AliasChoices("https_proxy", "HTTPS_PROXY")
    )
    HTTP_PROXY: str | None = Field(
        default=None, validation_alias=AliasChoices("http_proxy", "HTTP_PROXY")
    )
    ALL_PROXY: str | None = Field(
        default=None, validation_alias=AliasChoices("all_proxy", "ALL_PROXY")
    )
    NO_PROXY: str = Field(default="", validation_alias=AliasChoices("no_proxy", "NO_PROXY"))

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        dotenv = (
            dotenv_settings.env_vars if isinstance(dotenv_settings, DotEnvSettingsSource) else {}
        )
        return (
            init_settings,
            SecretFiles(settings_cls, dotenv),
            env_settings,
            dotenv_settings,
            file_secret_settings,
        )

    @field_validator(
        "TELEGRAM_API_URL", "OAUTH_URL", "AUTH_URL", "LOGIN_URL", "PLATFORM_URL", "PUBLIC_URL"
    )
    @classmethod
    def _valid_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        return _url(value)

    @field_validator("WEBHOOK_SECRET")
    @classmethod
    def _webhook_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value():
            return None
        if not WEBHOOK_SECRET_FORM.fullmatch(value.get_secret_value()):
            raise ValueError("must be 1-256 characters of A-Z, a-z, 0-9, _ and - (Telegram's form)")
        return value

    @field_validator("METRICS_ADDRESS")
    @classmethod
    def _address(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        split_address(value)
        return value.strip()

    @field_validator("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY")
    @classmethod
    def _proxy_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        return check_proxy_url(value)

    @field_validator("TOKEN_KEYS", mode="before")
    @classmethod
    def _split_keys(cls, value: object) -> object:
        if isinstance(value, str):
            # Commas, or one key a line as a `TOKEN_KEYS_FILE` may hold them.
            keys = [part for part in re.split(r"[,\s]+", value) if part]
            for key in keys:
                decode_key(key)
            return keys
        return value

    @field_validator("REMINDER_DAYS", mode="before")
    @classmethod
    def _split_days(cls, value: object) -> object:
        if isinstance(value, str):
            # Commas or spaces between the numbers; an empty item (`3,,1`, `3,1,`) is a typo.
            parts = re.split(r"\s*,\s*|\s+", value.strip())
            if not all(part.isascii() and part.isdigit() for part in parts):
                raise ValueError("must be whole numbers of days separated by commas, like 3,1,0")
            days = sorted({int(part) for part in parts}, reverse=True)
            if days[0] > 60:
                raise ValueError("days before the due date must be at most 60")
            return days
        return value

    @field_validator("BOT_TIMEZONE")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(
                f"unknown time zone {value!r} (use a name like Europe/Copenhagen)"
            ) from exc
        return value

    @model_validator(mode="after")
    def _default_public_url(self) -> Settings:
        if not self.PUBLIC_URL:
            self.PUBLIC_URL = f"http://127.0.0.1:{self.PORT}"
        return self

    @property
    def timezone(self) -> ZoneInfo:
        return ZoneInfo(self.BOT_TIMEZONE)

    @property
    def proxies(self) -> Proxies:
        """The forward proxies, as read at start-up."""
        return Proxies(
            http=self.HTTP_PROXY, https=self.HTTPS_PROXY, all=self.ALL_PROXY, no_proxy=self.NO_PROXY
        )

    @property
    def redirect_uri(self) -> str:
        return f"{self.PUBLIC_URL}/oauth/callback"

    @property
    def token_keys(self) -> list[bytes]:
        """Decoded encryption keys, newest first."""
        return [decode_key(key.get_secret_value()) for key in self.TOKEN_KEYS]

    def require(self, *names: str, command: str) -> None:
        """Stop with a one-line error when a variable this command needs is missing."""
        for name in names:
            value = getattr(self, name)
            if isinstance(value, SecretStr):
                value = value.get_secret_value().strip()
            if value is None or value == [] or value == "":
                raise SettingsError(f"{name}: required by `library-bot {command}`, but not set")


# Variables a bot process needs to reach the library services.
LIBRARY_VARIABLES = ("OAUTH_URL", "AUTH_URL", "PLATFORM_URL", "CLIENT_ID", "CLIENT_SECRET")


def load_settings(**overrides: object) -> Settings:
    """Read settings, turning pydantic's report into one line naming the variable."""
    env_file = overrides.get("_env_file", DOTENV)
    if isinstance(env_file, str | Path):
        check_dotenv(Path(env_file))
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        error = exc.errors()[0]
        name = ".".join(str(part) for part in error["loc"]) or "settings"
        if name.endswith("_proxy"):  # read in either case; named as the table names it
            name = name.upper()
        message = str(error["msg"]).removeprefix("Value error, ")
        raise SettingsError(f"{name}: {message}") from None


# The standard variables of other tools that the settings also read: no prefix of ours.
BORROWED_VARIABLES = frozenset({"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY"})
# A Kubernetes service's links (`<SERVICE>_SERVICE_HOST`, `<SERVICE>_PORT_8080_TCP_ADDR`, ...):
# a service named `telegram-bot-api` or `library-bot` must not read as a mistyped setting.
_SERVICE_LINK = re.compile(
    r"\w+_(SERVICE_HOST|SERVICE_PORT(_\w+)?|PORT_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)"
)
_SERVICE_PORT = re.compile(r"(tcp|udp|sctp)://")


def known_variables() -> frozenset[str]:
    """Every variable name the settings read, in the spelling they read it."""
    names: set[str] = set()
    for name, field in Settings.model_fields.items():
        names.add(name)
        if isinstance(field.validation_alias, AliasChoices):
            names.update(c for c in field.validation_alias.choices if isinstance(c, str))
    names.update(f"{name}_FILE" for name in SECRET_FILE_VARIABLES)
    return frozenset(names)


def setting_prefixes() -> frozenset[str]:
    """The first word of each of our settings' names (`TELEGRAM_`, `METRICS_`, `LOG_`, ...):
    a variable starting with one is meant for us."""
    return frozenset(
        name.split("_")[0] + "_"
        for name in Settings.model_fields
        if "_" in name and name not in BORROWED_VARIABLES
    )


def one_typo_apart(first: str, second: str) -> bool:
    """True when one letter added, dropped, changed, or two neighbours swapped turn one name
    into the other (`METRICS_ADRESS`, `WEBHOOK_SECERT`)."""
    if first == second or abs(len(first) - len(second)) > 1:
        return False
    same = 0
    while same < min(len(first), len(second)) and first[same] == second[same]:
        same += 1
    if len(first) == len(second):
        changed = first[same + 1 :] == second[same + 1 :]
        swapped = (
            first[same : same + 2] == second[same : same + 2][::-1]
            and first[same + 2 :] == second[same + 2 :]
        )
        return changed or swapped
    longer, shorter = (first, second) if len(first) > len(second) else (second, first)
    return longer[same + 1 :] == shorter[same:]


def unknown_variables(
    environ: Mapping[str, str], dotenv: Mapping[str, str | None] | None = None
) -> Iterator[str]:
    """One warning per variable that looks meant for us but is no setting: it starts with one
    of our prefixes, or it is one typo (or only the case) away from a setting's name. Values
    are never shown (the variable might hold a secret)."""
    known = known_variables()
    by_upper = {name.upper(): name for name in known}
    prefixes = tuple(setting_prefixes())
    for name in sorted(set(dotenv or {}) | set(environ)):
        if name in known or _SERVICE_LINK.fullmatch(name):
            continue
        if name.endswith("_PORT") and _SERVICE_PORT.match(environ.get(name, "")):
            continue
        upper = name.upper()
        near = by_upper.get(upper) or next(
            (by_upper[known_name] for known_name in by_upper if one_typo_apart(upper, known_name)),
            None,
        )
        if near is None and not upper.startswith(prefixes):
            continue
        if near is None:
            close = difflib.get_close_matches(upper, by_upper, n=1, cutoff=0.8)
            near = by_upper[close[0]] if close else None
        where = "" if name in environ else " (in .env)"
        hint = f": did you mean {near}?" if near else " (see Configuration in the README)"
        yield f"{name}{where} is not a setting of library-bot and is ignored{hint}"


def unknown_variables_here() -> list[str]:
    """`unknown_variables` of this process's environment and its `.env` file."""
    check_dotenv()
    return list(unknown_variables(os.environ, DotEnvSettingsSource(Settings).env_vars))
