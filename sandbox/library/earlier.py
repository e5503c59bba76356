"""The earlier flow (spec 4.1, 5.2): anonymous password-grant token, login page, and ticket.

As the access service does (its published source): `GET {login}/login?token=<access token>`
with the client's token (the anonymous one from the password grant) and an optional `returnurl`
is the page where the patron logs in. After the login the browser is sent to
`returnurl?token=<session token>&id=<session id>` (or `?error=LoginCancelled` when the patron
cancels); without `returnurl` the page shows the two values. `GET {login}/getTicket/<token>/<id>`
answers the ticket of spec 2.3, `{"id", "token", "attributes"}`, once: read again it is
`"attributes": null`, and with a token that does not match the id `"attributes": false`
(both HTTP 200). An unknown or expired client token gets the 403 error page.
"""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from sandbox.library import pages
from sandbox.library.data import PatronRecord
from sandbox.library.login import (
    SESSION_EXPIRED,
    SSO_COOKIE,
    WRONG_LOGIN,
    login_form,
    set_sso_cookie,
    start_sso,
    typed_login,
)
from sandbox.library.parsing import (
    basic_credentials,
    form_fields,
    form_required,
    query_and_form,
)
from sandbox.library.responses import (
    found,
    html_response,
    json_response,
    oauth_error,
)
from sandbox.library.state import TOKEN_LIFETIME, SandboxState, SessionRecord

INVALID_TOKEN = (
    "Du har ikke adgang til denne side. Dette kan skyldes, at der benyttes et ugyldigt token.",
    "You have no access to this page. This may be because the token is invalid.",
)


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
        form = await form_fields(request)
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

    def _form(
        self, request: web.Request, params: dict[str, str], *, error: str | None = None
    ) -> web.Response:
        fields = {"token": params.get("token", "")}
        if params.get("returnurl"):
            fields["returnurl"] = params["returnurl"]
        return login_form(
            self.state,
            request,
            params,
            fields=fields,
            action="/login",
            error=error or params.get("error") or None,
        )

    def _return_ok(self, url: str) -> bool:
        """The client's return address: a registered redirect URI, or on loopback."""
        return bool(urlsplit(url).scheme) and self.state.redirect_ok(url)

    def _back(self, params: dict[str, str], **query: str) -> web.Response:
        return found(params["returnurl"], **query)

    async def login(self, request: web.Request) -> web.Response:
        params = await query_and_form(request)
        token = params.get("token", "")
        if not token or self.state.token(token) is None:
            return html_response(pages.error_page(*INVALID_TOKEN), 403)
        returnurl = params.get("returnurl", "")
        if returnurl and not self._return_ok(returnurl):
            return html_response(
                pages.error_page("Ugyldig returnurl.", "Invalid returnurl for this client."), 400
            )
        if request.method == "GET":
            return self._form(request, params)
        action = params.get("action", "login")
        if action == "deny":
            if returnurl:
                return self._back(params, error="LoginCancelled")
            return html_response(pages.error_page("Login annulleret.", "Login cancelled."))
        record: PatronRecord | None
        if action == "continue":
            cookie = request.cookies.get(SSO_COOKIE, "")
            user_id = self.state.sso_sessions.get(cookie)
            if user_id is None:
                return self._form(request, params, error=SESSION_EXPIRED)
            record = self.state.record(user_id)
        else:
            record = typed_login(self.state, params)
            if record is None:
                return self._form(request, params, error=WRONG_LOGIN)
            cookie = start_sso(self.state, record.patron.user_id)
        session_token, session_id = self.state.new_session(token, record.patron.user_id)
        if returnurl:
            response = self._back(params, token=session_token, id=str(session_id))
        else:
            response = html_response(pages.ticket_page(session_token, session_id))
        return set_sso_cookie(response, cookie)

    async def ticket(self, request: web.Request) -> web.Response:
        raw_id = request.match_info["id"]
        token = request.match_info["token"]
        ticket_id: int | str = int(raw_id) if raw_id.isdigit() else raw_id
        session = self.state.sessions.get(ticket_id) if isinstance(ticket_id, int) else None
        if session is None or not secrets.compare_digest(session.token, token):
            return json_response({"id": ticket_id, "token": token, "attributes": False})
        if session.fetched:
            return json_response({"id": ticket_id, "token": token, "attributes": None})
        session.fetched = True
        return json_response(
            {"id": ticket_id, "token": session.token, "attributes": self._attributes(session)}
        )

    def _attributes(self, session: SessionRecord) -> dict[str, Any]:
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
        return attributes
