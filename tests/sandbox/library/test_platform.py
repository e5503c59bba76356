"""The data platform v3 (spec 2.5, 2.6, 4.3) and the production notes' other endpoints."""

from __future__ import annotations

import base64
import json
import re
from datetime import date, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.library.models import parse_library_date
from sandbox.library import LibrarySandbox
from tests.fixtures.patrons import JONAS, KAREN, METTE, OLE
from tests.sandbox.library.helpers import anonymous_token

TZ = ZoneInfo("Europe/Copenhagen")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
WITH_OFFSET = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$")
ZULU = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")

LOAN_FIELDS = {"loanId", "dueDate", "title", "creator", "materialId", "titleId"}
ORDER_FIELDS = {
    "orderId", "orderType", "status", "pickUpAgency", "holdQueuePosition", "creator", "title",
    "orderDate", "titleId",
}  # fmt: skip
DEBT_FIELDS = {"amount", "currency", "date", "title"}


async def get(client, sandbox: LibrarySandbox, path: str, token: str | None, **params):
    if token is not None:
        params["access_token"] = token
    return await client.get(f"{sandbox.urls.platform}{path}", params=params)


async def user(client, sandbox: LibrarySandbox, user_id: str) -> dict:
    response = await get(client, sandbox, "/v3/user", sandbox.issue_token(user_id))
    assert response.status_code == 200
    body = response.json()
    assert body["statusCode"] == 200
    return body["data"]


def day_of(text: str) -> date:
    parsed = parse_library_date(text, TZ)
    assert isinstance(parsed, date), text
    return parsed


async def test_borrower_status_fields_and_types(library_sandbox, client):
    debt_dates = set()
    for patron in library_sandbox.patrons:
        data = await user(client, library_sandbox, patron.user_id)
        for name in ("id", "name", "address", "postalCode", "mail", "ddbcmsapi", "agency"):
            assert isinstance(data[name], str) and data[name], name
        assert data["agency"].isdigit()
        assert data["ddbcmsapi"].startswith("https://") and "libcmsapi" not in data
        assert data["name"] == patron.name
        for loan in data["loans"]:
            assert set(loan) == LOAN_FIELDS
            assert all(isinstance(value, str) for value in loan.values())
        for order in data["orders"]:
            optional = {"pickUpExpiryDate", "pickUpId", "holdQueuePosition"}
            assert ORDER_FIELDS - optional <= set(order) <= ORDER_FIELDS | optional
            if order["status"] == "At reservation shelf":
                assert "holdQueuePosition" not in order and "pickUpExpiryDate" in order
            else:
                assert order["holdQueuePosition"].isdigit()
            assert all(isinstance(value, str) for value in order.values())
            assert re.fullmatch(r"DK-\d+", order["pickUpAgency"])
            assert WITH_OFFSET.match(order["orderDate"]) or ZULU.match(order["orderDate"])
        for debt in data["debt"]:
            assert set(debt) == DEBT_FIELDS
            assert all(isinstance(value, str) for value in debt.values())
            assert debt["currency"] == "DKK"
            # Either recorded form: a date-time with offset, or the plain date user.js makes.
            assert WITH_OFFSET.match(debt["date"]) or DATE.match(debt["date"])
            debt_dates.add("plain" if DATE.match(debt["date"]) else "time")
        assert "author" not in json.dumps(data)
    assert debt_dates == {"plain", "time"}


async def test_karen_has_the_documented_mix(library_sandbox, client):
    data = await user(client, library_sandbox, KAREN)
    today = library_sandbox.today
    offsets = sorted((day_of(loan["dueDate"]) - today).days for loan in data["loans"])
    assert offsets[:4] == [-2, 0, 1, 3] and 20 in offsets and len(offsets) == 7
    titles = " ".join(loan["title"] for loan in data["loans"])
    for char in "&<_*ÆØÅæøå":
        assert char in titles + " ".join(loan["creator"] for loan in data["loans"]), char
    assert "Rødt & sort <2. udgave>" in titles and "Snak_om_*stjerner*" in titles
    statuses = {order["status"]: order for order in data["orders"]}
    assert set(statuses) == {"Available for pickup", "At reservation shelf", "In process", "Active"}
    ready = statuses["Available for pickup"]
    assert ready["pickUpId"] and day_of(ready["pickUpExpiryDate"]) > today
    assert int(statuses["Active"]["holdQueuePosition"]) > 1
    amounts = [debt["amount"] for debt in data["debt"]]
    assert "45.50" in amounts


