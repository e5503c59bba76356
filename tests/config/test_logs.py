"""Whatever is logged, by us or by the libraries, no secret reaches the output."""

from __future__ import annotations

import io
import json
import logging
from typing import Literal

import pytest

from bot.config.logs import RedactingFilter, setup_logging

BOT_TOKEN = "7731234567:AAHx9_secretBotTokenPart-0123456789"
CLIENT_SECRET = "cl1ent-s3cret-value"
PATRON_TOKEN = "patron0token0abcdef"
CPR = "0101801234"
SECRETS = (BOT_TOKEN, CLIENT_SECRET, PATRON_TOKEN)
MUST_NOT_APPEAR = (
    "AAHx9_secretBotTokenPart",
    CLIENT_SECRET,
    PATRON_TOKEN,
    "the-auth-code",
    "the-state-value",
    "b4s1cCred",
    "ticketTok",
    "pw-9999",
    CPR,
    "010180-1234",
    "dXNlcjpwYXNz",
)


def emit_everything() -> None:
    """Records shaped like the ones our code and the libraries really produce."""
    logging.getLogger("httpx").warning(
        'HTTP Request: POST %s "HTTP/1.1 200 OK"',
        f"https://api.telegram.org/bot{BOT_TOKEN}/getUpdates",
    )
    logging.getLogger("aiohttp.access").info(
        '127.0.0.1 "GET /oauth/callback?code=the-auth-code&state=the-state-value HTTP/1.1" 200'
    )
    logging.getLogger("telegram.ext.Updater").error("token %s rejected", BOT_TOKEN)
    logging.getLogger("bot.library").info(
        "POST /oauth/token client_secret=%s&grant_type=password&password=pw-9999", CLIENT_SECRET
    )
    logging.getLogger("bot.library").info("headers {'Authorization': 'Bearer %s'}", PATRON_TOKEN)
    logging.getLogger("httpcore").warning("Authorization: Basic dXNlcjpwYXNz (b4s1cCred)")
    logging.getLogger("bot.library").warning("GET /getTicket/ticketTok/abc123 failed")
    logging.getLogger("storage").info("userinfo {'cpr': '%s', 'b': '010180-1234'}", CPR)
    logging.getLogger("bot").info('body {"access_token": "%s", "expires_in": 3600}', PATRON_TOKEN)
    logging.getLogger("apscheduler.scheduler").error("job failed", extra={"token": PATRON_TOKEN})
    try:
        raise RuntimeError(f"GET /v3/user?access_token={PATRON_TOKEN} b4s1cCred failed")
    except RuntimeError:
        logging.getLogger("bot.telegram.handlers.borrower").exception(
            "loans failed for chat %d", 42
        )


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_no_secret_is_ever_written(fmt: Literal["text", "json"], restore_logging: None) -> None:
    stream = io.StringIO()
    redactor = setup_logging("DEBUG", fmt, secrets=[BOT_TOKEN, CLIENT_SECRET], stream=stream)
    redactor.add_secret(PATRON_TOKEN)
    redactor.add_secret("b4s1cCred")
    emit_everything()
    out = stream.getvalue()
    assert out.count("\n") >= 11
    for secret in MUST_NOT_APPEAR:
        assert secret not in out, secret
    # What is left is still useful to an operator.
    assert "/bot7731234567:***/getUpdates" in out
    assert "code=***&state=***" in out
    assert "loans failed for chat 42" in out
    assert "RuntimeError" in out
    assert "/getTicket/***/***" in out


def test_json_lines_parse_with_fields_and_extras(restore_logging: None) -> None:
    stream = io.StringIO()
    setup_logging("INFO", "json", secrets=[PATRON_TOKEN], stream=stream)
    log = logging.getLogger("bot.jobs.sweep")
    log.info("sweep done: %d chats", 3, extra={"chats": 3, "day": "2026-11-26", "obj": object()})
    try:
        1 / 0  # noqa: B018
    except ZeroDivisionError:
        log.exception("oops %s", PATRON_TOKEN)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    first, second = lines
    assert first["message"] == "sweep done: 3 chats"
    assert first["level"] == "INFO"
    assert first["logger"] == "bot.jobs.sweep"
    assert first["time"].endswith("Z") and "T" in first["time"]
    assert first["chats"] == 3 and first["day"] == "2026-11-26"
    assert "obj" not in first and "exc_info" not in first
    assert second["level"] == "ERROR" and second["message"] == "oops ***"
    assert "ZeroDivisionError" in second["exc_info"]


def test_setup_is_idempotent_and_quiets_chatty_loggers(restore_logging: None) -> None:
    first, second = io.StringIO(), io.StringIO()
    setup_logging("INFO", "text", stream=first)
    setup_logging("INFO", "text", stream=second)
    logging.getLogger("bot").info("hello once")
    logging.getLogger("httpx").info("HTTP Request: GET ...")  # quiet at INFO
    assert first.getvalue() == ""
    assert second.getvalue().count("hello once") == 1
    assert "HTTP Request" not in second.getvalue()
    assert logging.getLogger("apscheduler").level == logging.WARNING
    setup_logging("DEBUG", "text", stream=second)
    logging.getLogger("httpx").info("HTTP Request: GET now")
    assert "HTTP Request: GET now" in second.getvalue()


def test_filter_alone() -> None:
    redactor = RedactingFilter(["abc", "x" * 8])
    assert redactor.redact("abc xxxxxxxx") == "abc ***"  # too-short secrets are ignored
    assert redactor.redact("?token=a%2Fb&x=1") == "?token=***&x=1"
    assert redactor.redact("statusCode=200 error_code=7") == "statusCode=200 error_code=7"
    record = logging.LogRecord("n", logging.INFO, "p", 1, "token=%s", ("s3cr3t",), None)
    assert redactor.filter(record)
    assert record.getMessage() == "token=***"
    assert record.args == ()
