"""Contract: requests the platform was recorded taking get answers of the recorded shape.

Each case is a request of serviceprovider's recorded tests (`src/transformers/__tests__`,
the `// Request:` and `AUTOTEST GENERATOR` lines), with the sandbox's own pids and ids in place
of the recorded ones, and what the recorded answer shows of its shape. They go as the
platform's POST transport takes them, a JSON body, so the sandbox's reading of a body is held
to the same line as its reading of a query.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from sandbox.library import LibrarySandbox
from tests.fixtures.patrons import KAREN, METTE

ONE = "870970-basis:22871420"  # "1984", with a cover
TWO = "870970-basis:27247164"  # "Den afrikanske farm", without one
DIGITS = re.compile(r"^\d+$")
COPY_FIELDS = {
    "bibliographicRecordId", "branch", "branchId", "circulationRule", "department", "issueId",
    "issueText", "itemId", "location", "note", "readyForLoan", "status", "subLocation",
}  # fmt: skip


@dataclass(frozen=True)
class Case:
    recorded: str  # the recorded test it follows
    endpoint: str
    body: Callable[[LibrarySandbox], dict[str, Any]]
    status: int
    check: Callable[[Any], bool]
    patron: str | None = KAREN  # None: the anonymous token


def _ncip(sandbox: LibrarySandbox, user_id: str, kind: str, key: str) -> str:
    return next(i[key] for i in getattr(sandbox.patron_data(user_id), kind) if i[key][:4] == "NCIP")


def _keys_within(allowed: set[str]) -> Callable[[Any], bool]:
    return lambda data: bool(data) and all(set(item) <= allowed for item in data)


CASES = [
    Case(
        "user_all_userinfo_no_spec_set.auto.js",
        "user",
        lambda s: {},
        200,
        lambda d: {"id", "name", "loans", "orders", "debt", "agency"} <= set(d),
    ),
    Case(
        "user_userinfo_userdata_userloan_spec_set.auto.js",
        "user",
        lambda s: {"userinfo": ["userData", "userLoan"]},
        200,
        lambda d: isinstance(d["loans"], list),
    ),
    Case(
        "renew_existing_loanid.snapshot.js",
        "renew",
        lambda s: {"loanId": _ncip(s, METTE, "loans", "loanId")},
        200,
        lambda d: set(d) == {"loanId", "returnDate"} and d["loanId"].startswith("NCIP"),
        patron=METTE,
    ),
    Case(
        "renew_non_existing_loanid.snapshot.js",
        "renew",
        lambda s: {"loanId": "non-existing"},
        500,
        lambda e: e == "Agency authentication failed",
    ),
    Case(
        "order_delete_existing_order.snapshot.js",
        "order",
        lambda s: {
            "orderId": _ncip(s, KAREN, "orders", "orderId"),
            "orderType": "normal",
            "delete": True,
        },
        200,
        lambda d: d["deleted"] is True and d["orderId"].startswith("NCIP"),
    ),
    Case(
        "order_multiple_pids_ordered.snapshot.js",
        "order",
        lambda s: {"pids": [ONE, TWO], "pickUpBranch": "DK-710104", "expires": "2099-01-01"},
        200,
        lambda d: d["status"] == "ok" and bool(DIGITS.match(d["orsId"])),
    ),
    Case(
        "order_no_pids_in_pidlist.snapshot.js",
        "order",
        lambda s: {"pretty": True, "pids": [], "expires": "2099-08-01"},
        400,
        lambda e: e == "missing pids parameter",
    ),
    Case(
        "order_past_date.snapshot.js",
        "order",
        lambda s: {"pids": [ONE], "expires": "2014-08-01", "pickUpBranch": "DK-710104"},
        400,
        lambda e: e == "The expire argument must be a future date",
    ),
    Case(
        "order_invalid_date.snapshot.js",
        "order",
        lambda s: {"pids": [ONE], "expires": "2016-018-01", "pickUpBranch": "DK-710104"},
        400,
        lambda e: e.startswith("The expires argument must be of the form YYYY-MM-DD"),
    ),
    Case(
        # Its `library` is no parameter of the platform's spec: over HTTP, the validator's 400.
        "order_single_pid_ordered.snapshot.js",
        "order",
        lambda s: {"pids": [ONE], "library": "DK-100451", "pickUpBranch": "DK-710104"},
        400,
        lambda e: e == ' additionalProperty "library" exists in instance when not allowed',
    ),
    Case(
        "work_single_pid_coverUrl.auto.js",
        "work",
        lambda s: {"pids": [ONE], "fields": ["coverUrlFull"]},
        200,
        lambda d: set(d[0]) == {"coverUrlFull"} and d[0]["coverUrlFull"][0].startswith("//"),
        patron=None,
    ),
    Case(
        "multiple_pids_in_pids_param.auto.js",
        "work",
        lambda s: {"fields": ["dcTitle", "creator", "pid"], "pids": [ONE, TWO]},
        200,
        lambda d: [w["pid"] for w in d] == [[ONE], [TWO]] and _keys_within({"creator", "pid"})(d),
        patron=None,
    ),
    Case(
        "work_no_pid_property.auto.js",
        "work",
        lambda s: {"fields": ["title", "dcTitle", "coverUrlFull", "collection"]},
        400,
        lambda e: e == "'pids' not present in request",
        patron=None,
    ),
    Case(
        "work_empty_pidlist.auto.js",
        "work",
        lambda s: {"pids": [], "fields": ["title", "dcTitle", "coverUrlFull", "collection"]},
        400,
        lambda e: e == "'pids' not present in request",
        patron=None,
    ),
    Case(
        "libraries_id_request.snapshot.js",
        "libraries",
        lambda s: {"agencyIds": ["710100"], "branchIds": ["710100"]},
        200,
        lambda d: (
            [(b["branchId"], b["agencyId"], b["isil"]) for b in d]
            == [("710100", "710100", "DK-710100")]
        ),
        patron=None,
    ),
    Case(
        "libraries_isil_request.snapshot.js",
        "libraries",
        lambda s: {
            "fields": ["agencyName"],
            "agencyIds": ["DK-710100"],
            "branchIds": ["DK-710100"],
        },
        200,
        lambda d: d == [{"agencyName": "Københavns Biblioteker"}],
        patron=None,
    ),
    Case(
        "libraries_branchIds.snapshot.js",
        "libraries",
        lambda s: {"fields": ["agencyID", "branchId"], "branchIds": ["710100", "710104"]},
        200,
        lambda d: d == [{"branchId": "710100"}, {"branchId": "710104"}],
        patron=None,
    ),
    Case(
        "events.snapshot.js",
        "events",
        lambda s: {"fields": ["title", "changed", "nid", "field_ding_event_title_image"]},
        200,
        _keys_within({"title", "changed", "nid", "field_ding_event_title_image"}),
    ),
    Case(
        "news_nids.snapshot.js",
        "news",
        lambda s: {"nids": ["19", "40"], "fields": ["title", "changed", "nid"]},
        200,
        lambda d: isinstance(d, list) and len(d) == 2,
    ),
    Case(
        "recommend_single_like.auto.js",
        "recommend",
        lambda s: {"like": [ONE], "limit": 10},
        200,
        lambda d: len(d) == 10 and all(set(r) == {"pid", "val", "from"} for r in d),
        patron=None,
    ),
    Case(
        "recommend_ignore_filters_and_boosters.auto.js",
        "recommend",
        lambda s: {"like": [ONE], "filters": {"authorFlood": 1}, "boosters": {"loanCount": 0}},
        200,
        lambda d: len(d) == 10,
        patron=None,
    ),
    Case(
        "recommend_error_invalid_pid.auto.js",
        "recommend",
        lambda s: {"like": ["WAT!?"]},
        500,
        lambda e: e == "Could not find any works for pids ['WAT!?']",
        patron=None,
    ),
    Case(
        "holding_multiple_pids_result.auto.js",
        "holdingsitems",
        lambda s: {"agency": "710100", "pids": [ONE, TWO]},
        200,
        lambda d: (
            [h["pid"] for h in d] == [ONE, TWO]
            and all(
                set(c) == COPY_FIELDS and c["status"] in ("OnShelf", "OnLoan", "NotForLoan")
                for h in d
                for c in h["holdingsitems"]
            )
        ),
        patron=None,
    ),
    Case(
        "holding_missing_agency_prop.auto.js",
        "holdingsitems",
        lambda s: {"item_id": "3439785456"},
        400,
        lambda e: e == "Request must contain a valid agency prop",
        patron=None,
    ),
    Case(
        "holding_missing_item_or_pid_prop.auto.js",
        "holdingsitems",
        lambda s: {"agency": "710100"},
        400,
        lambda e: e == "Request must either contain the `pids` or `item_id` prop",
        patron=None,
    ),
    Case(
        "holding_both_item_id_and_pids_not_allowed.auto.js",
        "holdingsitems",
        lambda s: {"agency": "710100", "pids": [ONE], "item_id": "123"},
        400,
        lambda e: e == "Request is not allowed to contain both `pids` and `item_id` prop",
        patron=None,
    ),
    Case(
        "availability_multiple_pid_error.snapshot.js",
        "availability",
        lambda s: {"pids": ["hest", ONE]},
        200,
        lambda d: (
            d[0] == {"unavailable": "openHoldingService error: ITEM_NOT_FOUND"}
            and set(d[1])
            == {"willLend", "expectedDelivery", "orderPossible", "orderPossibleReason"}
            and d[1]["orderPossibleReason"] == "owned_accepted"
        ),
    ),
    Case(
        "availability_empty_pid_error.snapshot.js",
        "availability",
        lambda s: {"pids": [""]},
        400,
        lambda e: e == "pids is not of type array",
    ),
    Case(
        "search_simple.auto.js",
        "search",
        lambda s: {"q": "blixen"},
        200,
        lambda d: len(d) == 2 and all("pid" in w for w in d),
        patron=None,
    ),
]


async def _token(client: httpx.AsyncClient, sandbox: LibrarySandbox, patron: str | None) -> str:
    if patron is not None:
        return sandbox.issue_token(patron)
    response = await client.post(
        f"{sandbox.urls.auth}/oauth/token",
        data={"grant_type": "password", "username": "@", "password": "@"},
        auth=(sandbox.client_id, sandbox.client_secret),
    )
    return str(response.json()["access_token"])


@pytest.mark.parametrize("case", CASES, ids=[f"{c.recorded}" for c in CASES])
async def test_a_recorded_request_gets_an_answer_of_the_recorded_shape(
    case: Case, library_sandbox: LibrarySandbox, client: httpx.AsyncClient
) -> None:
    token = await _token(client, library_sandbox, case.patron)
    response = await client.post(
        f"{library_sandbox.urls.platform}/v3/{case.endpoint}",
        json=case.body(library_sandbox),
        headers={"Authorization": f"Bearer {token}"},
    )
    body = response.json()
    assert response.status_code == body["statusCode"] == case.status, body
    assert case.check(body["data"] if case.status == 200 else body["error"]), body