async def test_dates_come_in_all_production_shapes(library_sandbox, client):
    data = await user(client, library_sandbox, KAREN)
    dues = [loan["dueDate"] for loan in data["loans"]]
    assert any(DATE.match(d) for d in dues)
    assert any(WITH_OFFSET.match(d) for d in dues)
    assert any(ZULU.match(d) for d in dues)
    mette = await user(client, library_sandbox, METTE)
    odd = [
        loan["dueDate"]
        for loan in mette["loans"]
        if not (DATE.match(loan["dueDate"]) or "T" in loan["dueDate"])
    ]
    assert len(odd) == 1 and re.fullmatch(r"\d{2}/\d{2}/\d{4}", odd[0])


async def test_other_patrons(library_sandbox, client):
    ole = await user(client, library_sandbox, OLE)
    assert ole["loans"] == [] and ole["orders"] == []
    assert len(ole["debt"]) == 1 and ole["debt"][0]["amount"] == "0"
    mette = await user(client, library_sandbox, METTE)
    assert len(mette["loans"]) == 65
    assert len({loan["loanId"] for loan in mette["loans"]}) == 65
    jonas = await user(client, library_sandbox, JONAS)
    assert [(day_of(x["dueDate"]) - library_sandbox.today).days for x in jonas["loans"]] == [3]
    assert [order["status"] for order in jonas["orders"]] == ["Available for pickup"]


async def test_patron_data_is_live(library_sandbox, client):
    library_sandbox.patron_data(OLE).loans.append(
        {"loanId": "1", "dueDate": "2030-01-01", "title": "T", "creator": "C",
         "materialId": "m", "titleId": "t"}
    )  # fmt: skip
    data = await user(client, library_sandbox, OLE)
    assert [loan["loanId"] for loan in data["loans"]] == ["1"]


async def test_pretty_output(library_sandbox, client):
    response = await get(
        client, library_sandbox, "/v3/user", library_sandbox.issue_token(OLE),
        pretty="true",
    )  # fmt: skip
    assert response.text.startswith('{\n  "statusCode": 200')


async def test_bearer_header_works_but_not_both(library_sandbox, client):
    token = library_sandbox.issue_token(KAREN)
    url = f"{library_sandbox.urls.platform}/v3/user"
    header = {"Authorization": f"Bearer {token}"}
    assert (await client.get(url, headers=header)).status_code == 200
    both = await client.get(url, headers=header, params={"access_token": token})
    assert both.status_code == 400
    assert both.json()["statusCode"] == 400 and isinstance(both.json()["error"], str)


async def test_only_an_exact_bearer_scheme_carries_the_token(library_sandbox, client):
    """serviceprovider's `checkAuthHeader` takes the token only after exactly `Bearer`."""
    token = library_sandbox.issue_token(KAREN)
    url = f"{library_sandbox.urls.platform}/v3/user"
    for scheme in ("bearer", "BEARER", "Token"):
        response = await client.get(url, headers={"Authorization": f"{scheme} {token}"})
        assert response.status_code == 401, scheme  # as if no token was sent


@pytest.mark.parametrize("agency", ["abc", "dk-710100", "710100x", "７１０１００"])
async def test_holdingsitems_wants_a_number_for_agency(library_sandbox, client, agency):
    """holdingsitems.js drops an upper-case `DK-` only; the rest must be digits."""
    token = library_sandbox.issue_token(KAREN)
    response = await get(
        client, library_sandbox, "/v3/holdingsitems", token, agency=json.dumps(agency),
        pids=json.dumps(["870970-basis:27015794"]),
    )  # fmt: skip
    assert response.status_code == 400
    assert response.json()["error"] == "Agency is not a number"
    good = await get(
        client, library_sandbox, "/v3/holdingsitems", token, agency=json.dumps("DK-710100"),
        pids=json.dumps(["870970-basis:27015794"]),
    )  # fmt: skip
    assert good.status_code == 200


