"""Contract tests: the client against answers shaped exactly as the platform's recorded ones.

The bodies follow `DBCDK/serviceprovider`'s `src/transformers/__tests__/*.auto.js` and
`*.snapshot.js` (what a client received from the live platform), written out here by hand.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs

import pytest
from aiohttp import web

from bot.library.client import LibraryClient
from bot.library.errors import ClientFault, OrderRefused, Refused, ServiceUnavailable

# user_userinfo_userdata_userloan_userorder_userfiscal_spec_set.auto.js
USER_WITH_LOANS = {
    "statusCode": 200,
    "data": {
        "id": "0EvLbHAPkNavGf68am7XTMxMZqg0mOKb",
        "name": "Anders Villadsen",
        "address": "Palle Juul-Jensens Boulevard 115",
        "postalCode": "8200",
        "loans": [
            {
                "loanId": "120200553",
                "dueDate": "2020-01-24T00:00:00+01:00",
                "title": "One Direction: den officielle årbog 2014",
                "creator": "Delmege, Sarah",
                "materialId": "9788771312492",
                "titleId": "51098838",
            }
        ],
        "orders": [],
        "debt": [
            {"amount": "224", "currency": "DKK", "date": "1970-01-01T00:00:00+01:00", "title": ""},
            {"amount": "50", "currency": "DKK", "date": "1970-01-01T00:00:00+01:00", "title": ""},
        ],
        "ddbcmsapi": "https://cmscontent.dbc.dk/",
        "agency": "790900",
    },
}

# user_userinfo_userdata_userloan_userorder_spec_set.auto.js (the orders part)
USER_WITH_ORDERS = {
    "statusCode": 200,
    "data": {
        "id": "4TXozSGMOycrE1BhPudNFslbOI3OJO6x",
        "name": "Michelle Hoffmann",
        "address": "Kornbakke Allé 13",
        "postalCode": "8200",
        "loans": [],
        "orders": [
            {
                "orderId": "378",
                "orderType": "normal",
                "status": "At reservation shelf",
                "pickUpAgency": "DK-790900",
                "creator": "Norton, Mary",
                "title": "Lånerne flytter ud",
                "orderDate": "2020-04-23T20:18:23+02:00",
                "pickUpExpiryDate": "2020-05-07T00:00:00+02:00",
                "titleId": "01191748",
            },
            {
                "orderId": "379",
                "orderType": "normal",
                "status": "Active",
                "pickUpAgency": "DK-790900",
                "holdQueuePosition": "1",
                "creator": "Brooke, Lauren",
                "title": "Efter uvejret",
                "orderDate": "2020-04-23T20:18:23+02:00",
                "titleId": "23424916",
            },
        ],
        "debt": [],
        "ddbcmsapi": "https://cmscontent.dbc.dk/",
        "agency": "790900",
    },
}

# user_fail.snapshot.js
USER_FAIL = {"statusCode": 500, "error": "User authentication failed"}
LOAN_ID = "NCIPMDAxOXwwMDAwMDMyNDg0fFJvc2VuLCBNaWNoYWVsfFNtdXR8fHw="
# renew_existing_loanid.snapshot.js / renew_non_existing_loanid.snapshot.js
RENEWED = {
    "statusCode": 200,
    "data": {"loanId": LOAN_ID, "returnDate": "2017-01-01T00:00:00+01:00"},
}
RENEW_FAIL = {"statusCode": 500, "error": "Agency authentication failed"}
# order_single_pid_ordered.snapshot.js / order_no_pids_in_pidlist.snapshot.js
ORDERED = {"statusCode": 200, "data": {"status": "ok", "orsId": "1038568839"}}
NO_PIDS = {"statusCode": 400, "error": "missing pids parameter"}
# placeOrder.js: an owned_own_catalogue refusal carries the library's lookup URL.
OWN_CATALOGUE = {
    "statusCode": 500,
    "error": "owned_own_catalogue",
    "orderUrl": "https://www.roskildebib.dk/search/ting/id%3d870970-basis%3A27015794",
}
# order_delete_existing_order.snapshot.js
ORDER_ID = (
    "NCIPMDAxOXwyNy0wNS0yMDE2IDEwOjA0OjAyfEdlcmxvdywgSmVhbmV0dGUgJk9zbGFzaDticm98RGV0ICZt"
    "aWRkb3Q7bm9yc2tlIGpvYnx8fA=="
)
DELETED = {"statusCode": 200, "data": {"deleted": True, "orderId": ORDER_ID}}
# libraries_isil_request.snapshot.js (the fields the bot reads, and a few it ignores)
LIBRARIES = {
    "statusCode": 200,
    "data": [
        {
            "agencyName": "Roskilde Bibliotekerne",
            "agencyId": "726500",
            "branchId": "726500",
            "branchType": "H",
            "branchName": ["Roskilde Bibliotek", "Roskilde Libraries"],
            "isil": "DK-726500",
            "branchCatalogueUrl": "https://www.roskildebib.dk/search",
            "pickupAllowed": "1",
            "temporarilyClosed": "0",
            "geolocation": {"latitude": 55.64191, "longitude": 12.087845},
        }
    ],
}


class Recorded:
    """A platform on loopback that answers each path with one recorded body (HTTP status =
    statusCode), and keeps the query of every request."""

    def __init__(self, answers: dict[str, dict[str, Any]]) -> None:
        self.answers = answers
        self.queries: list[dict[str, list[str]]] = []

    async def answer(self, request: web.Request) -> web.Response:
        self.queries.append(parse_qs(request.query_string))
        body = self.answers[request.path]
        return web.json_response(body, status=int(body["statusCode"]))


@pytest.fixture
async def recorded() -> AsyncIterator[tuple[Recorded, LibraryClient]]:
    platform = Recorded({})
    app = web.Application()
    app.router.add_route("*", "/{path:.*}", platform.answer)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    url = f"http://127.0.0.1:{port}"
    client = LibraryClient(
        oauth_url=url, auth_url=url, platform_url=url, client_id="c", client_secret="s"
    )
    try:
        yield platform, client
    finally:
        await client.aclose()
        await runner.cleanup()


async def test_user_with_ddbcmsapi_and_date_times_with_offsets(
    recorded: tuple[Recorded, LibraryClient],
) -> None:
    platform, client = recorded
    platform.answers["/v3/user"] = USER_WITH_LOANS
    status = await client.user("t")
    assert status.ddbcmsapi == "https://cmscontent.dbc.dk/"
    assert status.agency == "790900"
    [loan] = status.loans
    assert loan.due_date == dt.date(2020, 1, 24)
    assert loan.material_id == "9788771312492"
    assert [item.amount for item in status.debt] == ["224", "50"]


async def test_user_with_a_hold_at_the_reservation_shelf(
    recorded: tuple[Recorded, LibraryClient],
) -> None:
    platform, client = recorded
    platform.answers["/v3/user"] = USER_WITH_ORDERS
    status = await client.user("t")
    shelf, queued = status.orders
    assert shelf.status == "At reservation shelf"
    assert shelf.pick_up_expiry_date == dt.date(2020, 5, 7)
    assert shelf.hold_queue_position is None
    assert queued.hold_queue_position == "1"
    assert queued.order_date == dt.date(2020, 4, 23)


async def test_user_authentication_failed(recorded: tuple[Recorded, LibraryClient]) -> None:
    platform, client = recorded
    platform.answers["/v3/user"] = USER_FAIL
    with pytest.raises(ServiceUnavailable) as caught:
        await client.user("t")
    assert caught.value.code == "User authentication failed"
    assert caught.value.status == 500


async def test_renew_with_a_date_time_return_date(
    recorded: tuple[Recorded, LibraryClient],
) -> None:
    platform, client = recorded
    platform.answers["/v3/renew"] = RENEWED
    result = await client.renew("t", LOAN_ID)
    assert result.loan_id == LOAN_ID
    assert result.return_date == dt.date(2017, 1, 1)
    assert platform.queries[-1]["loanId"] == [json.dumps(LOAN_ID)]  # a JSON string


async def test_renew_refused_with_free_text(recorded: tuple[Recorded, LibraryClient]) -> None:
    platform, client = recorded
    platform.answers["/v3/renew"] = RENEW_FAIL
    with pytest.raises(Refused) as caught:
        await client.renew("t", "non-existing")
    assert caught.value.code == "Agency authentication failed"


async def test_order_ok_and_missing_pids(recorded: tuple[Recorded, LibraryClient]) -> None:
    platform, client = recorded
    platform.answers["/v3/order"] = ORDERED
    result = await client.order("t", ["870970-basis:27015794"], "DK-710104")
    assert result.ok and result.ors_id == "1038568839"
    assert json.loads(platform.queries[-1]["pids"][0]) == ["870970-basis:27015794"]
    # The platform's 400 is the bot's fault, never the library's answer: no reason to show.
    platform.answers["/v3/order"] = NO_PIDS
    with pytest.raises(ClientFault) as caught:
        await client.order("t", [], "DK-710104")
    assert caught.value.code == "client_fault" and caught.value.status == 400


async def test_an_order_is_placed_only_when_status_is_ok(
    recorded: tuple[Recorded, LibraryClient],
) -> None:
    platform, client = recorded
    platform.answers["/v3/order"] = {"statusCode": 200, "data": {"status": "not_ok"}}
    with pytest.raises(OrderRefused) as caught:
        await client.order("t", ["870970-basis:27015794"], "DK-710104")
    assert caught.value.code == "not_ok"
    platform.answers["/v3/order"] = {"statusCode": 200, "data": {"orsId": "1"}}
    with pytest.raises(OrderRefused) as missing:
        await client.order("t", ["870970-basis:27015794"], "DK-710104")
    assert missing.value.code == "order not placed"


async def test_owned_own_catalogue_keeps_the_order_url(
    recorded: tuple[Recorded, LibraryClient],
) -> None:
    platform, client = recorded
    platform.answers["/v3/order"] = OWN_CATALOGUE
    with pytest.raises(OrderRefused) as caught:
        await client.order("t", ["870970-basis:27015794"], "DK-710100")
    assert caught.value.code == "owned_own_catalogue"
    assert caught.value.url == OWN_CATALOGUE["orderUrl"]


async def test_cancel_with_a_long_base64_order_id(
    recorded: tuple[Recorded, LibraryClient],
) -> None:
    platform, client = recorded
    platform.answers["/v3/order"] = DELETED
    result = await client.cancel_order("t", ORDER_ID, "Hold")
    assert result.deleted and result.order_id == ORDER_ID
    assert platform.queries[-1]["orderId"] == [json.dumps(ORDER_ID)]


async def test_libraries_as_recorded(recorded: tuple[Recorded, LibraryClient]) -> None:
    platform, client = recorded
    platform.answers["/v3/libraries"] = LIBRARIES
    [branch] = await client.libraries("t", branch_ids=["DK-726500"])
    assert platform.queries[-1]["branchIds"] == ['["DK-726500"]']
    assert branch.branch_id == "726500"
    assert branch.branch_name == "Roskilde Bibliotek"
    assert branch.allows_pickup
    assert branch.branch_catalogue_url == "https://www.roskildebib.dk/search"
