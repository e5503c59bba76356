"""Every data-platform call of the bot, as it goes out, passes the platform's own validation.

The sandbox reads a request as serviceprovider does (`sandbox.library.grammar`: the query's
`JSON.parse`, the comma split, the list wrap, no unknown parameter); a request it refuses is a
400, which the client raises as `ClientFault`. Ids come in every recorded shape: all digits, as
the spec's examples, and the long base64 `NCIP…` ids of the recorded answers.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import pytest

from bot.library.client import LibraryClient, platform_query
from bot.library.decoding import LABELS
from bot.library.errors import ClientFault
from sandbox.library.grammar import PARAMETERS, parse_query_value, validate
from tests.fixtures.patrons import KAREN, METTE

if TYPE_CHECKING:
    from sandbox.library import LibrarySandbox

PID = "870970-basis:22871420"  # "1984"

LOANS = ("loans", "loanId")

Call = Callable[[LibraryClient, "LibrarySandbox"], Awaitable[Any]]


def _ids(sandbox: LibrarySandbox, user_id: str, kind: str, key: str) -> tuple[str, str]:
    """One all-digit id and one `NCIP…` id among the patron's loans or orders."""
    items = getattr(sandbox.patron_data(user_id), kind)
    digits = next(item[key] for item in items if item[key].isdigit())
    ncip = next(item[key] for item in items if item[key].startswith("NCIP"))
    return digits, ncip


async def _renew_both(client: LibraryClient, sandbox: LibrarySandbox) -> list[Any]:
    token = sandbox.issue_token(METTE)
    return [await client.renew(token, loan_id) for loan_id in _ids(sandbox, METTE, *LOANS)]


async def _cancel_both(client: LibraryClient, sandbox: LibrarySandbox) -> list[Any]:
    token = sandbox.issue_token(KAREN)
    digits, ncip = _ids(sandbox, KAREN, "orders", "orderId")
    return [await client.cancel_order(token, order_id) for order_id in (digits, ncip)]


# Each platform endpoint of the client (`decoding.LABELS`), called as the bot calls it.
CALLS: dict[str, Call] = {
    "user": lambda c, s: c.user(s.issue_token(KAREN)),
    "order": lambda c, s: c.order(s.issue_token(KAREN), [PID], "DK-710104"),
    "cancel_order": _cancel_both,
    "renew": _renew_both,
    "work": lambda c, s: c.work_public([PID, "870970-basis:27247164"]),
    "search": lambda c, s: c.search_public("harry, potter", limit=50, offset=0),
    "libraries": lambda c, s: c.libraries_public(
        agency_ids=["710100", "DK-751000"], branch_ids=["710104", "DK-751003"]
    ),
    "events": lambda c, s: c.events(s.issue_token(KAREN), "710100"),
    "news": lambda c, s: c.news(s.issue_token(KAREN), "DK-710100"),
    "library": lambda c, s: c.library_public("746100"),
    "holdings": lambda c, s: c.holdings_public("710100", [PID, "870970-basis:27247164"]),
    "availability": lambda c, s: c.availability(s.issue_token(KAREN), [PID, "870970-basis:1"]),
    "recommend": lambda c, s: c.recommend(
        s.issue_token(KAREN), [PID], ignore=["870970-basis:27247164"], limit=50
    ),
}


def test_every_platform_endpoint_of_the_client_is_tried() -> None:
    assert set(CALLS) == {name for name, text in LABELS.items() if "/v3/" in text}


@pytest.mark.parametrize("endpoint", sorted(CALLS))
async def test_the_bots_request_passes_the_platforms_validation(
    endpoint: str,
    library_sandbox: LibrarySandbox,
    client: LibraryClient,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="bot.library.client")
    try:
        await CALLS[endpoint](client, library_sandbox)
    except ClientFault:  # pragma: no cover - the failure this test is for
        pytest.fail(f"the platform refused the bot's {endpoint} request: {caplog.text}")
    assert "refused the bot's request" not in caplog.text


