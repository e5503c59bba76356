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

import functools
import json
import re
from collections.abc import Awaitable, Callable
from datetime import datetime, time, timedelta
from typing import Any
from urllib.parse import quote

from aiohttp import web

from sandbox.library.cms import Content
from sandbox.library.data import (
    CATALOGUE,
    DDBCMSAPI,
    LIBRARIES,
    MAX_RENEWALS,
    all_branch_ids,
    branch_json,
    cover_json,
    cover_svg,
    has_cover,
    ncip_order_id,
    pid,
    work_json,
)
from sandbox.library.faults import Faults
from sandbox.library.parsing import bearer_token, query_and_form
from sandbox.library.responses import envelope, platform_error
from sandbox.library.state import SandboxState, TokenRecord

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


class Refusal(Exception):
    """An error answer of the platform, raised where it is found and answered by `@endpoint`."""

    def __init__(
        self, status: int, error: str, description: str | None = None, **extra: Any
    ) -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.description = description
        self.extra = extra

    def response(self) -> web.Response:
        return platform_error(self.status, self.error, self.description, **self.extra)


class InvalidParameter(Refusal):
    """A 400 of the platform; the message is the envelope's `error`."""

    def __init__(self, message: str) -> None:
        super().__init__(400, message)


Endpoint = Callable[["Platform", web.Request], Awaitable[web.Response]]


