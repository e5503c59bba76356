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
import re
from collections.abc import Awaitable, Callable
from datetime import date, datetime, time, timedelta
from typing import Any
from urllib.parse import quote

from aiohttp import web

from sandbox.library.cms import Content
from sandbox.library.data import (
    CATALOGUE,
    DDBCMSAPI,
    LIBRARIES,
    MAX_RENEWALS,
    agency_of,
    all_branch_ids,
    branch_json,
    cover_json,
    cover_svg,
    has_cover,
    ncip_id,
    pid,
    work_json,
)
from sandbox.library.faults import Faults
from sandbox.library.grammar import InvalidRequest, read_body, read_request, select_fields
from sandbox.library.parsing import bearer_token
from sandbox.library.responses import envelope, platform_error
from sandbox.library.state import SandboxState, TokenRecord

CQL_INDEX = re.compile(r"[\w.]+\s*(?:==|<>|<=|>=|=|<|>)\s*", re.UNICODE)
WORD = re.compile(r"\w+", re.UNICODE)
CQL_WORDS = {"and", "or", "not", "prox", "any", "all", "adj"}
RENEW_DAYS = 30
BUMP_LIMIT = 50  # /work and /recommend (spec section 8)
DEFAULT_CMS_LIMIT = 10
BRANCH_ID = re.compile(r"DK-\d{6}")
# The library (its agency, ISIL) that has this material on its own shelves: an order to any of
# its branches is `owned_own_catalogue` (reserve it in its own catalogue instead).
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


def own_catalogue_url(branch: str, faust: str) -> str:
    """Where the pick-up library's own catalogue shows the material (the order system's
    `lookUpUrl`, which the platform passes on as `orderUrl`)."""
    agency = branch.removeprefix("DK-")
    return f"https://bibliotek-{agency}.sandbox.test/ting/object/{quote(pid(faust), safe='')}"


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


def isil_digits(value: str) -> str:
    """An agency or branch id without its `DK-`, as isil.utils' `getIdFromIsil`."""
    return value[3:] if value[:3].upper() == "DK-" else value


