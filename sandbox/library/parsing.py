"""Reading what a request carries: query and form parameters, client credentials, bearer tokens.

Shared by the access service's two flows and the data platform, which all take their parameters
from the query string or a posted form, as the production services' web frameworks do.
"""

from __future__ import annotations

import base64
import binascii

from aiohttp import web

from sandbox.library.responses import oauth_error

FORM_TYPE = "application/x-www-form-urlencoded"
FORM_TYPES = (FORM_TYPE, "multipart/form-data")


async def form_fields(request: web.Request) -> dict[str, str]:
    """The posted form's text fields (file parts are ignored); none unless a form was posted."""
    if request.method != "POST" or request.content_type not in FORM_TYPES:
        return {}
    form = await request.post()
    return {key: value for key, value in form.items() if isinstance(value, str)}


async def query_and_form(request: web.Request) -> dict[str, str]:
    """The query parameters, with the posted form's fields over them."""
    return {**request.query, **await form_fields(request)}


def form_required(request: web.Request) -> web.Response | None:
    """The OAuth error for a token request that is not form-encoded (None when it is)."""
    if request.content_type != FORM_TYPE:
        return oauth_error(
            400,
            "invalid_request",
            "Invalid request: content must be application/x-www-form-urlencoded",
        )
    return None


def basic_credentials(request: web.Request) -> tuple[str, str] | None:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    client_id, sep, secret = decoded.partition(":")
    return (client_id, secret) if sep else None


def bearer_token(request: web.Request) -> str | None:
    """The token of an `Authorization` header as serviceprovider's `checkAuthHeader` reads it:
    the scheme exactly `Bearer`, the token the word after it."""
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    return value.split(" ", 1)[0] or None if scheme == "Bearer" else None
