"""Contract: the sandbox answers in the shapes the data platform was recorded answering.

The fixtures below are our own values written in the shapes of the platform's recorded answers
(`DBCDK/serviceprovider`, `src/transformers/__tests__/*.auto.js` / `*.snapshot.js`): same keys,
same value types, same date forms. Each test asks the sandbox for the same kind of answer and
compares its shape to the fixture's.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from sandbox.library import LibrarySandbox
from tests.fixtures.patrons import JONAS, KAREN, OLE

OFFSET_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$")

# /v3/user (user_all_userinfo_*.auto.js): a loan, an order at the reservation shelf (no queue
# position, a last day to collect) and one in the queue; `ddbcmsapi`, not `libcmsapi`.
RECORDED_USER: dict[str, Any] = {
    "statusCode": 200,
    "data": {
        "id": "qZ3xT0aLrB7mWc1sKd9EuYf2HgJn4Po6",
        "name": "Test Låner",
        "address": "Bibliotekvej 1",
        "postalCode": "8000",
        "loans": [
            {
                "loanId": "120000001",
                "dueDate": "2026-01-24T00:00:00+01:00",
                "title": "En titel",
                "creator": "Efternavn, Fornavn",
                "materialId": "9788700000000",
                "titleId": "51000000",
            }
        ],
        "orders": [
            {
                "orderId": "301",
                "orderType": "normal",
                "status": "At reservation shelf",
                "pickUpAgency": "DK-751000",
                "creator": "Efternavn, Fornavn",
                "title": "En anden titel",
                "orderDate": "2026-01-10T20:18:23+01:00",
                "pickUpExpiryDate": "2026-01-24T00:00:00+01:00",
                "titleId": "01000000",
            },
            {
                "orderId": "302",
                "orderType": "normal",
                "status": "Active",
                "pickUpAgency": "DK-751000",
                "holdQueuePosition": "1",
                "creator": "Efternavn, Fornavn",
                "title": "En tredje titel",
                "orderDate": "2026-01-10T20:18:23+01:00",
                "titleId": "23000000",
            },
        ],
        "debt": [
            {"amount": "50", "currency": "DKK", "date": "1970-01-01T00:00:00+01:00", "title": ""}
        ],
        "ddbcmsapi": "https://cmscontent.example.test/",
        "agency": "751000",
    },
}
RECORDED_USER_FAILED = {"statusCode": 500, "error": "User authentication failed"}
RECORDED_RENEWED = {
    "statusCode": 200,
    "data": {"loanId": "120000001", "returnDate": "2026-02-23T00:00:00+01:00"},
}
RECORDED_RENEW_FAILED = {"statusCode": 500, "error": "Agency authentication failed"}
RECORDED_ORDER_INVALID = {"statusCode": 400, "error": "missing pids parameter"}
RECORDED_ORDERED = {"statusCode": 200, "data": {"status": "ok", "orsId": "1038000000"}}
# order_delete_existing_order.snapshot.js: `NCIP`, base64 of `|`-separated parts, `==` at the end.
RECORDED_CANCELLED = {
    "statusCode": 200,
    "data": {
        "deleted": True,
        "orderId": "NCIP" + base64.b64encode(b"0019|01-01-2026 10:00:00|Name|Title||||").decode(),
    },
}


def shape(value: Any) -> Any:
    """Keys and value types, recursively; lists by the shape of their first item."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


async def get(client, sandbox: LibrarySandbox, path: str, token: str, **params) -> Any:
    response = await client.get(
        f"{sandbox.urls.platform}{path}", params={"access_token": token, **params}
    )
    body = response.json()
    assert response.status_code == body["statusCode"]
    return body


def orders_by_status(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {order["status"]: order for order in body["data"]["orders"]}


async def test_user_is_shaped_as_recorded(library_sandbox, client):
    body = await get(client, library_sandbox, "/v3/user", library_sandbox.issue_token(KAREN))
    recorded = RECORDED_USER["data"]
    data = body["data"]
    # Every recorded field, of the recorded type (the spec's `mail` comes beside them).
    assert {k: shape(data[k]) for k in recorded if k not in ("loans", "orders")} == {
        k: shape(v) for k, v in recorded.items() if k not in ("loans", "orders")
    }
    assert shape(data["loans"][0]) == shape(recorded["loans"][0])
    ours = orders_by_status(body)
    theirs = orders_by_status(RECORDED_USER)
    shelf = dict(ours["At reservation shelf"])
    shelf.pop("pickUpId")  # an optional field of the production notes
    assert shape(shelf) == shape(theirs["At reservation shelf"])
    assert shape(ours["Active"]) == shape(theirs["Active"])


async def test_user_dates_include_date_times_with_offsets(library_sandbox, client):
    body = await get(client, library_sandbox, "/v3/user", library_sandbox.issue_token(KAREN))
    loans = body["data"]["loans"]
    assert any(OFFSET_DATE_TIME.match(loan["dueDate"]) for loan in loans)
    shelf = orders_by_status(body)["At reservation shelf"]
    assert shelf["pickUpExpiryDate"]
    assert any(OFFSET_DATE_TIME.match(o["orderDate"]) for o in body["data"]["orders"])


async def test_user_authentication_failed_as_recorded(library_sandbox, client):
    library_sandbox.refuse_patron(JONAS)
    token = library_sandbox.issue_token(JONAS)
    assert await get(client, library_sandbox, "/v3/user", token) == RECORDED_USER_FAILED


async def test_renew_as_recorded(library_sandbox, client):
    token = library_sandbox.issue_token(JONAS)
    [loan] = library_sandbox.patron_data(JONAS).loans
    body = await get(client, library_sandbox, "/v3/renew", token, loanId=json.dumps(loan["loanId"]))
    assert shape(body) == shape(RECORDED_RENEWED)
    assert OFFSET_DATE_TIME.match(body["data"]["returnDate"])
    failed = await get(client, library_sandbox, "/v3/renew", token, loanId="non-existing")
    assert failed == RECORDED_RENEW_FAILED


async def test_order_as_recorded(library_sandbox, client):
    token = library_sandbox.issue_token(OLE)
    invalid = await get(client, library_sandbox, "/v3/order", token, pids="[]")
    assert invalid == RECORDED_ORDER_INVALID
    placed = await get(
        client, library_sandbox, "/v3/order", token,
        pids='["870970-basis:22871420"]', pickUpBranch="DK-751000",
    )  # fmt: skip
    assert shape(placed) == shape(RECORDED_ORDERED)


async def test_cancel_with_a_long_base64_order_id_as_recorded(library_sandbox, client):
    token = library_sandbox.issue_token(KAREN)
    dune = next(o for o in library_sandbox.patron_data(KAREN).orders if o["title"] == "Dune")
    order_id = dune["orderId"]
    assert order_id.startswith("NCIP") and order_id.endswith("==") and len(order_id) > 64
    assert b"|" in base64.b64decode(order_id[4:], validate=True)
    body = await get(
        client, library_sandbox, "/v3/order", token,
        orderId=order_id, orderType="normal", delete="true",
    )  # fmt: skip
    assert shape(body) == shape(RECORDED_CANCELLED)
    assert body["data"] == {"deleted": True, "orderId": order_id}
