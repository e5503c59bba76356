"""Response shapes of the access service (OAuth JSON, pages, redirects) and the data platform
(envelopes)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from aiohttp import web

OAUTH_SERVICES = ("oauth", "auth")

OAUTH_ERRORS = {
    400: ("invalid_request", "Invalid request: the request is malformed"),
    401: ("invalid_client", "Invalid client: client is invalid"),
    403: ("access_denied", "Access denied"),
    404: ("not_found", "Not found"),
    429: ("too_many_requests", "Too many requests"),
    500: ("server_error", "Server error: an internal error occurred"),
    503: ("temporarily_unavailable", "The service is temporarily unavailable"),
}

PLATFORM_ERRORS = {
    400: "bad request",
    401: "invalid_token",
    403: "not logged in",
    404: "404 Not Found",
    429: "too many requests",
    500: "internal server error",
    502: "bad gateway",
    503: "service_unavailable",
    504: "gateway timeout",
}


def json_response(body: Any, status: int = 200, *, pretty: bool = False) -> web.Response:
    text = json.dumps(body, ensure_ascii=False, indent=2 if pretty else None)
    return web.Response(text=text, status=status, content_type="application/json", charset="utf-8")


def oauth_error(status: int, error: str, description: str) -> web.Response:
    headers = {"WWW-Authenticate": 'Basic realm="Service"'} if error == "invalid_client" else {}
    response = json_response({"error": error, "error_description": description}, status)
    response.headers.update(headers)
    return response


def envelope(data: Any, *, pretty: bool = False, **extra: Any) -> web.Response:
    return json_response({"statusCode": 200, "data": data, **extra}, pretty=pretty)


def platform_error(
    status: int, error: str, description: str | None = None, **extra: Any
) -> web.Response:
    body: dict[str, Any] = {"statusCode": status, "error": error}
    if description is not None:
        body["error_description"] = description
    return json_response(body | extra, status)


def service_error(service: str, status: int, path: str = "") -> web.Response:
    """What a service answers when a fault makes it fail with `status`."""
    if service in OAUTH_SERVICES:
        if path == "/userinfo" and status == 401:
            return web.Response(status=401)
        error, description = OAUTH_ERRORS.get(status, ("server_error", f"HTTP {status}"))
        return oauth_error(status, error, description)
    error = PLATFORM_ERRORS.get(status, f"HTTP {status}")
    if status == 500 and path == "/v3/order":
        error = "order not placed"
    if status == 401:
        return platform_error(status, error, "The access token expired")
    return platform_error(status, error)


def malformed(service: str) -> web.Response:
    """A 200 whose body is cut off mid-JSON, as a crashed proxy might send."""
    text = '{"access_token":"' if service in OAUTH_SERVICES else '{"statusCode":200,"data":{"'
    return web.Response(text=text, status=200, content_type="application/json")


def html_response(text: str, status: int = 200) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8")


def _with_query(url: str, **params: str) -> str:
    """`url` with `params` added to whatever query it already has."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True) + list(params.items())
    return urlunsplit(parts._replace(query=urlencode(query)))


def found(url: str, **params: str) -> web.Response:
    """A redirect to `url` with `params` added to its query (both flows send the browser back
    to the client so)."""
    location = _with_query(url, **params) if params else url
    return web.Response(status=302, headers={"Location": location})