@pytest.mark.parametrize("kind", ["expired", "unknown", "missing"])
async def test_bad_tokens_are_401_invalid_token(library_sandbox, client, kind):
    token: str | None = library_sandbox.issue_token(KAREN)
    if kind == "expired":
        library_sandbox.expire_token(token)
    elif kind == "unknown":
        token = "deadbeef"
    else:
        token = None
    response = await get(client, library_sandbox, "/v3/user", token)
    assert response.status_code == 401
    body = response.json()
    if kind == "missing":  # smaug's MissingTokenError
        assert body == {
            "statusCode": 401,
            "error": "invalid_request",
            "error_description": "Missing access tokens in the request",
        }
    else:
        assert body["statusCode"] == 401 and body["error"] == "invalid_token"
        assert body["error_description"] == "The access token expired"


async def test_expire_all_tokens_and_token_lifetime(library_sandbox, client):
    short = library_sandbox.issue_token(KAREN, expires_in=0)
    assert (await get(client, library_sandbox, "/v3/user", short)).status_code == 401
    token = library_sandbox.issue_token(KAREN)
    library_sandbox.expire_all_tokens()
    assert (await get(client, library_sandbox, "/v3/user", token)).status_code == 401


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"pickUpBranch": "DK-710100"}, "missing pids parameter"),
        ({"pids": "[]", "pickUpBranch": "DK-710100"}, "missing pids parameter"),
        ({"pids": '["870970-basis:22871420"]'}, "pickUpBranch must be provided"),
        (
            {"pids": '["870970-basis:22871420"]', "pickUpBranch": "710100"},
            "pickUpBranch is not of a type(s) string",
        ),
        ({"pids": "[870970]", "pickUpBranch": "DK-710100"}, "pids[0] is not of a type(s) string"),
        (
            {"pids": '["870970-basis:22871420"]', "pickUpBranch": "DK-710100", "limit": "1"},
            ' additionalProperty "limit" exists in instance when not allowed',
        ),
    ],
)
async def test_order_validation(library_sandbox, client, params, error):
    token = library_sandbox.issue_token(OLE)
    response = await get(client, library_sandbox, "/v3/order", token, **params)
    assert response.status_code == 400
    assert response.json() == {"statusCode": 400, "error": error}
    assert (await user(client, library_sandbox, OLE))["orders"] == []


async def test_a_lone_pid_is_wrapped_in_a_list(library_sandbox, client):
    """Where the platform's spec says list, a lone query value is wrapped in one."""
    token = library_sandbox.issue_token(OLE)
    response = await get(
        client, library_sandbox, "/v3/order", token,
        pids="870970-basis:22871420", pickUpBranch="DK-710100",
    )  # fmt: skip
    assert response.json()["data"]["status"] == "ok"


async def order(client, sandbox: LibrarySandbox, token: str, faust: str, branch: str):
    return await get(
        client, sandbox, "/v3/order", token,
        pids=json.dumps([f"870970-basis:{faust}"]), pickUpBranch=json.dumps(branch),
    )  # fmt: skip


async def test_order_is_placed_and_shows_up_as_a_hold(library_sandbox, client):
    token = library_sandbox.issue_token(OLE)
    response = await order(client, library_sandbox, token, "22871420", "DK-710104")
    assert response.status_code == 200
    body = response.json()
    assert body["statusCode"] == 200
    assert body["data"]["status"] == "ok"
    ors_id = body["data"]["orsId"]
    assert isinstance(ors_id, str) and ors_id.isdigit()
    orders = (await user(client, library_sandbox, OLE))["orders"]
    assert len(orders) == 1
    hold = orders[0]
    assert hold["title"] == "1984" and hold["creator"] == "George Orwell"
    assert hold["pickUpAgency"] == "DK-710104" and hold["status"] == "In process"
    # The order system's id (orsId) is not the id the user status knows the order by.
    order_id = hold["orderId"]
    assert order_id != ors_id and order_id.startswith("NCIP") and order_id.endswith("==")
    assert base64.b64decode(order_id[4:])
    # Ordering it again is the order system's business: it is placed again.
    again = await order(client, library_sandbox, token, "22871420", "DK-710104")
    assert again.status_code == 200

    cancel = await get(
        client, library_sandbox, "/v3/order", token,
        orderId=order_id, orderType="normal", delete="true",
    )  # fmt: skip
    assert cancel.status_code == 200
    assert cancel.json() == {"statusCode": 200, "data": {"deleted": True, "orderId": order_id}}
    assert len((await user(client, library_sandbox, OLE))["orders"]) == 1
    gone = await get(
        client, library_sandbox, "/v3/order", token,
        orderId=order_id, orderType="normal", delete="true",
    )  # fmt: skip
    assert gone.status_code == 500
    assert gone.json() == {"statusCode": 500, "error": "Unknown Request"}


