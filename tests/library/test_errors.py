"""Each kind of failure, provoked with the sandbox's faults, maps to one error of the taxonomy."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from bot.library.client import LibraryClient
from bot.library.decoding import error_for as _error_for
from bot.library.errors import (
    BadRequest,
    NotLoggedIn,
    OrderRefused,
    Refused,
    ServiceUnavailable,
    TokenRejected,
)
from tests.fixtures.patrons import KAREN, OLE, PID
from tests.library.conftest import make_client

if TYPE_CHECKING:
    from sandbox.library import LibrarySandbox

ORDER_CALLS = "platform GET /v3/order"


async def test_expired_token(library_sandbox: LibrarySandbox, client: LibraryClient) -> None:
    token = library_sandbox.issue_token(KAREN)
    library_sandbox.expire_token(token)
    with pytest.raises(TokenRejected) as caught:
        await client.user(token)
    assert (caught.value.status, caught.value.code) == (401, "invalid_token")
    assert token not in str(caught.value)


async def test_order_not_placed_is_not_retried(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    token = library_sandbox.issue_token(OLE)
    library_sandbox.faults.fail_next["/v3/order"] = [500]
    before = library_sandbox.calls[ORDER_CALLS]
    with pytest.raises(OrderRefused) as caught:
        await client.order(token, [PID], "DK-710100")
    assert caught.value.code == "order not placed"
    assert caught.value.status == 500
    assert library_sandbox.calls[ORDER_CALLS] == before + 1


async def test_order_system_down(library_sandbox: LibrarySandbox, client: LibraryClient) -> None:
    library_sandbox.faults.down.add("orders")
    token = library_sandbox.issue_token(OLE)
    with pytest.raises(ServiceUnavailable) as caught:
        await client.order(token, [PID], "DK-710100")
    assert caught.value.code == "service_unavailable"
    assert (await client.user(token)).loans == []  # the rest of the platform works


async def test_order_validation_is_a_bad_request(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    token = library_sandbox.issue_token(OLE)
    with pytest.raises(BadRequest) as caught:
        await client.order(token, [PID], "")
    assert caught.value.status == 400
    assert caught.value.code


async def test_order_refused_by_the_order_system(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    token = library_sandbox.issue_token(KAREN)
    # The pick-up library has it on its own shelves (sandbox contract, issue 15).
    with pytest.raises(OrderRefused) as caught:
        await client.order(token, ["870970-basis:27015794"], "DK-710100")
    assert caught.value.code == "owned_own_catalogue"
    assert token not in str(caught.value)


async def test_cancelling_an_unknown_order_is_refused(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    token = library_sandbox.issue_token(KAREN)
    with pytest.raises(Refused) as caught:
        await client.cancel_order(token, "no-such-order")
    assert not isinstance(caught.value, OrderRefused)
    assert caught.value.code == "Unknown Request"


async def test_refused_renewal(library_sandbox: LibrarySandbox, client: LibraryClient) -> None:
    token = library_sandbox.issue_token(KAREN)
    reserved = library_sandbox.patron_data(KAREN).loans[3]["loanId"]
    with pytest.raises(Refused) as caught:
        await client.renew(token, reserved)
    assert not isinstance(caught.value, OrderRefused)
    assert caught.value.code == "Renewal Not Allowed - Item Has Outstanding Requests"
    with pytest.raises(Refused) as unknown:
        await client.renew(token, "no-such-loan")
    assert unknown.value.code == "Agency authentication failed"  # as recorded


async def test_platform_down(library_sandbox: LibrarySandbox, client: LibraryClient) -> None:
    library_sandbox.faults.down.add("platform")
    with pytest.raises(ServiceUnavailable) as caught:
        await client.user(library_sandbox.issue_token(KAREN))
    assert caught.value.status == 503


async def test_server_error_on_a_read(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    library_sandbox.faults.fail_next["/v3/user"] = [500]
    token = library_sandbox.issue_token(KAREN)
    with pytest.raises(ServiceUnavailable) as caught:
        await client.user(token)
    assert caught.value.status == 500
    assert (await client.user(token)).name == "Karen Jensen"  # HTTP errors are not retried


async def test_malformed_body(library_sandbox: LibrarySandbox, client: LibraryClient) -> None:
    library_sandbox.faults.malformed.add("platform")
    with pytest.raises(ServiceUnavailable, match="malformed response from") as caught:
        await client.user(library_sandbox.issue_token(KAREN))
    assert "access_token" not in str(caught.value)
    library_sandbox.faults.malformed = {"oauth"}
    with pytest.raises(ServiceUnavailable, match="malformed response from"):
        await client.userinfo(library_sandbox.issue_token(KAREN))


async def test_reads_are_retried_once_on_connection_errors(
    library_sandbox: LibrarySandbox,
) -> None:
    outcomes: list[tuple[str, str]] = []
    library = make_client(
        library_sandbox, on_call=lambda name, outcome, _: outcomes.append((name, outcome))
    )
    library_sandbox.faults.refuse_connections.add("platform")
    token = library_sandbox.issue_token(KAREN)
    before = library_sandbox.calls.copy()
    try:
        with pytest.raises(ServiceUnavailable):
            await library.user(token)
        with pytest.raises(ServiceUnavailable):
            await library.order(token, [PID], "DK-710100")
        with pytest.raises(ServiceUnavailable):
            await library.renew(token, "4100001")
    finally:
        await library.aclose()
    seen = library_sandbox.calls - before  # the sandbox read each request, then hung up
    assert seen["platform GET /v3/user"] == 2
    assert seen[ORDER_CALLS] == 1
    assert seen["platform GET /v3/renew"] == 1
    assert outcomes == [("user", "unavailable"), ("order", "unavailable"), ("renew", "unavailable")]


async def test_slow_order_times_out_once(library_sandbox: LibrarySandbox) -> None:
    library = make_client(library_sandbox, timeout=0.5)
    library_sandbox.faults.latency["platform"] = 1.5
    before = library_sandbox.calls[ORDER_CALLS]
    started = time.monotonic()
    try:
        with pytest.raises(ServiceUnavailable) as caught:
            await library.order(library_sandbox.issue_token(OLE), [PID], "DK-710100")
        elapsed = time.monotonic() - started
        with pytest.raises(ServiceUnavailable):
            await library.user(library_sandbox.issue_token(OLE))
    finally:
        await library.aclose()
    assert caught.value.code == "timeout"
    assert elapsed < 1.2  # the call's whole budget is the timeout
    assert library_sandbox.calls[ORDER_CALLS] == before + 1


async def test_revoke_never_raises(library_sandbox: LibrarySandbox) -> None:
    library = make_client(library_sandbox, timeout=0.5)
    try:
        library_sandbox.faults.latency["oauth"] = 2.0
        started = time.monotonic()
        assert await library.revoke(library_sandbox.issue_token(KAREN)) is False
        assert time.monotonic() - started < 1.2
        library_sandbox.faults.latency.clear()
        library_sandbox.faults.down.add("oauth")
        assert await library.revoke(library_sandbox.issue_token(KAREN)) is False
    finally:
        await library.aclose()


@pytest.mark.parametrize("endpoint", ["order", "renew", "cancel_order"])
def test_a_failing_server_is_not_a_refusal(endpoint: str) -> None:
    failed = _error_for(endpoint, 500, {"statusCode": 500, "error": "internal server error"})
    assert isinstance(failed, ServiceUnavailable)
    refused = _error_for(endpoint, 500, {"statusCode": 500, "error": "renewal_refused"})
    assert isinstance(refused, Refused)


@pytest.mark.parametrize("endpoint", ["order", "renew", "cancel_order"])
@pytest.mark.parametrize(
    ("status", "body", "unknown"),
    [
        # A gateway's answer, with or without a body: the platform may have acted.
        (502, None, True),
        (504, b"<html>Gateway Time-out</html>", True),
        (502, {"statusCode": 502, "error": "upstream timed out"}, True),
        (500, {"statusCode": 500, "error": "internal server error"}, True),
        (500, None, True),
        # The platform turned it away unread.
        (503, {"statusCode": 503, "error": "service_unavailable"}, False),
        (503, None, False),
    ],
)
def test_a_server_error_after_sending_leaves_the_outcome_unknown(
    endpoint: str, status: int, body: object, unknown: bool
) -> None:
    """Only the platform's own refusal or 503 says what became of a change; a gateway's 5xx
    (even one with a JSON error) and a 500 naming no refusal do not."""
    error = _error_for(endpoint, status, body)
    assert isinstance(error, ServiceUnavailable)
    assert error.outcome_unknown is unknown


@pytest.mark.parametrize("endpoint", ["user", "renew"])
def test_only_the_platforms_not_logged_in_ends_a_login(endpoint: str) -> None:
    """A 403 ends a login only as the platform says it (`user.js`: "not logged in"); any other
    403 (a bare "Forbidden" of Express's `sendStatus`, a proxy's) says nothing of the token,
    so no card lapses and no token is revoked for it."""
    ended = _error_for(endpoint, 403, {"statusCode": 403, "error": "not logged in"})
    assert isinstance(ended, NotLoggedIn)
    for body in (None, b"Forbidden"):
        assert isinstance(_error_for(endpoint, 403, body), ServiceUnavailable)
    assert not isinstance(_error_for(endpoint, 403, {"error": "Forbidden"}), NotLoggedIn)
