"""Property tests of the library client's parsers: arbitrary JSON shaped like the spec's resources.

Whatever a server sends, the client either returns the model or raises one of its own
`LibraryError`s; nothing from pydantic, json or the standard library escapes to a handler.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from http import HTTPStatus
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from bot.library.client import LibraryClient, parse_envelope, parse_model
from bot.library.errors import LibraryError, ServiceUnavailable
from bot.library.models import (
    BorrowerStatus,
    Branch,
    CancelResult,
    OrderResult,
    RenewResult,
    Session,
    Ticket,
    TokenResponse,
    Userinfo,
    Work,
)
from tests.fixtures.strategies import FAST, TZ, any_json, dates, shaped, texts

loan = shaped(
    {
        "loanId": texts,
        "dueDate": dates,
        "title": texts,
        "creator": texts,
        "materialId": texts,
        "titleId": texts,
    }
)
order = shaped(
    {
        "orderId": texts,
        "orderType": st.just("normal"),
        "status": st.sampled_from(["Active", "In process", "Available for pickup", ""]),
        "pickUpAgency": st.text(max_size=12),
        "holdQueuePosition": texts,
        "creator": texts,
        "title": texts,
        "orderDate": dates,
        "titleId": texts,
        "pickUpExpiryDate": dates,
        "pickUpId": texts,
    }
)
debt = shaped({"amount": texts, "currency": texts, "date": dates, "title": texts})
user = shaped(
    {
        "id": texts,
        "name": texts,
        "address": texts,
        "postalCode": texts,
        "mail": texts,
        "loans": st.lists(loan, max_size=4) | st.none(),
        "orders": st.lists(order, max_size=4) | st.none(),
        "debt": st.lists(debt, max_size=3) | st.none(),
        "libcmsapi": texts,
        "agency": texts,
    }
)
listy = st.one_of(texts, st.lists(texts, max_size=3))
work = shaped({"pid": listy, "title": listy, "creator": listy, "date": listy, "type": listy})
resources: dict[type[BaseModel], st.SearchStrategy[Any]] = {
    BorrowerStatus: user,
    OrderResult: shaped({"status": texts, "orsId": texts}),
    RenewResult: shaped({"loanId": texts, "returnDate": dates}),
    CancelResult: shaped({"orderId": texts, "deleted": st.booleans()}),
    Work: work,
    Branch: shaped({"branchId": texts, "agencyId": texts, "branchName": listy}),
    TokenResponse: shaped(
        {"access_token": texts, "token_type": texts, "expires_in": st.integers() | texts}
    ),
    Session: shaped({"token": texts, "id": texts}),
    Ticket: shaped({"id": texts, "token": texts, "attributes": any_json}),
    Userinfo: shaped({"uniqueId": texts, "municipality": texts}),
}
models = st.sampled_from(sorted(resources, key=lambda m: m.__name__))


def envelope_of(data: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Success and failure envelopes around `data`, and bodies that are no envelope at all."""
    status = st.one_of(st.just(200), st.sampled_from([400, 401, 403, 404, 500, 503]), any_json)
    return st.one_of(
        st.fixed_dictionaries({"statusCode": st.just(200), "data": data}),
        st.fixed_dictionaries(
            {"statusCode": status},
            optional={"data": data, "error": texts, "error_description": texts},
        ),
        any_json,
    )


# --- properties -----------------------------------------------------------------------------


@FAST
@given(st.data())
def test_parse_model_returns_the_model_or_a_library_error(data: st.DataObject) -> None:
    model = data.draw(models)
    value = data.draw(st.one_of(resources[model], any_json))
    try:
        parsed = parse_model(model, value, tz=TZ, endpoint="user")
    except LibraryError:
        return
    assert isinstance(parsed, model)


@FAST
@given(st.data())
def test_parse_envelope_returns_the_model_or_a_library_error(data: st.DataObject) -> None:
    model = data.draw(models)
    body = data.draw(envelope_of(resources[model]))
    try:
        parsed = parse_envelope(
            body,
            model,
            tz=TZ,
            endpoint=data.draw(st.sampled_from(["user", "order", "renew", "cancel_order"])),
        )
    except LibraryError as exc:
        assert "access_token" not in str(exc)
        return
    assert isinstance(parsed, model)


@FAST
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "loanId": st.text(min_size=1, max_size=20),
                "dueDate": dates,
                "title": st.text(max_size=40),
            }
        ),
        max_size=6,
    )
)
def test_well_typed_loans_always_parse_and_keep_their_ids(loans: list[dict[str, Any]]) -> None:
    """A body of the documented shape is never refused, whatever its dates look like."""
    status = parse_envelope({"statusCode": 200, "data": {"loans": loans}}, BorrowerStatus, tz=TZ)
    assert [loan.loan_id for loan in status.loans] == [loan["loanId"] for loan in loans]
    for parsed, sent in zip(status.loans, loans, strict=True):
        assert parsed.title == sent["title"]
        assert parsed.due_date is None or isinstance(parsed.due_date, dt.date | str)


def test_absurd_nesting_is_a_library_error() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(ServiceUnavailable):
        parse_envelope({"statusCode": 200, "data": {"loans": deep}}, BorrowerStatus, tz=TZ)


# --- the same through HTTP: raw bytes the client decodes itself --------------------------------


def _answer_with(status: int, body: bytes) -> Any:
    """A connection handler that reads one request and answers `status` with `body`."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            head = (
                f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                "Connection: close\r\n\r\n"
            )
            writer.write(head.encode() + body)
            await writer.drain()
        finally:
            writer.close()

    return handle


raw_bodies = st.one_of(
    st.binary(max_size=200),
    envelope_of(user).map(lambda body: json.dumps(body, allow_nan=True).encode()),
    st.text(max_size=100).map(str.encode),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw_bodies, st.sampled_from([200, 201, 204, 302, 400, 401, 403, 404, 429, 500, 502, 503]))
async def test_client_user_call_on_any_body(body: bytes, status: int) -> None:
    """`LibraryClient.user` on any status and body: a model or a `LibraryError`, nothing else."""

    server = await asyncio.start_server(_answer_with(status, body), "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    client = LibraryClient(
        oauth_url=url,
        auth_url=url,
        platform_url=url,
        client_id="id",
        client_secret="secret",
    )
    try:
        result = await client.user("token-value")
    except LibraryError as exc:
        assert "token-value" not in str(exc)
    else:
        assert isinstance(result, BorrowerStatus)
    finally:
        await client.aclose()
        server.close()
        await server.wait_closed()
