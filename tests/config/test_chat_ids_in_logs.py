"""Chat ids are personal data: the logs carry a keyed hash of them, the same for one chat in
every line, process and restart under the same TOKEN_KEYS, and never the id itself."""

from __future__ import annotations

import ast
import io
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import bot
from bot.config import logs
from bot.config.logs import chat_ref, setup_logging
from bot.config.settings import decode_key, new_key

PACKAGE = Path(bot.__file__).parent
CHAT = 7301234567
OTHER = -1001234567890
LOG_METHODS = {"debug", "info", "warning", "error", "exception", "critical"}


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level, key = list(root.handlers), root.level, logs._chat_key
    yield
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)
    logs._chat_key = key


def _emit(key: bytes, fmt: str) -> str:
    stream = io.StringIO()
    setup_logging("INFO", fmt, stream=stream, chat_key=key)  # type: ignore[arg-type]
    log = logging.getLogger("bot.jobs.sweep")
    log.info("reminders: chat %s blocked the bot; marked inactive", CHAT)
    log.warning("reminders: sending to chat %s failed: %s", OTHER, "TimedOut")
    log.info("order placed for chat %d", CHAT)
    log.info("sweep done: %d chats, %d%% sent", 3, 100)
    return stream.getvalue()


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_chat_ids_are_hashed_under_the_token_key(fmt: str, restore_logging: None) -> None:
    key = decode_key(new_key())
    out = _emit(key, fmt)
    assert str(CHAT) not in out and str(OTHER) not in out
    if fmt == "json":
        lines = [json.loads(line)["message"] for line in out.splitlines()]
    else:
        lines = [line.split(": ", 1)[1] for line in out.splitlines()]
    ref = re.search(r"chat (#[0-9a-f]{12}) blocked", lines[0])
    assert ref is not None
    assert lines[2] == f"order placed for chat {ref.group(1)}"  # one chat, one name
    assert f"chat {ref.group(1)}" not in lines[1]  # another chat, another name
    assert lines[1].endswith("failed: TimedOut")
    assert lines[3] == "sweep done: 3 chats, 100% sent"  # other numbers untouched
    # The same key (another process, a restart) gives the same name; another key does not.
    assert f"chat {ref.group(1)} blocked" in _emit(key, fmt)
    assert ref.group(1) == chat_ref(CHAT)
    assert ref.group(1) not in _emit(decode_key(new_key()), fmt)


def _chatty(node: ast.AST) -> bool:
    text = ast.unparse(node)
    return "chat_id" in text or "chat.id" in text


def test_every_log_call_names_a_chat_id_as_chat_placeholder() -> None:
    """A chat id passed to a log call must follow the word `chat` in the template, the one
    shape the filter hashes; this keeps new log lines honest."""
    problems: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for call in ast.walk(tree):
            if not (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr in LOG_METHODS
                and isinstance(call.func.value, ast.Name)
                and call.func.value.id in ("log", "logger", "_log", "LOG")
                and call.args
            ):
                continue
            template = call.args[0]
            where = f"{path.relative_to(PACKAGE.parent)}:{call.lineno}"
            for keyword in call.keywords:
                if keyword.arg == "extra" and _chatty(keyword.value):
                    problems.append(f"{where}: a chat id in `extra`")
            if not isinstance(template, ast.Constant) or not isinstance(template.value, str):
                if any(_chatty(arg) for arg in call.args):
                    problems.append(f"{where}: a chat id with a template that is not a literal")
                continue
            placeholders = [
                m for m in logs._PLACEHOLDER.finditer(template.value) if m.group(1) != "%"
            ]
            for arg, match in zip(call.args[1:], placeholders, strict=False):
                if _chatty(arg) and not logs._CHAT_BEFORE.search(template.value, 0, match.start()):
                    problems.append(f"{where}: {ast.unparse(arg)} is not introduced as `chat %s`")
    assert problems == []
