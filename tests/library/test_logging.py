"""Tokens, codes and secrets never reach the logs, even at DEBUG."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

import pytest

from bot.config.logs import HTTP_LOGGERS, RedactingFilter, install_log_redaction, redact
from bot.library.client import LibraryClient
from bot.library.errors import ServiceUnavailable
from bot.library.models import Session
from tests.fixtures.patrons import KAREN
from tests.library.conftest import REDIRECT_URI, login_code

if TYPE_CHECKING:
    from sandbox.library import LibrarySandbox


def test_redact_patterns() -> None:
    line = (
        "HTTP Request: GET http://127.0.0.1:5/v3/user?access_token=abc123&pids=%5B%5D"
        ' "HTTP/1.1 200 OK"'
        " /getTicket/sess-tok/42 token=t0k code=c0de&state=st client_secret=s3c"
        " Authorization: Bearer b34rer error_code=keep statusCode=200"
    )
    cleaned = redact(line)
    for secret in ("abc123", "sess-tok", "t0k", "c0de", "s3c", "b34rer", "=st"):
        assert secret not in cleaned
    assert "pids=%5B%5D" in cleaned
    assert "error_code=keep" in cleaned and "statusCode=200" in cleaned
    assert "/getTicket/***/***" in cleaned


def test_install_is_idempotent() -> None:
    install_log_redaction()
    install_log_redaction()
    for name in HTTP_LOGGERS:
        filters = logging.getLogger(name).filters
        assert sum(isinstance(f, RedactingFilter) for f in filters) == 1


def test_filter_rewrites_args_and_tracebacks() -> None:
    record = logging.LogRecord(
        "httpx", logging.INFO, __file__, 1, "GET %s", ("http://h/x?access_token=zzz",), None
    )
    try:
        raise ValueError("failed at /login?token=yyy")
    except ValueError:
        record.exc_info = sys.exc_info()
    assert RedactingFilter().filter(record) is True
    assert "zzz" not in record.getMessage()
    assert record.exc_text is not None and "yyy" not in record.exc_text


async def test_no_secret_in_captured_logs(
    library_sandbox: LibrarySandbox, client: LibraryClient, caplog: pytest.LogCaptureFixture
) -> None:
    install_log_redaction()
    caplog.set_level(logging.DEBUG)
    code = await login_code(library_sandbox)
    grant = await client.exchange_code(code, redirect_uri=REDIRECT_URI)
    await client.userinfo(grant.access_token)
    await client.user(grant.access_token)
    session_token, ticket_id = library_sandbox.open_ticket(KAREN)
    await client.get_ticket(Session(token=session_token, id=str(ticket_id)))
    public = await client.public_token()
    await client.search_public("kongens")
    library_sandbox.faults.malformed.add("platform")
    with pytest.raises(ServiceUnavailable):
        await client.user(grant.access_token)
    await client.revoke(grant.access_token)

    text = caplog.text + "\n".join(record.getMessage() for record in caplog.records)
    # Every call was logged, by endpoint (the test would pass vacuously on a silent client).
    assert "data platform /v3/user: ok in" in text
    assert "access service /oauth/revoke: ok in" in text
    for secret in (grant.access_token, code, session_token, public, library_sandbox.client_secret):
        assert secret not in text