def endpoint(handler: Endpoint) -> Endpoint:
    """A platform endpoint: a `Refusal` raised anywhere in it is its answer."""

    @functools.wraps(handler)
    async def answer(platform: Platform, request: web.Request) -> web.Response:
        try:
            return await handler(platform, request)
        except Refusal as refusal:
            return refusal.response()

    return answer


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

    async def _authorized(self, request: web.Request) -> tuple[dict[str, str], TokenRecord]:
        """The request's parameters and its token (a patron's or an anonymous one)."""
        params = await query_and_form(request)
        in_query = params.get("access_token", "")
        in_header = bearer_token(request)
        if in_query and in_header:
            raise Refusal(
                400, "access token must be given either as a parameter or as a header, not both"
            )
        token = in_query or in_header
        if not token:
            raise Refusal(401, "invalid_token", "No access token was provided")
        found = self.state.token(token)
        if found is None:
            raise Refusal(401, "invalid_token", "The access token expired")
        return params, found

    async def _patron(self, request: web.Request) -> tuple[dict[str, str], str]:
        """The request's parameters and the logged-in patron's id."""
        params, found = await self._authorized(request)
        if found.user_id is None:
            raise Refusal(403, "not logged in")
        return params, found.user_id

    @staticmethod
    def _envelope(params: dict[str, str], data: Any, **extra: Any) -> web.Response:
        pretty = params.get("pretty", "").lower() in ("1", "true", "yes")
        return envelope(data, pretty=pretty, **extra)

    @endpoint
    async def user(self, request: web.Request) -> web.Response:
        params, user_id = await self._patron(request)
        record = self.state.record(user_id)
        if record.data.refused_by_library:
            raise Refusal(500, "User authentication failed")
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
        return self._envelope(params, body)

    @endpoint
    async def order(self, request: web.Request) -> web.Response:
        params, user_id = await self._patron(request)
        if self.faults().is_down("orders"):
            raise Refusal(503, "service_unavailable")
        if params.get("delete", "").lower() not in ("", "false"):
            return self._cancel(user_id, params)
        pids = json_list(params, "pids")
        if not pids:
            raise InvalidParameter("missing pids parameter")
        branch = params.get("pickUpBranch", "").strip()
        if not branch:
            raise InvalidParameter("pickUpBranch must be provided")
        if not branch.upper().startswith("DK-"):
            branch = f"DK-{branch}"
        branch = branch.upper()
        self._check_order(pids, branch)
        queued = self.faults().refuse_orders
        if queued:
            code = queued.pop(0)
            raise Refusal(503 if code == "service_unavailable" else 500, code)
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
        return self._envelope(params, {"status": "ok", "orsId": ors_id})

    def _check_order(self, pids: list[str], branch: str) -> None:
        """Raise the order system's reason for not placing an order, if it has one."""
        wanted = [faust_of(p) for p in pids]
        entries = [e for e in CATALOGUE if e[0] in wanted]
        if not entries:
            raise Refusal(500, "not_owned_no_ILL_loc")
        if not BRANCH_ID.fullmatch(branch) or branch not in self.branch_ids:
            raise Refusal(500, "unknown_pickupAgency")
        if all("(net)" in entry[4] for entry in entries):
            raise Refusal(500, "owned_wrong_mediumType")
        if all((entry[0], branch) in OWN_CATALOGUE for entry in entries):
            order_url = own_catalogue_url(branch, entries[0][0])
            raise Refusal(500, "owned_own_catalogue", orderUrl=order_url)

    def _cancel(self, user_id: str, params: dict[str, str]) -> web.Response:
        order_id = params.get("orderId", "")
        if not order_id:
            raise InvalidParameter("missing orderId parameter")
        data = self.state.record(user_id).data
        for index, existing in enumerate(data.orders):
            if existing["orderId"] == order_id:
                del data.orders[index]
                return self._envelope(params, {"deleted": True, "orderId": order_id})
        raise Refusal(500, UNKNOWN_ORDER_TEXT)

    @endpoint
    async def renew(self, request: web.Request) -> web.Response:
        params, user_id = await self._patron(request)
        loan_id = params.get("loanId", "")
        if not loan_id:
            raise InvalidParameter(' requires property "loanId"')
        data = self.state.record(user_id).data
        loan = next((loan for loan in data.loans if loan["loanId"] == loan_id), None)
        if loan is None:
            raise Refusal(500, UNKNOWN_LOAN_TEXT)
        if loan_id in data.unrenewable:
            raise Refusal(500, RESERVED_BY_OTHERS)
        if data.renewals.get(loan_id, 0) >= MAX_RENEWALS:
            raise Refusal(500, MAX_RENEWALS_TEXT)
        data.renewals[loan_id] = data.renewals.get(loan_id, 0) + 1
        # A renewal counts from today, not from the old due date.
        new_due = self.state.today + timedelta(days=RENEW_DAYS)
        return_date = datetime.combine(new_due, time(), self.state.tz).isoformat()
        loan["dueDate"] = return_date
        return self._envelope(params, {"loanId": loan_id, "returnDate": return_date})

    @endpoint
    async def work(self, request: web.Request) -> web.Response:
        params, _ = await self._authorized(request)
        pids = json_list(params, "pids") or []
        if len(pids) > MAX_LIMIT:
            raise InvalidParameter(f"at most {MAX_LIMIT} pids per request")
        by_pid = {pid(entry[0]): entry for entry in CATALOGUE}
        return self._envelope(
            params,
            [
                {**work_json(by_pid[p]), **cover_json(by_pid[p][0], request.host)}
                for p in pids
                if p in by_pid
            ],
        )

    async def cover(self, request: web.Request) -> web.Response:
        """A work's cover: a small generated SVG (no image files in the sandbox)."""
        faust = request.match_info.get("faust", "")
        entry = next((e for e in CATALOGUE if e[0] == faust), None)
        if entry is None or not has_cover(faust):
            return web.Response(status=404, text="no such cover")
        return web.Response(
            text=cover_svg(faust, entry[1]),
            content_type="image/svg+xml",
            headers={"Cache-Control": "public, max-age=86400"},
        )

    @endpoint
    async def search(self, request: web.Request) -> web.Response:
        params, _ = await self._authorized(request)
        query = params.get("q", "").strip()
        if not query:
            raise InvalidParameter("missing q parameter")
        limit = int_param(params, "limit", 10, 1, MAX_LIMIT)
        offset = int_param(params, "offset", 0, 0, 1_000_000)
        words = query_words(query)
        hits = [
            entry
            for entry, index in self._search_index
            if all(any(term.startswith(word) for term in index) for word in words)
        ]
        data = [work_json(e) for e in hits[offset : offset + limit]]
        return self._envelope(params, data, hitCount=len(hits))

    @endpoint
    async def libraries(self, request: web.Request) -> web.Response:
        params, _ = await self._authorized(request)
        wanted = json_list(params, "agencyIds", required=False)
        agencies = None if wanted is None else {a.removeprefix("DK-") for a in wanted}
        branches = [
            branch_json(agency_id, branch, library_name)
            for agency_id, library_name, entries in LIBRARIES
            if agencies is None or agency_id in agencies
            for branch in entries
        ]
        for branch in branches:
            if branch["branchId"] in self.state.no_pickup:
                branch["pickupAllowed"] = False
        return self._envelope(params, branches)

    @endpoint
    async def events(self, request: web.Request) -> web.Response:
        return await self._cms(request, "events")

    @endpoint
    async def news(self, request: web.Request) -> web.Response:
        return await self._cms(request, "news")

    @endpoint
    async def library(self, request: web.Request) -> web.Response:
        return await self._cms(request, "library")

    async def _cms(self, request: web.Request, kind: str) -> web.Response:
        """Content of the libraries' own sites, passed through as the platform does."""
        params, found = await self._authorized(request)
        agencies = agency_list(params)
        nids = json_list(params, "nids", required=False)
        limit = int_param(params, "limit", DEFAULT_CMS_LIMIT, 1)
        offset = int_param(params, "offset", 0, 0)
        fields = json_list(params, "fields", required=False)
        if nids is not None:
            # As the platform does: fetching by nid passes no agency on, only the login's.
            agencies = []
        if not agencies and found.user_id is not None:
            own = self.state.record(found.user_id).patron.agency
            agencies = [own] if own else []  # a login with no library: no site to ask
        if not agencies:
            raise Refusal(
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
        return self._envelope(params, [select_fields(item, fields) for item in items])

    @endpoint
    async def recommend(self, request: web.Request) -> web.Response:
        params, _ = await self._authorized(request)
        likes = json_list(params, "like", required=False)
        if likes is None:
            # The validator's message (its leading space included).
            raise InvalidParameter(' requires property "like"')
        ignore = set(json_list(params, "ignore", required=False) or [])
        limit = int_param(params, "limit", 10, 1, MAX_LIMIT)
        offset = int_param(params, "offset", 0, 0)
        fields = json_list(params, "fields", required=False)
        by_pid = {pid(entry[0]): entry for entry in CATALOGUE}
        liked = [by_pid[p] for p in likes if p in by_pid]
        if not liked:
            quoted = ", ".join(f"'{p}'" for p in likes)
            raise Refusal(500, f"Could not find any works for pids [{quoted}]")
        data = [
            select_fields(item, fields)
            for item in recommendations(liked, ignore)[offset : offset + limit]
        ]
        return self._envelope(params, data)

    async def not_found(self, request: web.Request) -> web.Response:
        return platform_error(404, "404 Not Found")
