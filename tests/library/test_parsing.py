"""Parsing without a server: whatever JSON arrives, only the client's own errors come out."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.library.client import LibraryClient, parse_envelope
from bot.library.errors import NOT_SENT, LibraryError, ServiceUnavailable, TokenRejected
from bot.library.models import BorrowerStatus, parse_library_date

TZ = ZoneInfo("Europe/Copenhagen")

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30)
dates = st.sampled_from(
    [
        "2026-01-24",
        "2026-01-24T00:00:00+01:00",
        "2026-01-24T23:30:00.000Z",
        "24-01-2026",
        "0001-01-01T00:00:00+01:00",
        "9999-12-31T23:59:59-05:00",
        "",
    ]
)
json_values = st.recursive(
    scalars | dates,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)


def loan_like() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "loanId": json_values,
            "dueDate": dates | json_values,
            "title": json_values,
            "creator": json_values,
            "materialId": json_values,
        },
    )


def order_like() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "orderId": json_values,
            "status": json_values,
            "orderDate": dates | json_values,
            "pickUpExpiryDate": dates | json_values,
            "holdQueuePosition": json_values,
        },
    )


borrower_like = st.fixed_dictionaries(
    {},
    optional={
        "id": json_values,
        "name": json_values,
        "loans": st.lists(loan_like(), max_size=3) | json_values,
        "orders": st.lists(order_like(), max_size=3) | json_values,
        "debt": st.lists(
            st.fixed_dictionaries({}, optional={"amount": json_values, "date": dates}),
            max_size=2,
        )
        | json_values,
        "agency": json_values,
    },
)
envelopes = st.fixed_dictionaries(
    {},
    optional={"statusCode": st.integers(0, 600) | json_values, "data": borrower_like | json_values},
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=envelopes | json_values)
def test_arbitrary_borrower_json_raises_only_library_errors(body: object) -> None:
    try:
        status = parse_envelope(body, BorrowerStatus, tz=TZ)
    except LibraryError:
        return
    assert isinstance(status, BorrowerStatus)
    for loan in status.loans:
        assert loan.due_date is None or isinstance(loan.due_date, dt.date | str)


@settings(max_examples=100, deadline=None)
@given(data=borrower_like)
def test_well_formed_envelopes_parse(data: dict[str, Any]) -> None:
    """A borrower-shaped body parses or is reported as malformed; never anything else."""
    try:
        parse_envelope({"statusCode": 200, "data": data}, BorrowerStatus, tz=TZ)
    except ServiceUnavailable as exc:
        assert str(exc).startswith("malformed response from")


def test_dates_land_in_the_bots_zone() -> None:
    body = {
        "statusCode": 200,
        "data": {
            "loans": [
                {"loanId": "1", "dueDate": "2026-01-24"},
                {"loanId": "2", "dueDate": "2026-01-24T00:00:00+01:00"},
                {"loanId": "3", "dueDate": "2026-01-23T23:30:00.000Z"},
                {"loanId": "4", "dueDate": "24/01/2026"},
                {"loanId": "5", "dueDate": "24-01-2026"},
                {"loanId": "6", "dueDate": "24.01.2026"},
                {"loanId": "7", "dueDate": "31/02/2026"},
                {"loanId": "8", "dueDate": "om to uger"},
            ],
            "debt": [{"amount": 45.5, "currency": "DKK"}],
        },
    }
    status = parse_envelope(body, BorrowerStatus, tz=TZ)
    assert [loan.due_date for loan in status.loans] == [
        dt.date(2026, 1, 24),
        dt.date(2026, 1, 24),
        dt.date(2026, 1, 24),
        dt.date(2026, 1, 24),
        dt.date(2026, 1, 24),
        dt.date(2026, 1, 24),
        "31/02/2026",  # not a date: kept as sent, flagged where shown
        "om to uger",
    ]
    assert status.debt[0].amount == "45.5"
    in_new_york = parse_envelope(body, BorrowerStatus, tz=ZoneInfo("America/New_York"))
    assert in_new_york.loans[2].due_date == dt.date(2026, 1, 23)


def test_error_envelope_and_wrong_shapes() -> None:
    with pytest.raises(TokenRejected):
        parse_envelope({"statusCode": 401, "error": "invalid_token"}, BorrowerStatus)
    bodies: list[object] = [[], {"statusCode": 200}, {"statusCode": 200, "data": [1, 2]}, "text"]
    for body in bodies:
        with pytest.raises(ServiceUnavailable, match="malformed response from"):
            parse_envelope(body, BorrowerStatus)


async def test_authorize_url_is_encoded() -> None:
    library = LibraryClient(
        oauth_url="http://127.0.0.1:1/",
        auth_url="http://127.0.0.1:1",
        platform_url="http://127.0.0.1:1",
        client_id="bot & co",
        client_secret="s3cret",
    )
    try:
        url = library.authorize_url(
            redirect_uri="http://127.0.0.1:9/oauth/callback?x=1&y=2", state="a b+c"
        )
    finally:
        await library.aclose()
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == "http://127.0.0.1:1/oauth/authorize"
    assert parse_qs(parts.query) == {
        "response_type": ["code"],
        "client_id": ["bot & co"],
        "redirect_uri": ["http://127.0.0.1:9/oauth/callback?x=1&y=2"],
        "state": ["a b+c"],
    }
    assert "s3cret" not in url


async def test_unconfigured_login_url_is_a_bad_request() -> None:
    from bot.library.errors import BadRequest
    from bot.library.models import Session

    async with LibraryClient(
        oauth_url="http://127.0.0.1:1",
        auth_url="http://127.0.0.1:1",
        platform_url="http://127.0.0.1:1",
        client_id="c",
        client_secret="s",
    ) as library:
        with pytest.raises(BadRequest, match="LOGIN_URL is not configured"):
            library.login_page_url("token")
        with pytest.raises(BadRequest, match="LOGIN_URL is not configured"):
            await library.get_ticket(Session(token="t", id="1"))


async def test_connection_refused_is_unavailable_without_the_url() -> None:
    """Port 1 on loopback refuses; the error names the endpoint, not the URL or token."""
    calls: list[tuple[str, str]] = []
    async with LibraryClient(
        oauth_url="http://127.0.0.1:1",
        auth_url="http://127.0.0.1:1",
        platform_url="http://127.0.0.1:1",
        client_id="c",
        client_secret="s",
        timeout=2.0,
        on_call=lambda name, outcome, _: calls.append((name, outcome)),
    ) as library:
        with pytest.raises(ServiceUnavailable) as caught:
            await library.user("secret-token-xyz")
        assert await library.revoke("secret-token-xyz") is False
    text = str(caught.value)
    assert "secret-token-xyz" not in text and "127.0.0.1" not in text
    # No connection was made: nothing was sent, so a change sent so is known not made.
    assert caught.value.code == NOT_SENT and not caught.value.outcome_unknown
    assert calls == [("user", "unavailable"), ("revoke", "unavailable")]


@pytest.mark.parametrize(
    "placeholder", ["1970-01-01", "1970-01-01T00:00:00Z", "1970-01-01T00:00:00+01:00", "01-01-1970"]
)
def test_the_epoch_is_no_date(placeholder: str) -> None:
    status = BorrowerStatus.model_validate(
        {"debt": [{"amount": "30", "date": placeholder, "title": "Film"}]},
        context={"tz": TZ},
    )
    assert status.debt[0].date is None
    assert parse_library_date("1970-01-02") == dt.date(1970, 1, 2)
