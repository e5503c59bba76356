"""The data platform v3: user, order (and cancel), renew, work, search, libraries, library,
events, news and recommend.

Envelope `{"statusCode": 200, "data": ...}`; failures `{"statusCode": N, "error": "..."}` (with
`error_description` where production sends one) and the HTTP status equal to `statusCode`.
An order the order system does not place is a 500 whose `error` is the order system's reason
(`owned_own_catalogue`, `owned_wrong_mediumType`, `not_owned_no_ILL_loc`,
`unknown_pickupAgency`, ...); a refused renewal is a 500 with the library system's text.
See `docs/service-behaviour.md` for what the sandbox chose where production is not recorded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime, time, timedelta
from typing import Any
from urllib.parse import quote

from aiohttp import web

from library_bot.sandbox.library.cms import Content
from library_bot.sandbox.library.data import (
    CATALOGUE,
    DDBCMSAPI,
    LIBRARIES,
    MAX_RENEWALS,
    all_branch_ids,
    branch_json,
    ncip_order_id,
    pid,
    work_json,
)
from library_bot.sandbox.library.faults import Faults
from library_bot.sandbox.library.oauth import bearer_token
from library_bot.sandbox.library.responses import envelope, json_response, platform_error
from library_bot.sandbox.library.state import SandboxState, TokenRecord

MAX_LIMIT = 50
CQL_INDEX = re.compile(r"[\w.]+\s*(?:==|<>|<=|>=|=|<|>)\s*", re.UNICODE)
WORD = re.compile(r"\w+", re.UNICODE)
CQL_WORDS = {"and", "or", "not", "prox", "any", "all", "adj"}
RENEW_DAYS = 30
DEFAULT_CMS_LIMIT = 10
BRANCH_ID = re.compile(r"DK-\d{6}")
# The pick-up library that has this material on its own shelves (order it there, not here).
OWN_CATALOGUE = {("27015794", "DK-710100")}
# Refusals of a renewal: the library system's text, passed on by the platform.
RESERVED_BY_OTHERS = "Renewal Not Allowed - Item Has Outstanding Requests"
MAX_RENEWALS_TEXT = "Maximum Renewals Exceeded"
UNKNOWN_LOAN_TEXT = "Agency authentication failed"  # recorded for a loan id that does not exist
UNKNOWN_ORDER_TEXT = "Unknown Request"


class InvalidParameter(Exception):
    """A 400 of the platform; the message is the envelope's `error`."""


def json_list(params: dict[str, str], name: str, *, required: bool = True) -> list[str] | None:
    """A JSON array of strings from a query parameter (`pids=["870970-basis:1"]`)."""
    raw = params.get(name, "").strip()
    if not raw:
        if required:
            raise InvalidParameter(f"missing {name} parameter")
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        raise InvalidParameter(f"{name} must be a JSON array of strings") from None
    if not isinstance(value, list) or not all(isinstance(v, str | int) for v in value):
        raise InvalidParameter(f"{name} must be a JSON array of strings")
    return [str(v) for v in value]


def int_param(
    params: dict[str, str], name: str, default: int, low: int, high: int | None = None
) -> int:
    """An integer parameter; messages in the wording of the platform's request validator."""
    raw = params.get(name, "")
    if raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InvalidParameter(f"{name} is not of a type(s) integer") from None
    if value < low:
        raise InvalidParameter(f"{name} must have a minimum value of {low}")
    if high is not None and value > high:
        raise InvalidParameter(f"{name} must have a maximum value of {high}")
    return value


def own_catalogue_url(branch: str, faust: str) -> str:
    """Where the pick-up library's own catalogue shows the material (the order system's
    `lookUpUrl`, which the platform passes on as `orderUrl`)."""
    agency = branch.removeprefix("DK-")
    return f"https://bibliotek-{agency}.sandbox.test/ting/object/{quote(pid(faust), safe='')}"


def agency_list(params: dict[str, str]) -> list[str]:
    """The `agency` parameter: a JSON array of strings (spec) or one id; `DK-` is optional."""
    raw = params.get("agency", "").strip()
    if not raw:
        return []
    values = json_list(params, "agency") if raw.startswith("[") else [raw]
    assert values is not None
    return [v[3:] if v.upper().startswith("DK-") else v for v in values]


def select_fields(item: dict[str, Any] | None, fields: list[str] | None) -> Any:
    """The platform's `fields` filter: only the named keys, when `fields` is given."""
    if item is None or fields is None:
        return item
    return {key: item[key] for key in fields if key in item}


