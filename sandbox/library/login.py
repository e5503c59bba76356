"""The login both flows of the access service share: the form, the typed credentials, and
single sign-on.

A successful login in either flow sets the `sandbox_sso` cookie. The code flow's next authorize
in the same browser then logs the same patron in without a page (`oauth.py`), as hejmdal does;
the earlier flow's login page offers "continue as ..." for it.
"""

from __future__ import annotations

import secrets

from aiohttp import web

from sandbox.library import pages
from sandbox.library.data import LIBRARIES, PatronRecord
from sandbox.library.responses import html_response
from sandbox.library.state import SandboxState

SSO_COOKIE = "sandbox_sso"
AGENCY_IDS = {agency_id for agency_id, _, _ in LIBRARIES}
WRONG_LOGIN = (
    "Forkert låner-id eller pinkode for det valgte bibliotek. "
    "/ Wrong user id or PIN for the chosen library."
)
SESSION_EXPIRED = "Sessionen er udløbet. / Session expired."


def sso_user(state: SandboxState, request: web.Request) -> str | None:
    """The patron this browser is logged in as, if any."""
    cookie = request.cookies.get(SSO_COOKIE)
    return state.sso_sessions.get(cookie) if cookie else None


def login_form(
    state: SandboxState,
    request: web.Request,
    params: dict[str, str],
    *,
    fields: dict[str, str],
    action: str,
    error: str | None = None,
    offer_sso: bool = True,
) -> web.Response:
    """The login page, keeping what was typed; `fields` are posted back to `action` hidden."""
    user = sso_user(state, request) if offer_sso else None
    text = pages.login_page(
        fields=fields,
        patrons=[record.patron for record in state.test_patrons],
        agency=params.get("agency") or params.get("presel") or "",
        user_id=params.get("user_id", ""),
        error=error,
        sso_name=state.records[user].patron.name if user else None,
        action=action,
    )
    return html_response(text)


def typed_login(state: SandboxState, params: dict[str, str]) -> PatronRecord | None:
    """The patron whose id and PIN were typed, at the chosen library (if one was chosen)."""
    agency = params.get("agency", "")
    if agency and agency not in AGENCY_IDS:
        return None
    return state.check_login(params.get("user_id", ""), params.get("pin", ""), agency)


# Identity providers that keep a login of their own, which only closing the browser ends
# (hejmdal's `getLogoutInfoCode`): a logout from them returns `message=logout_close_browser`.
KEEP_THEIR_OWN_LOGIN = frozenset({"unilogin", "wayf"})


def start_sso(state: SandboxState, user_id: str, idp: str = "borchk") -> str:
    """A new single sign-on session for the patron, made through identity provider `idp` (the
    library's own login unless the authorize request named another); the cookie's value."""
    cookie = secrets.token_urlsafe(18)
    state.sso_sessions[cookie] = user_id
    state.sso_providers[cookie] = idp
    return cookie


def set_sso_cookie(response: web.Response, cookie: str) -> web.Response:
    response.set_cookie(SSO_COOKIE, cookie, httponly=True, samesite="Lax", path="/")
    return response