async def test_orders_are_asynchronous(client):
    now = [1000.0]
    async with LibrarySandbox(order_delay=5, clock=lambda: now[0]) as sandbox:
        token = sandbox.issue_token(OLE)
        placed = await order(client, sandbox, token, "22871420", "DK-710104")
        assert placed.json()["data"]["status"] == "ok"
        assert (await user(client, sandbox, OLE))["orders"] == []
        now[0] += 4.9
        assert (await user(client, sandbox, OLE))["orders"] == []
        now[0] += 0.2
        [hold] = (await user(client, sandbox, OLE))["orders"]
        assert hold["title"] == "1984" and hold["status"] == "In process"


async def test_order_refusals_use_the_order_systems_reasons(library_sandbox, client):
    token = library_sandbox.issue_token(KAREN)
    own = await order(client, library_sandbox, token, "27015794", "DK-710100")
    assert own.status_code == 500
    body = own.json()
    assert body["statusCode"] == 500 and body["error"] == "owned_own_catalogue"
    assert body["orderUrl"].startswith("https://") and "27015794" in body["orderUrl"]
    # The library has it, so at any of its branches; another library's branch takes it.
    branch = await order(client, library_sandbox, token, "27015794", "DK-710104")
    assert branch.json()["error"] == "owned_own_catalogue"
    elsewhere = await order(client, library_sandbox, token, "27015794", "DK-751000")
    assert elsewhere.status_code == 200 and elsewhere.json()["data"]["status"] == "ok"
    for branch in ("DK-710100", "DK-751000"):
        net = await order(client, library_sandbox, token, "51371213", branch)
        assert net.json() == {"statusCode": 500, "error": "owned_wrong_mediumType"}
    for branch in ("DK-123456", "DK-12", "710999"):
        bad = await order(client, library_sandbox, token, "22871420", branch)
        assert bad.status_code == 500
        assert bad.json() == {"statusCode": 500, "error": "unknown_pickupAgency"}
    unknown = await order(client, library_sandbox, token, "00000000", "DK-710100")
    assert unknown.json() == {"statusCode": 500, "error": "not_owned_no_ILL_loc"}
    anonymous = await order(
        client, library_sandbox, await anonymous_token(client, library_sandbox),
        "22871420", "DK-710100",
    )  # fmt: skip
    assert anonymous.status_code == 403


async def test_order_system_down(library_sandbox, client):
    library_sandbox.faults.down.add("orders")
    token = library_sandbox.issue_token(OLE)
    response = await order(client, library_sandbox, token, "22871420", "DK-710100")
    assert response.status_code == 503
    assert response.json() == {"statusCode": 503, "error": "service_unavailable"}
    assert (await get(client, library_sandbox, "/v3/user", token)).status_code == 200


async def test_renew_counts_from_today(library_sandbox, client):
    token = library_sandbox.issue_token(KAREN)
    loans = library_sandbox.patron_data(KAREN).loans
    later = next(loan for loan in loans if loan["title"] == "Den afrikanske farm")
    assert day_of(later["dueDate"]) == library_sandbox.today + timedelta(days=20)
    response = await get(
        client, library_sandbox, "/v3/renew", token, loanId=json.dumps(later["loanId"])
    )
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["loanId"] == later["loanId"]
    assert WITH_OFFSET.match(data["returnDate"])
    new_due = library_sandbox.today + timedelta(days=30)
    assert data["returnDate"].startswith(f"{new_due.isoformat()}T00:00:00+")
    assert day_of(later["dueDate"]) == new_due
    overdue = loans[0]
    renewed = await get(
        client, library_sandbox, "/v3/renew", token, loanId=json.dumps(overdue["loanId"])
    )
    assert day_of(renewed.json()["data"]["returnDate"]) == new_due