class Platform:
    def __init__(self, state: SandboxState, faults: Callable[[], Faults]) -> None:
        self.state = state
        self.faults = faults  # a getter: tests may replace the sandbox's `Faults` object
        self.branch_ids = all_branch_ids()
        self.content = Content(state.today, state.tz)
        self._search_index = [
            (entry, set(WORD.findall(f"{entry[1]} {entry[2]}".lower()))) for entry in CATALOGUE
        ]

    async def _authorized(
        self, request: web.Request, name: str
    ) -> tuple[dict[str, Any], TokenRecord]:
        """The request's parameters, read and validated as the platform does (`grammar`), and
        its token (a patron's or an anonymous one), checked first as the platform does."""
        try:
            body = await read_body(request)
        except InvalidRequest as exc:
            raise Refusal(400, exc.message) from None
        found = [
            token
            for token in (
                bearer_token(request),
                request.query.get("access_token"),
                body.get("access_token"),
            )
            if token is not None
        ]
        if len(found) > 1:
            raise Refusal(400, "invalid_request", "Multiple access tokens in the request")
        if not found:
            raise Refusal(401, "invalid_request", "Missing access tokens in the request")
        record = self.state.token(str(found[0]))
        if record is None:
            raise Refusal(401, "invalid_token", "The access token expired")
        try:
            params = read_request(request.query, body, name)
        except InvalidRequest as exc:
            raise Refusal(400, exc.message) from None
        return params, record

    async def _patron(self, request: web.Request, name: str) -> tuple[dict[str, Any], str]:
        """The request's parameters and the logged-in patron's id."""
        params, found = await self._authorized(request, name)
        if found.user_id is None:
            raise Refusal(403, "not logged in")
        return params, found.user_id

    @staticmethod
    def _envelope(params: dict[str, Any], data: Any, **extra: Any) -> web.Response:
        """The answer, with only the `fields` asked for, as provider.js's `fieldsFilter`."""
        data = select_fields(data, params.get("fields"))
        return envelope(data, pretty=params.get("pretty") is True, **extra)

    @endpoint
    async def user(self, request: web.Request) -> web.Response:
        params, user_id = await self._patron(request, "user")
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
        params, user_id = await self._patron(request, "order")
        if self.faults().is_down("orders"):
            raise Refusal(503, "service_unavailable")
        if params.get("delete") not in (None, False, "false"):
            return self._cancel(user_id, params)
        self._check_order_params(params)
        pids: list[str] = params["pids"]
        branch = str(params["pickUpBranch"]).strip()
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
        order_id = ncip_id(
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

    def _check_order_params(self, params: dict[str, Any]) -> None:
        """placeOrder.js's own checks, after the validator's, in its order and words."""
        if not params.get("pids"):
            raise Refusal(400, "missing pids parameter")
        expires = params.get("expires")
        if expires:
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", expires):
                raise Refusal(
                    400,
                    "The expires argument must be of the form YYYY-MM-DD (example: 2016-06-24)",
                )
            try:
                past = date.fromisoformat(expires) <= self.state.today  # midnight has passed
            except ValueError:  # `new Date("2016-018-01")` is no date either
                past = False
            if past:
                raise Refusal(400, "The expire argument must be a future date")
        if not str(params.get("pickUpBranch", "")).strip():
            raise Refusal(400, "pickUpBranch must be provided")

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
        library = f"DK-{agency_of(branch)}"
        if all((entry[0], library) in OWN_CATALOGUE for entry in entries):
            order_url = own_catalogue_url(branch, entries[0][0])
            raise Refusal(500, "owned_own_catalogue", orderUrl=order_url)

    def _cancel(self, user_id: str, params: dict[str, Any]) -> web.Response:
        # cancelOrder.js's own checks, after the validator's.
        order_id = params.get("orderId")
        if not order_id:
            raise Refusal(400, "missing orderId. Needed to cancel order")
        if not params.get("orderType"):
            raise Refusal(400, "missing orderType. Needed to cancel order")
        data = self.state.record(user_id).data
        for index, existing in enumerate(data.orders):
            if existing["orderId"] == order_id:
                del data.orders[index]
                return self._envelope(params, {"deleted": True, "orderId": order_id})
        raise Refusal(500, UNKNOWN_ORDER_TEXT)

    @endpoint
    async def renew(self, request: web.Request) -> web.Response:
        params, user_id = await self._patron(request, "renew")
        loan_id = params["loanId"]
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
        params, _ = await self._authorized(request, "work")
        pids = params.get("pids")
        if not pids:
            raise Refusal(400, "'pids' not present in request")  # as recorded
        by_pid = {pid(entry[0]): entry for entry in CATALOGUE}
        works = [self._work(by_pid[p], request, params) for p in pids if p in by_pid]
        return self._envelope(params, works)

    @staticmethod
    def _work(
        entry: tuple[str, str, str, str, str], request: web.Request, params: dict[str, Any]
    ) -> dict[str, Any]:
        """A work as `/v3/work` and `/v3/search` send it: without `fields` the platform
        leaves out every `cover*` field (its spec, `work`)."""
        covers = cover_json(entry[0], request.host) if "fields" in params else {}
        return {**work_json(entry), **covers}

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
        params, _ = await self._authorized(request, "search")
        limit, offset = int(params.get("limit", 10)), int(params.get("offset", 0))
        words = query_words(params["q"])
        hits = [
            entry
            for entry, index in self._search_index
            if all(any(term.startswith(word) for term in index) for word in words)
        ]
        data = [self._work(entry, request, params) for entry in hits[offset : offset + limit]]
        return self._envelope(params, data, hitCount=len(hits))

    @endpoint
    async def libraries(self, request: web.Request) -> web.Response:
        params, _ = await self._authorized(request, "libraries")
        # libraries.js: each filter, when given, by id or ISIL.
        agencies = {isil_digits(a) for a in params.get("agencyIds", ())}
        wanted = {isil_digits(b) for b in params.get("branchIds", ())}
        branches = [
            branch_json(agency_id, branch, library_name)
            for agency_id, library_name, entries in LIBRARIES
            if "agencyIds" not in params or agency_id in agencies
            for branch in entries
            if "branchIds" not in params or isil_digits(branch[0]) in wanted
        ]
        for branch in branches:
            if branch["isil"] in self.state.no_pickup:
                branch["pickupAllowed"] = "0"
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
        params, found = await self._authorized(request, kind)
        agency = params.get("agency")
        nids = params.get("nids")
        limit = int(params.get("limit", DEFAULT_CMS_LIMIT))
        offset = int(params.get("offset", 0))
        if nids is not None:
            # As the platform does: fetching by nid passes no agency on, only the login's.
            agency = None
        if not agency and found.user_id is not None:
            agency = self.state.record(found.user_id).patron.agency or None
        if not agency:
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
            items = list(self.content.listing(kind, [isil_digits(agency)], offset, limit))
        return self._envelope(params, items)

    @endpoint
    async def recommend(self, request: web.Request) -> web.Response:
        params, _ = await self._authorized(request, "recommend")
        likes = params["like"]
        ignore = set(params.get("ignore", ()))
        # The platform's spec sets no maximum; the interface spec's bump limit is 50 (chosen:
        # at most 50 come back, as the recommender is not recorded above it).
        limit = min(int(params.get("limit", 10)), BUMP_LIMIT)
        offset = int(params.get("offset", 0))
        by_pid = {pid(entry[0]): entry for entry in CATALOGUE}
        liked = [by_pid[p] for p in likes if p in by_pid]
        if not liked:
            quoted = ", ".join(f"'{p}'" for p in likes)
            raise Refusal(500, f"Could not find any works for pids [{quoted}]")
        data = recommendations(liked, ignore)[offset : offset + limit]
        return self._envelope(params, data)

    @endpoint
    async def holdingsitems(self, request: web.Request) -> web.Response:
        """Copies of titles at a library's branches (holdingsitems.js's checks, in order)."""
        params, _ = await self._authorized(request, "holdingsitems")
        agency = params.get("agency")
        if not agency:
            raise Refusal(400, "Request must contain a valid agency prop")
        pids: list[str] = params.get("pids") or []
        item_id = params.get("item_id")
        if not pids and not item_id:
            raise Refusal(400, "Request must either contain the `pids` or `item_id` prop")
        if pids and item_id:
            raise Refusal(400, "Request is not allowed to contain both `pids` and `item_id` prop")
        # holdingsitems.js: only an upper-case `DK-` is dropped, and the rest must be digits.
        agency = str(agency).replace("DK-", "", 1)
        if not agency.isdigit() or not agency.isascii():
            raise Refusal(400, "Agency is not a number")
        if item_id:
            items = [
                item
                for entry in CATALOGUE
                for item in self.state.shelves.holdings(pid(entry[0]), agency)
                if item["itemId"] == item_id
            ]
            return self._envelope(params, {"holdingsitems": items})
        found = [{"pid": p, "holdingsitems": self.state.shelves.holdings(p, agency)} for p in pids]
        return self._envelope(params, found)

    @endpoint
    async def availability(self, request: web.Request) -> web.Response:
        """Whether the logged-in patron's library lends each title, and whether an order of it
        can be placed (availability.js: the holding service and the order policy)."""
        params, user_id = await self._patron(request, "availability")
        pids = params["pids"]
        if not pids or not pids[0]:
            raise Refusal(400, "pids is not of type array")  # as recorded
        agency = self.state.record(user_id).patron.agency
        shelves, today, tz = self.state.shelves, self.state.today, self.state.tz
        data = [
            shelves.availability(
                p, agency, today, tz, (faust_of(p), f"DK-{agency}") in OWN_CATALOGUE
            )
            for p in pids
        ]
        return self._envelope(params, data)

    async def not_found(self, request: web.Request) -> web.Response:
        return platform_error(404, "404 Not Found")