def recommendations(
    liked: list[tuple[str, str, str, str, str]], ignore: set[str]
) -> list[dict[str, Any]]:
    """Works by the liked creators first, then the rest of the catalogue, each with a score."""
    seeds = {entry[0] for entry in liked}
    creators = {entry[2] for entry in liked}
    source = [f"work:{int(liked[0][0]) % 1_000_000}"]
    ranked = sorted(
        (e for e in CATALOGUE if e[0] not in seeds and pid(e[0]) not in ignore),
        key=lambda e: (e[2] not in creators, e[1]),
    )
    return [
        {
            "pid": pid(entry[0]),
            "val": round((0.9 if entry[2] in creators else 0.4) - index / 1000, 6),
            "from": source,
        }
        for index, entry in enumerate(ranked)
    ]


def query_words(query: str) -> list[str]:
    """Free-text words of a CQL query: index prefixes and boolean operators dropped."""
    stripped = CQL_INDEX.sub(" ", query.lower())
    return [w for w in WORD.findall(stripped) if w not in CQL_WORDS]


def faust_of(material: str) -> str:
    return material.rsplit(":", 1)[-1]


class Platform:
    def __init__(self, state: SandboxState, faults: Callable[[], Faults]) -> None:
        self.state = state
        self.faults = faults  # a getter: tests may replace the sandbox's `Faults` object
        self.branch_ids = all_branch_ids()
        self.content = Content(state.today, state.tz)
        self._search_index = [
            (entry, set(WORD.findall(f"{entry[1]} {entry[2]}".lower()))) for entry in CATALOGUE
        ]

    async def _params(self, request: web.Request) -> dict[str, str]:
        params = dict(request.query)
        if request.method == "POST" and request.content_type in (
            "application/x-www-form-urlencoded",
            "multipart/form-data",
        ):
            form = await request.post()
            params.update({k: v for k, v in form.items() if isinstance(v, str)})
        return params

    def _token(
        self, request: web.Request, params: dict[str, str]
    ) -> tuple[TokenRecord | None, web.Response | None]:
        in_query = params.get("access_token", "")
        in_header = bearer_token(request)
        if in_query and in_header:
            return None, platform_error(
                400, "access token must be given either as a parameter or as a header, not both"
            )
        token = in_query or in_header
        if not token:
            return None, platform_error(401, "invalid_token", "No access token was provided")
        found = self.state.token(token)
        if found is None:
            return None, platform_error(401, "invalid_token", "The access token expired")
        return found, None

    def _patron(
        self, request: web.Request, params: dict[str, str]
    ) -> tuple[str | None, web.Response | None]:
        found, error = self._token(request, params)
        if error is not None:
            return None, error
        assert found is not None
        if found.user_id is None:
            return None, platform_error(403, "not logged in")
        return found.user_id, None

    @staticmethod
    def _pretty(params: dict[str, str]) -> bool:
        return params.get("pretty", "").lower() in ("1", "true", "yes")

    async def user(self, request: web.Request) -> web.Response:
        params = await self._params(request)
        user_id, error = self._patron(request, params)
        if error is not None:
            return error
        assert user_id is not None
        record = self.state.record(user_id)
        if record.data.refused_by_library:
            return platform_error(500, "User authentication failed")
        self.state.arrived_orders()
        data = record.data
        body = {
            "id": user_id,
            "name": record.patron.name,
            "address": record.address,
            "postalCode": record.postal_code,
            "mail": record.mail,
            "loans": data.loans,
            "orders": data.orders,
            "debt": data.debt,
            "ddbcmsapi": DDBCMSAPI,
            "agency": record.patron.agency,
        }
        return envelope(body, pretty=self._pretty(params))

    async def order(self, request: web.Request) -> web.Response:
        params = await self._params(request)
        user_id, error = self._patron(request, params)
        if error is not None:
            return error
        assert user_id is not None
        if self.faults().is_down("orders"):
            return platform_error(503, "service_unavailable")
        if params.get("delete", "").lower() not in ("", "false"):
            return self._cancel(user_id, params)
        try:
            pids = json_list(params, "pids")
        except InvalidParameter as exc:
            return platform_error(400, str(exc))
        if not pids:
            return platform_error(400, "missing pids parameter")
        branch = params.get("pickUpBranch", "").strip()
        if not branch:
            return platform_error(400, "pickUpBranch must be provided")
        if not branch.upper().startswith("DK-"):
            branch = f"DK-{branch}"
        branch = branch.upper()
        refusal = self._refusal(pids, branch)
        if refusal is not None:
            return refusal
        queued = self.faults().refuse_orders
        if queued:
            code = queued.pop(0)
            return platform_error(503 if code == "service_unavailable" else 500, code)
        entry = next(e for e in CATALOGUE if e[0] in {faust_of(p) for p in pids})
        record = self.state.record(user_id)
        now = datetime.now(self.state.tz).replace(microsecond=0)
        ors_id = self.state.new_order_id()
        order_id = ncip_order_id(
            record.patron.agency[:4],
            now.strftime("%d-%m-%Y %H:%M:%S"),
            record.patron.name,
            entry[1],
            ors_id,
        )
        self.state.place_order(
            user_id,
            {
                "orderId": order_id,
                "orderType": "normal",
                "status": "In process",
                "pickUpAgency": branch,
                "holdQueuePosition": str(1 + self.state.random.randrange(6)),
                "creator": entry[2],
                "title": entry[1],
                "orderDate": now.isoformat(),
                "titleId": entry[0],
            },
        )
        return envelope({"status": "ok", "orsId": ors_id}, pretty=self._pretty(params))

    def _refusal(self, pids: list[str], branch: str) -> web.Response | None:
        """The order system's reason for not placing an order, or None when it is placed."""
        wanted = [faust_of(p) for p in pids]
        entries = [e for e in CATALOGUE if e[0] in wanted]
        if not entries:
            return platform_error(500, "not_owned_no_ILL_loc")
        if not BRANCH_ID.fullmatch(branch) or branch not in self.branch_ids:
            return platform_error(500, "unknown_pickupAgency")
        if all("(net)" in entry[4] for entry in entries):
            return platform_error(500, "owned_wrong_mediumType")
        if all((entry[0], branch) in OWN_CATALOGUE for entry in entries):
            body = {
                "statusCode": 500,
                "error": "owned_own_catalogue",
                "orderUrl": own_catalogue_url(branch, entries[0][0]),
            }
            return json_response(body, 500)
        return None

    def _cancel(self, user_id: str, params: dict[str, str]) -> web.Response:
        order_id = params.get("orderId", "")
        if not order_id:
            return platform_error(400, "missing orderId parameter")
        data = self.state.record(user_id).data
        for index, existing in enumerate(data.orders):
            if existing["orderId"] == order_id:
                del data.orders[index]
                return envelope({"deleted": True, "orderId": order_id}, pretty=self._pretty(params))
        return platform_error(500, UNKNOWN_ORDER_TEXT)

    async def renew(self, request: web.Request) -> web.Response:
        params = await self._params(request)
        user_id, error = self._patron(request, params)
        if error is not None:
            return error
        assert user_id is not None
        loan_id = params.get("loanId", "")
        if not loan_id:
            return platform_error(400, ' requires property "loanId"')
        data = self.state.record(user_id).data
        loan = next((loan for loan in data.loans if loan["loanId"] == loan_id), None)
        if loan is None:
            return platform_error(500, UNKNOWN_LOAN_TEXT)
        if loan_id in data.unrenewable:
            return platform_error(500, RESERVED_BY_OTHERS)
        if data.renewals.get(loan_id, 0) >= MAX_RENEWALS:
            return platform_error(500, MAX_RENEWALS_TEXT)
        data.renewals[loan_id] = data.renewals.get(loan_id, 0) + 1
        # A renewal counts from today, not from the old due date.
        new_due = self.state.today + timedelta(days=RENEW_DAYS)
        return_date = datetime.combine(new_due, time(), self.state.tz).isoformat()
        loan["dueDate"] = return_date
        return envelope({"loanId": loan_id, "returnDate": return_date}, pretty=self._pretty(params))

    async def work(self, request: web.Request) -> web.Response:
        params = await self._params(request)
        _, error = self._token(request, params)
        if error is not None:
            return error
        try:
            pids = json_list(params, "pids") or []
        except InvalidParameter as exc:
            return platform_error(400, str(exc))
        if len(pids) > MAX_LIMIT:
            return platform_error(400, f"at most {MAX_LIMIT} pids per request")
        by_pid = {pid(entry[0]): entry for entry in CATALOGUE}
        works = [work_json(by_pid[p]) for p in pids if p in by_pid]
        return envelope(works, pretty=self._pretty(params))

    async def search(self, request: web.Request) -> web.Response:
        params = await self._params(request)
        _, error = self._token(request, params)
        if error is not None:
            return error
        query = params.get("q", "").strip()
        try:
            if not query:
                raise InvalidParameter("missing q parameter")
            limit = int_param(params, "limit", 10, 1, MAX_LIMIT)
            offset = int_param(params, "offset", 0, 0, 1_000_000)
        except InvalidParameter as exc:
            return platform_error(400, str(exc))
        words = query_words(query)
        hits = [
            entry
            for entry, index in self._search_index
            if all(any(term.startswith(word) for term in index) for word in words)
        ]
        data: list[dict[str, Any]] = [work_json(e) for e in hits[offset : offset + limit]]
        return envelope(data, pretty=self._pretty(params), hitCount=len(hits))

    async def libraries(self, request: web.Request) -> web.Response:
        params = await self._params(request)
        _, error = self._token(request, params)
        if error is not None:
            return error
        try:
            wanted = json_list(params, "agencyIds", required=False)
        except InvalidParameter as exc:
            return platform_error(400, str(exc))
        agencies = None if wanted is None else {a.removeprefix("DK-") for a in wanted}
        branches = [
            branch_json(agency_id, branch)
            for agency_id, _, entries in LIBRARIES
            if agencies is None or agency_id in agencies
            for branch in entries
        ]
        return envelope(branches, pretty=self._pretty(params))

    async def events(self, request: web.Request) -> web.Response:
        return await self._cms(request, "events")

    async def news(self, request: web.Request) -> web.Response:
        return await self._cms(request, "news")

    async def library(self, request: web.Request) -> web.Response:
        return await self._cms(request, "library")

    async def _cms(self, request: web.Request, kind: str) -> web.Response:
        """Content of the libraries' own sites, passed through as the platform does."""
        params = await self._params(request)
        found, error = self._token(request, params)
        if error is not None:
            return error
        assert found is not None
        try:
            agencies = agency_list(params)
            nids = json_list(params, "nids", required=False)
            limit = int_param(params, "limit", DEFAULT_CMS_LIMIT, 1)
            offset = int_param(params, "offset", 0, 0)
            fields = json_list(params, "fields", required=False)
        except InvalidParameter as exc:
            return platform_error(400, str(exc))
        if nids is not None:
            # As the platform does: fetching by nid passes no agency on, only the login's.
            agencies = []
        if not agencies and found.user_id is not None:
            own = self.state.record(found.user_id).patron.agency
            agencies = [own] if own else []  # a login with no library: no site to ask
        if not agencies:
            return platform_error(
                500,
                "DDBCMS-API not available for the current library. Make sure that DDBCMS-API "
                "is running in the relevant DDBCMS deployment (agency: undefined), and that "
                "the ServiceProvider has been configured with the proper url and token.",
            )
        items: list[dict[str, Any] | None]
        if nids is not None:
            items = list(self.content.by_nids(kind, nids))
        else:
            items = list(self.content.listing(kind, agencies, offset, limit))
        data = [select_fields(item, fields) for item in items]
        return envelope(data, pretty=self._pretty(params))

    async def recommend(self, request: web.Request) -> web.Response:
        params = await self._params(request)
        _, error = self._token(request, params)
        if error is not None:
            return error
        try:
            likes = json_list(params, "like", required=False)
            if likes is None:
                # The validator's message (its leading space included).
                raise InvalidParameter(' requires property "like"')
            ignore = set(json_list(params, "ignore", required=False) or [])
            limit = int_param(params, "limit", 10, 1, MAX_LIMIT)
            offset = int_param(params, "offset", 0, 0)
            fields = json_list(params, "fields", required=False)
        except InvalidParameter as exc:
            return platform_error(400, str(exc))
        by_pid = {pid(entry[0]): entry for entry in CATALOGUE}
        liked = [by_pid[p] for p in likes if p in by_pid]
        if not liked:
            quoted = ", ".join(f"'{p}'" for p in likes)
            return platform_error(500, f"Could not find any works for pids [{quoted}]")
        data = [
            select_fields(item, fields)
            for item in recommendations(liked, ignore)[offset : offset + limit]
        ]
        return envelope(data, pretty=self._pretty(params))

    async def not_found(self, request: web.Request) -> web.Response:
        return platform_error(404, "404 Not Found")