async def test_renew_refused_for_a_reserved_loan(library_sandbox, client):
    token = library_sandbox.issue_token(KAREN)
    loans = (await user(client, library_sandbox, KAREN))["loans"]
    refused = next(loan for loan in loans if loan["title"] == "Kongens fald")
    response = await get(
        client, library_sandbox, "/v3/renew", token, loanId=json.dumps(refused["loanId"])
    )
    assert response.status_code == 500
    assert response.json() == {
        "statusCode": 500,
        "error": "Renewal Not Allowed - Item Has Outstanding Requests",
    }
    missing = await get(client, library_sandbox, "/v3/renew", token)
    assert missing.status_code == 400
    assert missing.json()["error"] == ' requires property "loanId"'
    unknown = await get(client, library_sandbox, "/v3/renew", token, loanId="non-existing")
    assert unknown.json() == {"statusCode": 500, "error": "Agency authentication failed"}


async def test_an_all_digit_loan_id_goes_as_a_json_string(library_sandbox, client):
    """The platform runs `JSON.parse` on every query value: bare digits are a number, which its
    spec refuses for `loanId`; quoted, the same id renews."""
    token = library_sandbox.issue_token(JONAS)
    [loan] = library_sandbox.patron_data(JONAS).loans
    assert loan["loanId"].isdigit()
    bare = await get(client, library_sandbox, "/v3/renew", token, loanId=loan["loanId"])
    assert bare.status_code == 400
    assert bare.json() == {"statusCode": 400, "error": "loanId is not of a type(s) string"}
    assert library_sandbox.patron_data(JONAS).renewals == {}
    quoted = await get(
        client, library_sandbox, "/v3/renew", token, loanId=json.dumps(loan["loanId"])
    )
    assert quoted.json()["data"]["loanId"] == loan["loanId"]


async def test_renewals_stop_at_the_maximum(library_sandbox, client):
    token = library_sandbox.issue_token(JONAS)
    [loan] = library_sandbox.patron_data(JONAS).loans
    for _ in range(3):
        ok = await get(
            client, library_sandbox, "/v3/renew", token, loanId=json.dumps(loan["loanId"])
        )
        assert ok.status_code == 200
    refused = await get(
        client, library_sandbox, "/v3/renew", token, loanId=json.dumps(loan["loanId"])
    )
    assert refused.json() == {"statusCode": 500, "error": "Maximum Renewals Exceeded"}
    # Karen's loan due today has used its renewals already.
    karen = library_sandbox.issue_token(KAREN)
    stars = next(
        x for x in library_sandbox.patron_data(KAREN).loans if x["title"].startswith("Snak")
    )
    used = await get(
        client, library_sandbox, "/v3/renew", karen, loanId=json.dumps(stars["loanId"])
    )
    assert used.json()["error"] == "Maximum Renewals Exceeded"


async def test_renew_a_loan_with_the_foreign_date_format(library_sandbox, client):
    token = library_sandbox.issue_token(METTE)
    odd = next(x for x in library_sandbox.patron_data(METTE).loans if "/" in x["dueDate"])
    response = await get(
        client, library_sandbox, "/v3/renew", token, loanId=json.dumps(odd["loanId"])
    )
    new_due = library_sandbox.today + timedelta(days=30)
    assert day_of(response.json()["data"]["returnDate"]) == new_due


async def test_a_patron_the_library_system_refuses(library_sandbox, client):
    library_sandbox.refuse_patron(OLE)
    token = library_sandbox.issue_token(OLE)
    response = await get(client, library_sandbox, "/v3/user", token)
    assert response.status_code == 500
    assert response.json() == {"statusCode": 500, "error": "User authentication failed"}


async def test_work_has_list_valued_fields(library_sandbox, client):
    token = await anonymous_token(client, library_sandbox)
    pids = ["870970-basis:27247164", "870970-basis:22871420"]
    response = await get(client, library_sandbox, "/v3/work", token, pids=json.dumps(pids))
    assert response.status_code == 200
    works = response.json()["data"]
    assert [work["pid"] for work in works] == [[pid] for pid in pids]
    for work in works:
        for name in ("pid", "title", "creator", "date", "type"):
            assert isinstance(work[name], list) and all(isinstance(v, str) for v in work[name])
    assert works[0]["title"] == ["Den afrikanske farm"]
    # Covers only when `fields` names them, as the platform's spec says.
    assert not any(name.startswith("cover") for work in works for name in work)
    fields = json.dumps(["pid", "coverUrl117"])
    covered = await get(
        client, library_sandbox, "/v3/work", token, pids=json.dumps(pids), fields=fields
    )
    without, with_cover = covered.json()["data"]  # the first has no cover (one in seven)
    assert set(without) == {"pid"} and set(with_cover) == {"pid", "coverUrl117"}
    assert with_cover["coverUrl117"][0].startswith("//")
    twenty = json.dumps([f"870970-basis:{n:08d}" for n in range(20)])
    assert (await get(client, library_sandbox, "/v3/work", token, pids=twenty)).status_code == 200
    too_many = json.dumps([f"870970-basis:{n:08d}" for n in range(21)])
    refused = await get(client, library_sandbox, "/v3/work", token, pids=too_many)
    assert refused.json() == {"statusCode": 400, "error": "pids does not meet maximum length of 20"}
    missing = await get(client, library_sandbox, "/v3/work", token)
    assert missing.json() == {"statusCode": 400, "error": "'pids' not present in request"}


