"""The earlier flow: anonymous password-grant token, login session, and ticket.

`GET {login}/login?token=<access token>` answers `{"token": "<session token>", "id": <int>}`
(the spec shows only "a token and an id"; this shape is the sandbox's choice). It needs a
patron's token (from the code flow or `LibrarySandbox.issue_token`); an anonymous token is
answered 403 `{"statusCode": 403, "error": "not logged in"}`, an unknown or expired one 401
`invalid_token`. `GET {login}/getTicket/<token>/<id>` answers the ticket of spec section 2.3;
an unknown pair is 404 `{"statusCode": 404, "error": "ticket not found"}`.
"""

from __future__ import annotations

import secrets
from typing import Any

from aiohttp import web

from sandbox.library.oauth import basic_credentials, form_required
from sandbox.library.responses import json_response, oauth_error, platform_error
from sandbox.library.state import TOKEN_LIFETIME, SandboxState


class EarlierFlow:
    def __init__(self, state: SandboxState) -> None:
        self.state = state

    async def token(self, request: web.Request) -> web.Response:
        bad = form_required(request)
        if bad is not None:
            return bad
        credentials = basic_credentials(request)
        if credentials is None or not self.state.client_ok(*credentials):
            return oauth_error(401, "invalid_client", "Invalid client: client is invalid")
        form = {k: v for k, v in (await request.post()).items() if isinstance(v, str)}
        if form.get("grant_type") != "password":
            return oauth_error(
                400, "unsupported_grant_type", "Unsupported grant type: `grant_type` is invalid"
            )
        for name in ("username", "password"):
            if name not in form:
                return oauth_error(
                    400, "invalid_request", f"Invalid request: missing parameter: `{name}`"
                )
        token = self.state.new_token(None)
        return json_response(
            {"access_token": token, "token_type": "bearer", "expires_in": TOKEN_LIFETIME}
        )

    async def login(self, request: web.Request) -> web.Response:
        token = request.query.get("token", "")
        if not token:
            return platform_error(400, "missing token parameter")
        found = self.state.token(token)
        if found is None:
            return platform_error(401, "invalid_token", "The access token expired")
        if found.user_id is None:
            return platform_error(403, "not logged in")
        session_token, session_id = self.state.new_session(token, found.user_id)
        return json_response({"token": session_token, "id": session_id})

    async def ticket(self, request: web.Request) -> web.Response:
        try:
            session_id = int(request.match_info["id"])
        except ValueError:
            return platform_error(404, "ticket not found")
        session = self.state.sessions.get(session_id)
        if session is None or not secrets.compare_digest(
            session.token, request.match_info["token"]
        ):
            return platform_error(404, "ticket not found")
        record = self.state.record(session.user_id)
        attributes: dict[str, Any] = {
            "gender": record.gender,
            "wayfId": None,
            "agencies": [
                {"userId": record.patron.user_id, "agencyId": agency, "userIdType": "LOCAL"}
                for agency in record.agencies
            ],
            "birthDate": record.birth_date,
            "birthYear": record.birth_year,
            "uniloginId": None,
            "municipality": record.municipality,
        }
        if self.state.release_cpr:
            attributes = {"cpr": record.cpr, **attributes}
        return json_response({"id": session_id, "token": session.token, "attributes": attributes})
