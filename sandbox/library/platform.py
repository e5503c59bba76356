"""The data platform v3: user, order (and cancel), renew, work, search, libraries.

Envelope `{"statusCode": 200, "data": ...}`; failures `{"statusCode": N, "error": "..."}` (with
`error_description` where production sends one) and the HTTP status equal to `statusCode`.
Refusals of the platform use 500 with a code: `owned_own_catalogue`, `already_reserved`,
`order not placed` (unknown material), `order_not_found`, `renewal_refused`, `loan_not_found`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import Any

from aiohttp import web

from sandbox.library.data import (
    CATALOGUE,
    LIBCMSAPI,
    LIBRARIES,
    all_branch_ids,
    branch_json,
    pid,
    work_json,
)
from sandbox.library.faults import Faults
from sandbox.library.oauth import bearer_token
from sandbox.library.responses import envelope, platform_error
from sandbox.library.state import SandboxState, TokenRecord

MAX_LIMIT = 50
CQL_INDEX = re.compile(r"[\w.]+\s*(?:==|<>|<=|>=|=|<|>)\s*", re.UNICODE)
WORD = re.compile(r"\w+", re.UNICODE)
CQL_WORDS = {"and", "or", "not", "prox", "any", "all", "adj"}
RENEW_DAYS = 30


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


def int_param(params: dict[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = params.get(name, "")
    if raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InvalidParameter(f"{name} must be an integer") from None
    if not low <= value <= high:
        raise InvalidParameter(f"{name} must be between {low} and {high}")
    return value


def parse_due(text: str) -> date:
    """Every date shape the sandbox writes, including the foreign `dd/mm/yyyy`."""
    text = text.strip()
    if re.fullmatch(r"\d{2}/\d{2}/\d{4}", text):
        return datetime.strptime(text, "%d/%m/%Y").date()
    if len(text) == 10:
        return date.fromisoformat(text)
    return datetime.fromisoformat(text.replace("Z", "+00:00")).date()


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
            "libcmsapi": LIBCMSAPI,
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
        data = self.state.record(user_id).data
        pretty = self._pretty(params)
        if params.get("delete", "").lower() == "true":
            order_id = params.get("orderId", "")
            if not order_id:
                return platform_error(400, "missing orderId parameter")
            for index, existing in enumerate(data.orders):
                if existing["orderId"] == order_id:
                    del data.orders[index]
                    return envelope({"orderId": order_id, "deleted": True}, pretty=pretty)
            return platform_error(
                500, "order_not_found", "The order does not exist or is already deleted"
            )
        try:
            pids = json_list(params, "pids")
        except InvalidParameter as exc:
            return platform_error(400, str(exc))
        if not pids:
            return platform_error(400, "missing pids parameter")
        branch = params.get("pickUpBranch", "").strip()
        if not branch:
            return platform_error(400, "pickUpBranch must be provided")
        if not branch.startswith("DK-"):
            branch = f"DK-{branch}"
        if branch not in self.branch_ids:
            return platform_error(400, "unknown pickUpBranch")
        wanted = {faust_of(p) for p in pids}
        if any(loan.get("titleId") in wanted for loan in data.loans):
            return platform_error(500, "owned_own_catalogue")
        if any(existing.get("titleId") in wanted for existing in data.orders):
            return platform_error(500, "already_reserved")
        entry = next((e for e in CATALOGUE if e[0] in wanted), None)
        if entry is None:
            return platform_error(500, "order not placed")
        ors_id = self.state.new_order_id()
        now = datetime.now(self.state.tz).replace(microsecond=0)
        data.orders.append(
            {
                "orderId": ors_id,
                "orderType": "normal",
                "status": "Active",
                "pickUpAgency": branch,
                "holdQueuePosition": str(1 + self.state.random.randrange(6)),
                "creator": entry[2],
                "title": entry[1],
                "orderDate": now.isoformat(),
                "titleId": entry[0],
            }
        )
        return envelope({"status": "ok", "orsId": ors_id}, pretty=pretty)

    async def renew(self, request: web.Request) -> web.Response:
        params = await self._params(request)
        user_id, error = self._patron(request, params)
        if error is not None:
            return error
        assert user_id is not None
        loan_id = params.get("loanId", "")
        if not loan_id:
            return platform_error(400, "missing loanId parameter")
        data = self.state.record(user_id).data
        loan = next((loan for loan in data.loans if loan["loanId"] == loan_id), None)
        if loan is None:
            return platform_error(500, "loan_not_found", "The loan does not exist")
        if loan_id in data.unrenewable:
            return platform_error(
                500,
                "renewal_refused",
                "The material is reserved by another patron and cannot be renewed.",
            )
        new_due = parse_due(str(loan["dueDate"])) + timedelta(days=RENEW_DAYS)
        loan["dueDate"] = new_due.isoformat()
        return envelope(
            {"loanId": loan_id, "returnDate": new_due.isoformat()}, pretty=self._pretty(params)
        )

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

    async def not_found(self, request: web.Request) -> web.Response:
        return platform_error(404, "404 Not Found")
