"""Decoding the library services' answers, and mapping their failures to the errors of
`bot.library.errors` (see production-notes.md). Nothing from pydantic or json leaks
out; messages name an endpoint, never a URL.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

from pydantic import BaseModel

from bot.library.errors import (
    TURNED_AWAY,
    BadRequest,
    ClientFault,
    LibraryError,
    NotLoggedIn,
    OrderRefused,
    Refused,
    ServiceUnavailable,
    TokenRejected,
)
from bot.library.models import DEFAULT_TZ

# Logged under the client's name: operators filter on it.
log = logging.getLogger("bot.library.client")

M = TypeVar("M", bound=BaseModel)

MAX_CODE_LENGTH = 100

# Endpoint name -> how it is named in messages (never a URL: getTicket's path holds a token).
LABELS: Mapping[str, str] = MappingProxyType(
    {
        "exchange_code": "access service /oauth/token",
        "userinfo": "access service /userinfo",
        "revoke": "access service /oauth/revoke",
        "password_grant": "access service (earlier flow) /oauth/token",
        "login_session": "login service /login",
        "get_ticket": "login service /getTicket",
        "user": "data platform /v3/user",
        "order": "data platform /v3/order",
        "cancel_order": "data platform /v3/order (cancel)",
        "renew": "data platform /v3/renew",
        "work": "data platform /v3/work",
        "search": "data platform /v3/search",
        "libraries": "data platform /v3/libraries",
        "events": "data platform /v3/events",
        "library": "data platform /v3/library",
        "news": "data platform /v3/news",
        "recommend": "data platform /v3/recommend",
        "holdings": "data platform /v3/holdingsitems",
        "availability": "data platform /v3/availability",
    }
)
_TOKEN_ENDPOINTS = frozenset({"exchange_code", "password_grant"})
_PLATFORM_ENDPOINTS = frozenset(name for name, text in LABELS.items() if "/v3/" in text)
# How much of the platform validator's text goes into the log line (it names parameters and
# types, never a value).
_FAULT_TEXT = 500
_REFUSABLE = frozenset({"renew", "cancel_order"})
# The platform's 403 for a token that names no patron (production-notes: anonymous token).
NOT_LOGGED_IN = "not logged in"
# 5xx codes that say the server failed, not that the order system or the library said no.
_SERVER_FAILURES = frozenset(
    {"internal server error", "server_error", "bad gateway", "gateway timeout", "internal_error"}
)


@dataclass(frozen=True, slots=True)
class Response:
    """A response read whole: all that decoding needs (the transport reads it)."""

    status_code: int
    content: bytes

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300


def label(endpoint: str) -> str:
    return LABELS.get(endpoint, endpoint)


def malformed(endpoint: str, why: str) -> ServiceUnavailable:
    log.warning("malformed response from %s (%s)", label(endpoint), why)
    return ServiceUnavailable(f"malformed response from {label(endpoint)}", code="malformed")


def parse_model(model: type[M], data: object, *, tz: ZoneInfo, endpoint: str) -> M:
    """Validate `data` as `model` with dates in `tz`; any failure is `ServiceUnavailable`."""
    try:
        return model.model_validate(data, context={"tz": tz})
    except Exception as exc:  # ValidationError, but also overflow/recursion on odd input
        raise malformed(endpoint, type(exc).__name__) from None


def parse_list(model: type[M], data: object, *, tz: ZoneInfo, endpoint: str) -> list[M]:
    if isinstance(data, dict):  # one object where a list was expected: take it as a list of one
        data = [data]
    if not isinstance(data, list):
        raise malformed(endpoint, "data is not a list")
    return [parse_model(model, item, tz=tz, endpoint=endpoint) for item in data]


def envelope_data(body: Mapping[str, Any], endpoint: str) -> Any:
    if "data" not in body:
        raise malformed(endpoint, "no data in the envelope")
    return body["data"]


def parse_envelope(
    body: object, model: type[M], *, tz: ZoneInfo = DEFAULT_TZ, endpoint: str = "user"
) -> M:
    """Parse a decoded data-platform body `{"statusCode", "data"}` into `model`.

    Raises only `LibraryError`s: the mapped error of a failure envelope, or `ServiceUnavailable`
    for anything of the wrong shape.
    """
    if not isinstance(body, dict):
        raise malformed(endpoint, "body is not an object")
    status = body.get("statusCode")
    if isinstance(status, int) and not isinstance(status, bool) and status >= 400:
        raise error_for(endpoint, status, body)
    return parse_model(model, envelope_data(body, endpoint), tz=tz, endpoint=endpoint)


def _error_code(body: object) -> str | None:
    if isinstance(body, dict):
        code = body.get("error")
        if isinstance(code, str) and code:
            return code[:MAX_CODE_LENGTH]
    return None


def _error_description(body: object) -> str | None:
    if isinstance(body, dict):
        text = body.get("error_description")
        if isinstance(text, str) and text:
            return text[:MAX_CODE_LENGTH]
    return None


def _order_url(body: object) -> str | None:
    """`orderUrl` beside an order refusal (serviceprovider's placeOrder), if a web address."""
    if isinstance(body, dict):
        url = body.get("orderUrl")
        if isinstance(url, str) and url.startswith(("https://", "http://")) and len(url) < 2000:
            return url
    return None


def error_for(endpoint: str, status: int, body: object) -> LibraryError:
    """Map an HTTP status and error body to the taxonomy (see production-notes.md)."""
    code = _error_code(body)
    description = _error_description(body)
    message = f"{label(endpoint)} answered HTTP {status}"
    if code:
        message += f" ({code})"
    if endpoint in _TOKEN_ENDPOINTS and status in (400, 401):
        default = "invalid_client" if status == 401 else "invalid_request"
        return BadRequest(message, code=code or default, status=status)
    if status == 400 and endpoint in _PLATFORM_ENDPOINTS:
        return _client_fault(endpoint, message, body)
    if status == 401:
        return TokenRejected(message, code=code or "invalid_token", status=status)
    if status == 403 and (code or "").lower() == NOT_LOGGED_IN:
        return NotLoggedIn(message, code=code, status=status)
    # Any other 403 (a bare "Forbidden", as a proxy in front of the platform may send) says
    # nothing of the token, so no card lapses for it.
    if status == TURNED_AWAY:
        return ServiceUnavailable(message, code="service_unavailable", status=status)
    if status >= 500 and (code or "").lower() in _SERVER_FAILURES:
        return ServiceUnavailable(message, code=code, status=status)
    if endpoint == "order" and status == 500 and code:
        return OrderRefused(
            message, code=code, status=status, description=description, url=_order_url(body)
        )
    # The platform refuses with a 4xx or a 500; a code beside another 5xx is a gateway's.
    if endpoint in _REFUSABLE and (400 <= status < 500 or status == 500) and code:
        return Refused(message, code=code, status=status, description=description)
    if status == 400:
        return BadRequest(message, code=code or "invalid_request", status=status)
    return ServiceUnavailable(message, code=code, status=status)


def _client_fault(endpoint: str, message: str, body: object) -> ClientFault:
    """A 400 of the platform: its validation refused what the bot sent (serviceprovider
    `src/provider.js`); logged as the bot's error, with the validator's words."""
    text = body.get("error") if isinstance(body, dict) else None
    said = text[:_FAULT_TEXT] if isinstance(text, str) else "no error text"
    log.error("%s refused the bot's request as malformed: %r", label(endpoint), said)
    return ClientFault(message, code="client_fault", status=400)


def decode(endpoint: str, response: Response) -> dict[str, Any]:
    """The JSON object of a successful response; the mapped error otherwise."""
    status = response.status_code
    content = response.content
    try:
        body: object = json.loads(content) if content else None
    except Exception:  # not JSON, bad UTF-8, absurd nesting
        body = None
        decoded = False
    else:
        decoded = True
    if isinstance(body, dict):
        inner = body.get("statusCode")
        if isinstance(inner, int) and not isinstance(inner, bool) and inner >= 400 > status:
            status = inner  # an error envelope sent with HTTP 200
    if status >= 400:
        raise error_for(endpoint, status, body)
    if not 200 <= status < 300:
        raise ServiceUnavailable(f"{label(endpoint)} answered HTTP {status}", status=status)
    if not decoded:
        raise malformed(endpoint, "not JSON")
    if not isinstance(body, dict):
        raise malformed(endpoint, "not a JSON object")
    return body