async def test_search(library_sandbox, client):
    token = library_sandbox.issue_token(KAREN)  # a patron token works too
    response = await get(client, library_sandbox, "/v3/search", token, q="BLIXEN")
    assert response.status_code == 200
    body = response.json()
    assert body["statusCode"] == 200 and body["hitCount"] == 2
    assert {work["title"][0] for work in body["data"]} == {
        "Den afrikanske farm",
        "Babettes gæstebud",
    }
    assert all(work["pid"][0].startswith("870970-basis:") for work in body["data"])
    danish = await get(client, library_sandbox, "/v3/search", token, q="ælling")
    assert danish.json()["hitCount"] == 1
    cql = await get(
        client, library_sandbox, "/v3/search", token, q='term.creator="adler-olsen" and kvinden'
    )
    assert cql.json()["hitCount"] == 2
    page = await get(client, library_sandbox, "/v3/search", token, q="adler", limit="1", offset="1")
    assert page.json()["hitCount"] == 3 and len(page.json()["data"]) == 1
    none = await get(client, library_sandbox, "/v3/search", token, q="zzzz")
    assert none.json() == {"statusCode": 200, "data": [], "hitCount": 0}
    for bad in ({"q": "x", "limit": "51"}, {"q": "x", "limit": "ten"}, {}):
        refused = await get(client, library_sandbox, "/v3/search", token, **bad)
        assert refused.status_code == 400 and refused.json()["statusCode"] == 400
    assert (
        await get(client, library_sandbox, "/v3/search", token, q="x", limit="50")
    ).status_code == 200


async def test_libraries(library_sandbox, client):
    token = await anonymous_token(client, library_sandbox)
    response = await get(
        client, library_sandbox, "/v3/libraries", token, agencyIds='["710100","DK-751000"]'
    )
    assert response.status_code == 200
    branches = response.json()["data"]
    assert {branch["agencyId"] for branch in branches} == {"710100", "751000"}
    assert len(branches) >= 4
    main = next(b for b in branches if b["branchId"] == "710100")
    assert main["branchName"] == ["Københavns Hovedbibliotek"] and main["isil"] == "DK-710100"
    # As recorded: digit ids, ISIL beside them, "1"/"0" flags, lists of texts.
    assert all(re.fullmatch(r"\d{6}", b["branchId"]) for b in branches)
    assert all(b["isil"] == f"DK-{b['branchId']}" for b in branches)
    assert all(b["pickupAllowed"] in ("1", "0") for b in branches)
    assert all(b["temporarilyClosed"] in ("1", "0") for b in branches)
    assert all(isinstance(b["openingHours"], list) for b in branches)
    # `branchIds` asks for branches, by id or ISIL, whatever library they belong to.
    asked = await get(
        client, library_sandbox, "/v3/libraries", token, branchIds='["DK-710104","751003"]'
    )
    assert [b["branchId"] for b in asked.json()["data"]] == ["710104", "751003"]
    # A lone id is wrapped in a list; bare digits are a number, which the spec refuses.
    lone = await get(client, library_sandbox, "/v3/libraries", token, branchIds='"710104"')
    assert [b["branchId"] for b in lone.json()["data"]] == ["710104"]
    bare = await get(client, library_sandbox, "/v3/libraries", token, branchIds="710104")
    assert bare.json() == {"statusCode": 400, "error": "branchIds[0] is not of a type(s) string"}


async def test_unknown_endpoint_is_404_envelope(library_sandbox, client):
    for path in ("/v3/nothing", "/", "/v2/user"):
        response = await client.get(f"{library_sandbox.urls.platform}{path}")
        assert response.status_code == 404
        assert response.json() == {"statusCode": 404, "error": "404 Not Found"}
