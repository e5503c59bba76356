"""Logging setup (`text` or `json`), and the one redaction of secrets from log records.

`setup_logging` puts the filter on the one root handler, not on a logger, so it sees every
record that is emitted, whichever library logged it (httpx logs request URLs with the bot
token in them, aiohttp logs callback URLs with `code` and `state`). `install_log_redaction`
puts the same filter on the HTTP libraries' own loggers, for a process that logs through
handlers of its own (tests, an embedding application).

Chat ids are personal data (a private chat's id is the patron's Telegram user id), so the
filter also replaces every argument a log template introduces as `chat %s` by a keyed hash
(`chat #1a2b3c4d5e6f`): the same chat reads the same in every line, across restarts and
processes, yet the id cannot be recovered by trying all ids without the key. The key is
derived from the oldest `TOKEN_KEYS` entry (it outlives a key rotation longest); without one
(a test, the demo) a random key per process is used. tests/config/test_logs.py checks that
every log call in the package names a chat id that way.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import logging
import re
import secrets as secrets_module
import sys
import threading
from collections.abc import Iterable
from typing import Any, Final, Literal, TextIO
from urllib.parse import quote, quote_plus

MASK: Final = "***"
MIN_SECRET_LENGTH: Final = 4  # shorter "secrets" would blank out ordinary words

_BOT_TOKEN: Final = re.compile(r"\d+:([A-Za-z0-9_-]+)")

# (pattern, replacement), applied in order after the registered secret values.
_PATTERNS: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    # Telegram bot tokens, in URLs (/bot<id>:<secret>/) and bare.
    (re.compile(r"(/bot\d+:)[A-Za-z0-9_-]+"), rf"\g<1>{MASK}"),
    (re.compile(r"\b(\d{5,}:)[A-Za-z0-9_-]{20,}"), rf"\g<1>{MASK}"),
    # Query-string and form values.
    (
        re.compile(
            r"(?i)\b((?:access_|refresh_|id_)?token|code|state|client_secret|password|pin)"
            r"(=|%3D)[^&\s\"'<>#,;)\]}]+"
        ),
        rf"\g<1>\g<2>{MASK}",
    ),
    # The same names as JSON or repr'd dict keys.
    (
        re.compile(
            r"(?i)([\"']((?:access_|refresh_|id_)?token|code|state|client_secret|password|pin|cpr)"
            r"[\"']\s*:\s*[\"'])[^\"']*"
        ),
        rf"\g<1>{MASK}",
    ),
    (re.compile(r"(?i)\b(Bearer\s+)[A-Za-z0-9\-._~+/=]+"), rf"\g<1>{MASK}"),
    (re.compile(r"(?i)\b(Basic\s+)[A-Za-z0-9+/]{4,}={0,2}"), rf"\g<1>{MASK}"),
    (re.compile(r"(/getTicket/)[^/\s?#]+/[^/\s?#\"']+"), rf"\g<1>{MASK}/{MASK}"),
    (re.compile(r"(/getTicket/)[^/\s?#\"'*]+"), rf"\g<1>{MASK}"),
    # Danish civil registration numbers (CPR).
    (re.compile(r"\b\d{6}-?\d{4}\b"), "**********"),
)

# A printf placeholder of a log template (`%%` included, so that it can be skipped).
_PLACEHOLDER: Final = re.compile(
    r"%(?:\([^)]*\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?([a-zA-Z%])"
)
# The text before a placeholder that makes its argument a chat id.
_CHAT_BEFORE: Final = re.compile(r"(?i)\bchat\s*$")
_CHAT_KEY_CONTEXT: Final = b"library-bot: chat ids in logs"
_chat_key: bytes = secrets_module.token_bytes(32)


def set_chat_key(material: bytes) -> None:
    """Derive the key of the chat-id hashes from `material` (a `TOKEN_KEYS` key)."""
    global _chat_key
    _chat_key = hmac.new(material, _CHAT_KEY_CONTEXT, hashlib.sha256).digest()


def chat_ref(chat_id: object) -> str:
    """A chat id as the logs show it: `#` and 12 hex digits of a keyed hash."""
    digest = hmac.new(_chat_key, str(chat_id).encode(), hashlib.sha256).hexdigest()
    return f"#{digest[:12]}"


def _is_id(value: object) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and value.lstrip("-").isdigit())


def hash_chat_arguments(record: logging.LogRecord) -> None:
    """Replace the arguments the template introduces as `chat %s` (or `%d`) by `chat_ref`."""
    template = record.msg
    if not isinstance(template, str) or not isinstance(record.args, tuple) or not record.args:
        return
    args = list(record.args)
    pieces: list[str] = []
    done = 0
    index = 0
    for match in _PLACEHOLDER.finditer(template):
        if match.group(1) == "%":
            continue
        if (
            index < len(args)
            and match.group(1) in ("s", "d", "i")
            and _is_id(args[index])
            and _CHAT_BEFORE.search(template, 0, match.start())
        ):
            args[index] = chat_ref(args[index])
            pieces += [template[done : match.start()], "%s"]
            done = match.end()
        index += 1
    if done:
        record.msg = "".join(pieces) + template[done:]
        record.args = tuple(args)


# Attributes every LogRecord has; anything else on a record came in through `extra`.
_RECORD_FIELDS: Final = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {
    "message",
    "asctime",
    "taskName",
}


class RedactingFilter(logging.Filter):
    """Blanks out tokens, codes, secrets and CPR numbers in every record it sees.

    It renders the message, redacts it and stores it back (`msg`, `args = ()`), so every
    formatter after it only ever sees the redacted text; tracebacks and `extra` strings too.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._secrets: tuple[str, ...] = ()
        for secret in secrets:
            self.add_secret(secret)

    def add_secret(self, value: str) -> None:
        """Exact values to blank out (the bot token, the client secret, a patron token)."""
        bot_token = _BOT_TOKEN.fullmatch(value)
        if bot_token:
            # Keep the bot id visible (it is public and tells bots apart); hide the secret part.
            value = bot_token.group(1)
        if not value or len(value) < MIN_SECRET_LENGTH:
            return
        variants = {value, quote(value, safe=""), quote_plus(value)}
        with self._lock:
            known = set(self._secrets) | variants
            # Longest first, so a secret containing another is removed whole.
            self._secrets = tuple(sorted(known, key=len, reverse=True))

    def redact(self, text: str) -> str:
        """`text` with every registered secret and every known secret shape masked."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return redact(text)

    def filter(self, record: logging.LogRecord) -> bool:
        hash_chat_arguments(record)
        try:
            message = record.getMessage()
        except Exception:  # a bad format string must not hide the record
            message = f"{record.msg!s} {record.args!r}"
        record.msg = self.redact(message)
        record.args = ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            # Formatters print exc_text when it is set and render exc_info only when it is not.
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        for name, value in list(record.__dict__.items()):
            if name not in _RECORD_FIELDS and isinstance(value, str):
                setattr(record, name, self.redact(value))
        return True


def redact(text: str) -> str:
    """`text` with every known secret shape masked (no registered values)."""
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


# Loggers that print request URLs. Filters on a logger do not apply to records of its
# children, so httpcore's sub-loggers are listed one by one.
HTTP_LOGGERS: Final = (
    "httpx",
    "httpcore",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "httpcore.socks",
)


def install_log_redaction(names: tuple[str, ...] = HTTP_LOGGERS) -> None:
    """Attach a `RedactingFilter` to the HTTP libraries' loggers; calling it again changes
    nothing. `run` calls it at start-up; tests call it before capturing logs."""
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(existing, RedactingFilter) for existing in logger.filters):
            logger.addFilter(RedactingFilter())


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC), level, logger, message, exc_info, extras."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exc_info"] = record.exc_text
        if record.stack_info:
            entry["stack_info"] = record.stack_info
        for name, value in record.__dict__.items():
            if name in _RECORD_FIELDS or name in entry or name.startswith("_"):
                continue
            try:
                json.dumps(value)
            except (TypeError, ValueError):
                continue
            entry[name] = value
        return json.dumps(entry, ensure_ascii=False)


class _BotHandler(logging.StreamHandler[TextIO]):
    """Marks the handler we installed, so a second setup replaces it."""


TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def setup_logging(
    level: str = "INFO",
    fmt: Literal["text", "json"] = "text",
    *,
    secrets: Iterable[str] = (),
    stream: TextIO | None = None,
    chat_key: bytes | None = None,
) -> RedactingFilter:
    """Install the one root handler (replacing ours from an earlier call); return its filter
    so secrets learnt later (a patron's token) can be added. `chat_key` keys the chat-id
    hashes (a random key per process when None)."""
    level = level.upper()
    if chat_key is not None:
        set_chat_key(chat_key)
    root = logging.getLogger()
    for old in list(root.handlers):
        if isinstance(old, _BotHandler):
            root.removeHandler(old)
            old.close()
    redactor = RedactingFilter(secrets)
    handler = _BotHandler(stream if stream is not None else sys.stderr)
    handler.addFilter(redactor)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    root.addHandler(handler)
    root.setLevel(level)
    # Request lines from the HTTP clients are noise at INFO, and so is Alembic's account of its
    # dialect on every start (storage.migrate logs an actual migration); keep them for DEBUG.
    chatty = logging.DEBUG if level == "DEBUG" else logging.WARNING
    for name in ("httpx", "httpcore", "alembic"):
        logging.getLogger(name).setLevel(chatty)
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
    logging.captureWarnings(True)
    return redactor
