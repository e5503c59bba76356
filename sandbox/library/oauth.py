"""The access service's code flow: authorize (with a login page), token, userinfo, revoke, logout.

Single sign-on: a successful login sets the `sandbox_sso` cookie; the next authorize in the same
browser shows no login page and sends a code for that patron at once, unless it asks for a
login (`force_login` with any value) or names an `idp` the session was not made through, as
hejmdal's `shouldUserLogIn` does (src/utils/oauth2.utils.js). `GET /logout` with the token
ends that session but leaves the token working, as production does.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from typing import Any

from aiohttp import web

from sandbox.library import pages
from sandbox.library.data import PatronRecord
from sandbox.library.faults import Faults
from sandbox.library.login import (
    KEEP_THEIR_OWN_LOGIN,
    SSO_COOKIE,
    WRONG_LOGIN,
    login_form,
    set_sso_cookie,
    sso_user,
    start_sso,
    typed_login,
)
from sandbox.library.parsing import (
    basic_credentials,
    bearer_token,
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
from sandbox.library.state import TOKEN_LIFETIME, SandboxState

_UNKNOWN = object()
BEARER = re.compile(r"Bearer\s(\S+)")


def userinfo_attribute(record: PatronRecord, name: str) -> Any:
    """One attribute as hejmdal maps it (`src/utils/attribute.mapper.util.js`).

    `userId` is what the patron typed at login; `agencies` / `libraries` list the libraries
    that know the patron, identified by civil registration number (`userIdType` `CPR`), as
    in hejmdal's `docs/oauth2.md` example. Names hejmdal does not map are left out.
    """
    agencies = [
        {"agencyId": agency, "userId": record.cpr, "userIdType": "CPR"}
        for agency in record.agencies
    ]
    known: dict[str, Any] = {
        "uniqueId": record.unique_id,
        "municipality": record.municipality,
        "cpr": record.cpr,
        "userId": record.patron.user_id,
        "agencies": agencies,
        "libraries": agencies,
        "birthDate": record.birth_date,
        "birthYear": record.birth_year,
        "gender": record.gender,
        "blocked": False,
        "uniloginId": None,
        "wayfId": None,
    }
    return known.get(name, _UNKNOWN)


class CodeFlow:
    def __init__(self, state: SandboxState, faults: Callable[[], Faults]) -> None:
        self.state = state
        self.faults = faults  # a getter, as the platform's

    def _bad_client_page(self, client_id: str, redirect_uri: str) -> web.Response | None:
        """Unknown clients and unregistered redirect URIs never get a redirect."""
        if not secrets.compare_digest(client_id, self.state.client_id):
            return html_response(
                pages.error_page("Ukendt klient.", "Unknown client (client_id)."), 400
            )
        if not redirect_uri or not self.state.redirect_ok(redirect_uri):
            return html_response(
                pages.error_page(
                    "Ugyldig redirect_uri for denne klient.",
                    "Invalid redirect_uri for this client.",
                ),
                400,
            )
        return None

    def _form(
        self, request: web.Request, params: dict[str, str], *, error: str | None = None
    ) -> web.Response:
        fields = {
            "response_type": "code",
            "client_id": params.get("client_id", ""),
            "redirect_uri": params.get("redirect_uri", ""),
        }
        if "state" in params:
            fields["state"] = params["state"]
        return login_form(
            self.state,
            request,
            params,
            fields=fields,
            action="/oauth/authorize",
            error=error,
            offer_sso=False,
        )

    def _signed_on(self, request: web.Request, params: dict[str, str]) -> str | None:
        """The patron this browser's single sign-on session logs in without a page: none when
        the request asks for a login (hejmdal treats any `force_login` value as yes) or names
        an identity provider the session was not made through."""
        if params.get("force_login"):
            return None
        user_id = sso_user(self.state, request)
        idp = params.get("idp")
        made_by = self.state.sso_providers.get(request.cookies.get(SSO_COOKIE, ""))
        return None if user_id is None or (idp and idp != made_by) else user_id

    def _redirect(self, params: dict[str, str], **extra: str) -> web.Response:
        if "state" in params:
            extra["state"] = params["state"]
        return found(params["redirect_uri"], **extra)

    async def authorize(self, request: web.Request) -> web.Response:
        params = await query_and_form(request)
        bad = self._bad_client_page(params.get("client_id", ""), params.get("redirect_uri", ""))
        if bad is not None:
            return bad
        if params.get("response_type") != "code":
            return self._redirect(params, error="unsupported_response_type")
        if request.method == "GET":
            cookie = request.cookies.get(SSO_COOKIE, "")
            user_id = self._signed_on(request, params)
            if user_id is not None:
                code = self.state.new_code(user_id, params["redirect_uri"], cookie)
                return self._redirect(params, code=code)
            return self._form(request, params)
        action = params.get("action", "login")
        if action == "deny":
            return self._redirect(params, error="access_denied")
        record = typed_login(self.state, params)
        if record is None:
            return self._form(request, params, error=WRONG_LOGIN)
        # Chosen: a login whose authorize request named `idp` counts as made through it.
        sso = start_sso(self.state, record.patron.user_id, params.get("idp") or "borchk")
        code = self.state.new_code(record.patron.user_id, params["redirect_uri"], sso)
        return set_sso_cookie(self._redirect(params, code=code), sso)

    async def token(self, request: web.Request) -> web.Response:
        bad = form_required(request)
        if bad is not None:
            return bad
        form = await form_fields(request)
        grant_type = form.get("grant_type", "")
        if not grant_type:
            return oauth_error(
                400, "invalid_request", "Invalid request: missing parameter: `grant_type`"
            )
        if grant_type != "authorization_code":
            return oauth_error(
                400, "unsupported_grant_type", "Unsupported grant type: `grant_type` is invalid"
            )
        basic = basic_credentials(request)
        form_client = (form.get("client_id", ""), form.get("client_secret", ""))
        if basic is not None and form.get("client_secret") and basic != form_client:
            return oauth_error(
                400, "invalid_request", "Invalid request: client credentials given twice"
            )
        client_id, client_secret = basic if basic is not None else form_client
        if not client_id:
            return oauth_error(
                400, "invalid_request", "Invalid request: missing parameter: `client_id`"
            )
        if not self.state.client_ok(client_id, client_secret):
            return oauth_error(401, "invalid_client", "Invalid client: client is invalid")
        code = form.get("code", "")
        if not code:
            return oauth_error(400, "invalid_request", "Invalid request: missing parameter: `code`")
        redirect_uri = form.get("redirect_uri", "")
        record = self.state.codes.get(code)
        if record is None or record.client_id != client_id:
            return oauth_error(400, "invalid_grant", "Invalid grant: authorization code is invalid")
        if record.expires_at <= self.state.clock():
            return oauth_error(
                400, "invalid_grant", "Invalid grant: authorization code has expired"
            )
        if redirect_uri != record.redirect_uri:
            # node-oauth2-server 3 (hejmdal): checked before the code is used up, so it survives.
            return oauth_error(400, "invalid_request", "Invalid request: `redirect_uri` is invalid")
        del self.state.codes[code]  # single use: taken only once it is exchanged
        token = self.state.new_token(record.user_id, sso=record.sso)
        return json_response(
            {"access_token": token, "token_type": "Bearer", "expires_in": TOKEN_LIFETIME}
        )

    def _token_param(self, request: web.Request) -> str | None:
        return bearer_token(request) or request.query.get("access_token") or None

    async def userinfo(self, request: web.Request) -> web.Response:
        # oauth2-server's AuthenticateHandler: one way of sending the token, and a header of
        # the form `Bearer <token>`.
        header = request.headers.get("Authorization", "")
        if header and "access_token" in request.query:
            return oauth_error(
                400, "invalid_request", "Invalid request: only one authentication method is allowed"
            )
        bearer = BEARER.search(header)
        if header and bearer is None:
            return oauth_error(
                400, "invalid_request", "Invalid request: malformed authorization header"
            )
        token = bearer.group(1) if bearer else request.query.get("access_token")
        found = self.state.token(token) if token else None
        if found is None or found.user_id is None:
            return web.Response(status=401)
        record = self.state.record(found.user_id)
        # Only what is configured for the client (by default uniqueId and municipality), and
        # always how the two registers answered (hejmdal's `mapCulrResponse`). With the
        # national register (CULR) down there is no `uniqueId` and no municipality.
        culr_down = self.faults().is_down("culr")
        attributes: dict[str, Any] = {
            "serviceStatus": {"borchk": "ok", "culr": "error" if culr_down else "ok"}
        }
        for name in self.state.userinfo_attributes:
            value = userinfo_attribute(record, name)
            if culr_down and name in ("uniqueId", "municipality"):
                value = _UNKNOWN if name == "uniqueId" else None
            if value is not _UNKNOWN:
                attributes[name] = value
        return json_response({"attributes": {**attributes, **self.state.userinfo_extra}})

    async def revoke(self, request: web.Request) -> web.Response:
        token = self._token_param(request)
        if not token:
            return oauth_error(
                400, "invalid_request", "Invalid request: missing parameter: `access_token`"
            )
        if self.state.tokens.pop(token, None) is None:
            return json_response({"count": 0})
        self.state.revoked.add(token)
        return json_response({"count": 1})

    async def logout(self, request: web.Request) -> web.Response:
        token = request.query.get("access_token", "")
        record = self.state.tokens.get(token) if token else None
        cookie = request.cookies.get(SSO_COOKIE)
        # hejmdal's logout.component.js `validateToken`: `redirect_uri` is followed when it is
        # the token's client's, or, without a token, a client's this browser's session logged
        # in to; anything else is ignored (no error), and the service shows its own page.
        signed_on = bool(cookie) and cookie in self.state.sso_sessions
        sessions = {cookie, record.sso if record is not None else None}
        providers = {self.state.sso_providers.pop(s, None) for s in sessions if s}
        for session in sessions:
            if session:
                self.state.sso_sessions.pop(session, None)
        redirect_uri = request.query.get("redirect_uri", "")
        if (
            redirect_uri
            and (record is not None if token else signed_on)
            and self.state.redirect_ok(redirect_uri)
        ):
            # The return says whether closing the browser is needed too, to end a login the
            # identity provider keeps itself (`getLogoutInfoCode`).
            close = providers & KEEP_THEIR_OWN_LOGIN
            response = found(redirect_uri, message="logout_close_browser" if close else "logout")
        else:
            response = html_response(pages.logged_out_page())
        response.del_cookie(SSO_COOKIE, path="/")
        return response