async def test_ids_of_both_shapes_are_renewed_and_cancelled(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    renewed = await _renew_both(client, library_sandbox)
    assert [r.loan_id for r in renewed] == list(_ids(library_sandbox, METTE, *LOANS))
    assert all(r.return_date is not None for r in renewed)
    before = len(library_sandbox.patron_data(KAREN).orders)
    cancelled = await _cancel_both(client, library_sandbox)
    assert all(c.deleted for c in cancelled)
    assert len(library_sandbox.patron_data(KAREN).orders) == before - 2


async def test_covers_come_for_more_works_than_one_call_takes(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    """`/v3/work` takes 20 pids a call: 41 pids are three calls, and every work with a cover
    comes back with it."""
    loans = library_sandbox.patron_data(METTE).loans
    pids = list(dict.fromkeys(f"870970-basis:{loan['titleId']}" for loan in loans))
    assert len(pids) > 40
    works = await client.work_public(pids)
    assert [work.pid for work in works] == pids
    assert library_sandbox.calls["platform GET /v3/work"] == 3
    covered = [work for work in works if work.cover_url117]
    assert len(covered) >= len(pids) * 5 // 7
    assert all(work.cover_url117.startswith("//") for work in covered if work.cover_url117)


def test_every_value_goes_as_json() -> None:
    query = platform_query(
        {"loanId": "4940377131", "delete": True, "limit": 10, "pids": ("a", "b"), "q": "x, y"}
    )
    assert query == {
        "loanId": '"4940377131"',
        "delete": "true",
        "limit": "10",
        "pids": '["a","b"]',
        "q": '"x, y"',
    }
    # What the platform makes of it: each value as it was, the comma inside the string kept.
    assert {name: parse_query_value(value) for name, value in query.items()} == {
        "loanId": "4940377131",
        "delete": True,
        "limit": 10,
        "pids": ["a", "b"],
        "q": "x, y",
    }


@pytest.mark.parametrize(
    ("raw", "read"),
    [
        ("4940377131", 4940377131),
        ("true", True),
        ('"abc"', "abc"),
        ("abc", "abc"),
        ("a,b,,c", ["a", "b", "c"]),
        ('["a"]', ["a"]),
        ("NaN", "NaN"),  # JSON.parse knows no NaN
        ("NCIPMDAxOXw=", "NCIPMDAxOXw="),
    ],
)
def test_a_query_value_is_read_as_provider_js_reads_it(raw: str, read: object) -> None:
    assert parse_query_value(raw) == read


def test_the_validators_messages() -> None:
    renew = PARAMETERS["renew"]
    assert validate({}, renew) == [' requires property "loanId"']
    assert validate({"loanId": 4940377131}, renew) == ["loanId is not of a type(s) string"]
    assert validate({"loanId": "1", "limit": 1}, renew) == [
        ' additionalProperty "limit" exists in instance when not allowed'
    ]
    assert validate({"q": "x", "limit": 51}, PARAMETERS["search"]) == [
        "limit must have a maximum value of 50"
    ]
    assert validate({"pids": ["p"] * 21}, PARAMETERS["work"]) == [
        "pids does not meet maximum length of 20"
    ]
    assert validate({"pretty": "yes"}, PARAMETERS["user"]) == ["pretty is not of a type(s) boolean"]


async def test_holdings_and_availability_as_the_bot_reads_them(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    """Copies at several branches of one library, with their places; availability per pid in
    order, with the order system's reason, and `unavailable` for a title nobody has."""
    [holdings] = await client.holdings_public("DK-710100", [PID])
    assert holdings.pid == PID and len(holdings.holdingsitems) >= 2
    assert {copy.status for copy in holdings.holdingsitems} <= {"OnShelf", "OnLoan", "NotForLoan"}
    assert all(copy.branch and copy.place for copy in holdings.holdingsitems)
    token = library_sandbox.issue_token(KAREN)
    net, own, unknown = await client.availability(
        token, ["870970-basis:51371213", "870970-basis:27015794", "870970-basis:1"]
    )
    assert (net.order_possible, net.order_possible_reason) == (False, "owned_wrong_mediumType")
    assert (own.order_possible, own.order_possible_reason) == (False, "owned_own_catalogue")
    assert unknown.unavailable and unknown.order_possible is None
    [fine] = await client.availability(token, [PID])
    assert fine.order_possible and fine.expected_delivery is not None
