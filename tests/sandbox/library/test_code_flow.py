"""The access service's code flow, held to the spec (4.2, 2.1, 2.4) and the production notes."""

from __future__ import annotations

import re
import uuid

import httpx
import pytest

from sandbox.library import LibrarySandbox
from sandbox.library.state import loopback_url
from tests.fixtures.patrons import KAREN, OLE
from tests.sandbox.library.helpers import REDIRECT, exchange, form, get_code, login


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def authorize_params(sandbox: LibrarySandbox, **extra: str) -> dict[str, str]:
    return {
        "response_type": "code",
        "client_id": sandbox.client_id,
        "redirect_uri": REDIRECT,
        "state": "abc",
        **extra,
    }


async def test_login_page_is_a_usable_form(library_sandbox, client):
    response = await client.get(
        f"{library_sandbox.urls.oauth}/oauth/authorize", params=authorize_params(library_sandbox)
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    page = response.text
    assert '<form method=post action="/oauth/authorize">' in page
    for name in ("response_type", "client_id", "redirect_uri", "state", "agency", "user_id", "pin"):
        assert f'name="{name}"' in page or f"name={name}" in page, name
    assert 'value="abc"' in page
    assert re.search(r'<option value="710100"[^>]*>Københavns Biblioteker', page)
    assert "value=login" in page and "value=deny" in page
    assert "Log ind" in page and "Afvis" in page
    # The hint box lists every test patron with the pin.
    for patron in library_sandbox.patrons:
        assert f"<code>{patron.user_id}</code>" in page
    assert "Karen Jensen" in page


async def test_unknown_client_gets_a_400_page_and_no_redirect(library_sandbox, client):
    response = await client.get(
        f"{library_sandbox.urls.oauth}/oauth/authorize",
        params=authorize_params(library_sandbox, client_id="somebody-else"),
    )
    assert response.status_code == 400
    assert "location" not in response.headers
    assert "Unknown client" in response.text


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "https://evil.example.com/cb",
        "ftp://127.0.0.1/cb",
        "http://127.0.0.1:8080/cb#fragment",
        "",
        "not a url",
    ],
)
async def test_bad_redirect_uri_never_redirects(library_sandbox, client, redirect_uri):
    for method in ("GET", "POST"):
        params = authorize_params(library_sandbox, redirect_uri=redirect_uri)
        if method == "GET":
            response = await client.get(
                f"{library_sandbox.urls.oauth}/oauth/authorize", params=params
            )
        else:
            response = await client.post(
                f"{library_sandbox.urls.oauth}/oauth/authorize",
                data=form(library_sandbox, redirect_uri=redirect_uri),
            )
        assert response.status_code == 400
        assert "location" not in response.headers
        assert "redirect_uri" in response.text


def test_default_redirect_rule_allows_only_local_hosts():
    for good in (
        "http://127.0.0.1:8080/oauth/callback",
        "http://127.1.2.3/cb",
        "http://localhost:9/cb",
        "http://[::1]:8080/cb",
        "https://bot.localhost/cb",
        "https://library-bot.test/oauth/callback?x=1",
    ):
        assert loopback_url(good), good
    for bad in (
        "http://10.0.0.1/cb",
        "https://example.com/cb",
        "https://localhost.example.com/cb",
        "javascript:alert(1)",
        "http://127.0.0.1:99999/cb",
    ):
        assert not loopback_url(bad), bad


async def test_registered_redirect_uris_are_matched_exactly(client):
    registered = "https://bot.example.org/oauth/callback"
    async with LibrarySandbox(redirect_uris=[registered]) as sandbox:
        good = await client.get(
            f"{sandbox.urls.oauth}/oauth/authorize",
            params=authorize_params(sandbox, redirect_uri=registered),
        )
        assert good.status_code == 200
        bad = await client.get(
            f"{sandbox.urls.oauth}/oauth/authorize",
            params=authorize_params(sandbox, redirect_uri=REDIRECT),
        )
        assert bad.status_code == 400


async def test_unsupported_response_type_redirects_with_error(library_sandbox, client):
    response = await client.get(
        f"{library_sandbox.urls.oauth}/oauth/authorize",
        params=authorize_params(library_sandbox, response_type="token"),
    )
    assert response.status_code == 302
    params = httpx.URL(response.headers["location"]).params
    assert params["error"] == "unsupported_response_type"
    assert params["state"] == "abc"
    assert "code" not in params


async def test_login_redirects_with_code_and_state(library_sandbox, client):
    response = await client.post(
        f"{library_sandbox.urls.oauth}/oauth/authorize",
        data=form(library_sandbox, state="state with spaces & signs"),
    )
    assert response.status_code == 302
    location = httpx.URL(response.headers["location"])
    assert str(location.copy_with(query=None)) == REDIRECT
    assert location.params["state"] == "state with spaces & signs"
    assert len(location.params["code"]) >= 20


async def test_redirect_uri_query_is_kept(library_sandbox, client):
    redirect = "http://127.0.0.1:8080/cb?lang=da"
    response = await client.post(
        f"{library_sandbox.urls.oauth}/oauth/authorize",
        data=form(library_sandbox, redirect_uri=redirect),
    )
    params = httpx.URL(response.headers["location"]).params
    assert params["lang"] == "da" and params["code"]


async def test_state_is_optional(library_sandbox, client):
    fields = form(library_sandbox)
    del fields["state"]
    response = await client.post(f"{library_sandbox.urls.oauth}/oauth/authorize", data=fields)
    params = httpx.URL(response.headers["location"]).params
    assert "code" in params and "state" not in params


@pytest.mark.parametrize(
    ("user_id", "pin", "agency"),
    [
        (KAREN, "9999", "710100"),
        ("1999999999", "1234", "710100"),
        (KAREN, "1234", "746100"),
    ],
)
async def test_wrong_credentials_reshow_the_form_without_a_code(
    library_sandbox, client, user_id, pin, agency
):
    response = await client.post(
        f"{library_sandbox.urls.oauth}/oauth/authorize",
        data=form(library_sandbox, user_id=user_id, pin=pin, agency=agency),
    )
    assert response.status_code == 200
    assert "location" not in response.headers
    assert "Forkert låner-id eller pinkode" in response.text
    assert "Wrong user id or PIN" in response.text
    assert f'value="{user_id}"' in response.text  # the user id is kept, the pin is not
    assert 'value="9999"' not in response.text
    assert not library_sandbox._state.codes


async def test_deny_redirects_with_access_denied_and_state(library_sandbox, client):
    response = await client.post(
        f"{library_sandbox.urls.oauth}/oauth/authorize",
        data=form(library_sandbox, action="deny", pin=""),
    )
    assert response.status_code == 302
    params = httpx.URL(response.headers["location"]).params
    assert params["error"] == "access_denied"
    assert params["state"] == "s-1"
    assert "code" not in params


async def test_token_response_fields_and_types(library_sandbox, client):
    code = await get_code(client, library_sandbox)
    response = await exchange(client, library_sandbox, code)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"access_token", "token_type", "expires_in"}
    assert isinstance(body["access_token"], str) and body["access_token"]
    assert body["token_type"] == "Bearer"
    assert isinstance(body["expires_in"], int) and body["expires_in"] == 2592000


async def test_client_credentials_may_come_as_http_basic(library_sandbox, client):
    code = await get_code(client, library_sandbox)
    response = await client.post(
        f"{library_sandbox.urls.oauth}/oauth/token",
        auth=(library_sandbox.client_id, library_sandbox.client_secret),
        data={"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT},
    )
    assert response.status_code == 200
    assert response.json()["token_type"] == "Bearer"


async def test_code_is_single_use(library_sandbox, client):
    code = await get_code(client, library_sandbox)
    assert (await exchange(client, library_sandbox, code)).status_code == 200
    again = await exchange(client, library_sandbox, code)
    assert again.status_code == 400
    assert again.json() == {
        "error": "invalid_grant",
        "error_description": "Invalid grant: authorization code is invalid",
    }


async def test_code_expires_after_five_minutes(client):
    clock = Clock()
    async with LibrarySandbox(clock=clock) as sandbox:
        fresh = await get_code(client, sandbox)
        stale = await get_code(client, sandbox)
        clock.now += 299
        assert (await exchange(client, sandbox, fresh)).status_code == 200
        clock.now += 2
        response = await exchange(client, sandbox, stale)
        assert response.status_code == 400
        assert response.json() == {
            "error": "invalid_grant",
            "error_description": "Invalid grant: authorization code has expired",
        }


async def test_unknown_code_is_invalid_grant(library_sandbox, client):
    response = await exchange(client, library_sandbox, "no-such-code")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"


async def test_redirect_uri_must_equal_the_one_at_authorize(library_sandbox, client):
    """node-oauth2-server 3 (hejmdal) checks it before the code is used up: `invalid_request`,
    and the code still works with the right `redirect_uri`."""
    code = await get_code(client, library_sandbox)
    response = await exchange(client, library_sandbox, code, "http://127.0.0.1:8080/other")
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_request",
        "error_description": "Invalid request: `redirect_uri` is invalid",
    }
    assert (await exchange(client, library_sandbox, code)).status_code == 200
    assert (await exchange(client, library_sandbox, code)).json()["error"] == "invalid_grant"


async def test_wrong_client_secret_is_invalid_client(library_sandbox, client):
    code = await get_code(client, library_sandbox)
    response = await client.post(
        f"{library_sandbox.urls.oauth}/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "client_id": library_sandbox.client_id,
            "client_secret": "wrong",
            "redirect_uri": REDIRECT,
        },
    )
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"
    assert "error_description" in response.json()


async def test_token_endpoint_is_form_encoded_only(library_sandbox, client):
    code = await get_code(client, library_sandbox)
    response = await client.post(
        f"{library_sandbox.urls.oauth}/oauth/token",
        json={
            "grant_type": "authorization_code",
            "code": code,
            "client_id": library_sandbox.client_id,
            "client_secret": library_sandbox.client_secret,
            "redirect_uri": REDIRECT,
        },
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"
    # The code was not used up by the rejected request.
    assert (await exchange(client, library_sandbox, code)).status_code == 200


async def test_userinfo_returns_guid_and_municipality_and_the_registers_status_only(
    library_sandbox, client
):
    token = await login(client, library_sandbox)
    by_header = await client.get(
        f"{library_sandbox.urls.oauth}/userinfo", headers={"Authorization": f"Bearer {token}"}
    )
    by_query = await client.get(
        f"{library_sandbox.urls.oauth}/userinfo", params={"access_token": token}
    )
    assert by_header.status_code == by_query.status_code == 200
    assert by_header.json() == by_query.json()
    attributes = by_header.json()["attributes"]
    # hejmdal's `mapCulrResponse` always says how the registers answered.
    assert set(attributes) == {"uniqueId", "municipality", "serviceStatus"}
    assert attributes["serviceStatus"] == {"borchk": "ok", "culr": "ok"}
    assert uuid.UUID(attributes["uniqueId"])
    assert attributes["municipality"] == "101"
    assert "cpr" not in by_header.text
    # Stable per patron, different between patrons.
    again = await client.get(
        f"{library_sandbox.urls.oauth}/userinfo",
        params={"access_token": library_sandbox.issue_token(KAREN)},
    )
    other = await client.get(
        f"{library_sandbox.urls.oauth}/userinfo",
        params={"access_token": library_sandbox.issue_token(OLE)},
    )
    assert again.json()["attributes"]["uniqueId"] == attributes["uniqueId"]
    assert other.json()["attributes"]["uniqueId"] != attributes["uniqueId"]


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer nonsense"}])
async def test_userinfo_without_a_good_token_is_401_with_empty_body(
    library_sandbox, client, headers
):
    response = await client.get(f"{library_sandbox.urls.oauth}/userinfo", headers=headers)
    assert response.status_code == 401
    assert response.content == b""


async def test_userinfo_refuses_an_expired_token(library_sandbox, client):
    token = library_sandbox.issue_token(KAREN)
    library_sandbox.expire_token(token)
    response = await client.get(
        f"{library_sandbox.urls.oauth}/userinfo", params={"access_token": token}
    )
    assert response.status_code == 401


async def test_revoke_counts_and_stops_the_token(library_sandbox, client):
    token = await login(client, library_sandbox)
    url = f"{library_sandbox.urls.oauth}/oauth/revoke"
    first = await client.delete(url, params={"access_token": token})
    assert first.status_code == 200 and first.json() == {"count": 1}
    second = await client.delete(url, params={"access_token": token})
    assert second.json() == {"count": 0}
    user = await client.get(
        f"{library_sandbox.urls.platform}/v3/user", params={"access_token": token}
    )
    assert user.status_code == 401


async def test_a_signed_on_browser_is_logged_in_again_without_a_page(library_sandbox, client):
    """hejmdal's `shouldUserLogIn`: a browser with a single sign-on session gets a code for
    the same patron at once; `force_login` (any value) or another `idp` shows the login page."""
    await login(client, library_sandbox)
    authorize = f"{library_sandbox.urls.oauth}/oauth/authorize"
    again = await client.get(authorize, params=authorize_params(library_sandbox))
    assert again.status_code == 302
    location = httpx.URL(again.headers["location"])
    assert location.params["state"] == authorize_params(library_sandbox)["state"]
    token = await client.post(
        f"{library_sandbox.urls.oauth}/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": location.params["code"],
            "redirect_uri": REDIRECT,
            "client_id": library_sandbox.client_id,
            "client_secret": library_sandbox.client_secret,
        },
    )
    assert token.status_code == 200
    for extra in ({"force_login": "1"}, {"force_login": "0"}, {"idp": "unilogin"}):
        page = await client.get(authorize, params={**authorize_params(library_sandbox), **extra})
        assert page.status_code == 200 and "name=pin" in page.text, extra
        assert "allerede logget ind" not in page.text


async def test_userinfo_takes_one_well_formed_way_of_sending_the_token(library_sandbox, client):
    """oauth2-server's AuthenticateHandler: a header and a query token together, or a header
    not of the form `Bearer <token>`, are 400 `invalid_request`."""
    token = await login(client, library_sandbox)
    url = f"{library_sandbox.urls.oauth}/userinfo"
    both = await client.get(
        url, headers={"Authorization": f"Bearer {token}"}, params={"access_token": token}
    )
    lower = await client.get(url, headers={"Authorization": f"bearer {token}"})
    for response in (both, lower):
        assert response.status_code == 400
        assert response.json()["error"] == "invalid_request"


async def test_userinfo_while_the_user_register_is_down(library_sandbox, client):
    """hejmdal: CULR failing leaves `uniqueId` out and `municipality` null, still HTTP 200."""
    token = await login(client, library_sandbox)
    library_sandbox.faults.down.add("culr")
    info = await client.get(
        f"{library_sandbox.urls.oauth}/userinfo", params={"access_token": token}
    )
    assert info.status_code == 200
    assert info.json()["attributes"] == {
        "serviceStatus": {"borchk": "ok", "culr": "error"},
        "municipality": None,
    }


async def test_logout_ends_sso_but_does_not_revoke(library_sandbox, client):
    token = await login(client, library_sandbox)
    authorize = f"{library_sandbox.urls.oauth}/oauth/authorize"
    signed_on = await client.get(authorize, params=authorize_params(library_sandbox))
    assert signed_on.status_code == 302 and "code=" in signed_on.headers["location"]

    # The bot logs out server-side, without the browser's cookie.
    async with httpx.AsyncClient() as bot:
        response = await bot.get(
            f"{library_sandbox.urls.oauth}/logout",
            params={"access_token": token, "redirect_uri": REDIRECT},
        )
    assert response.status_code == 302
    assert response.headers["location"] == f"{REDIRECT}?message=logout"
    page = await client.get(authorize, params=authorize_params(library_sandbox))
    assert page.status_code == 200 and "name=pin" in page.text
    user = await client.get(
        f"{library_sandbox.urls.platform}/v3/user", params={"access_token": token}
    )
    assert user.status_code == 200


async def test_logout_after_a_login_that_keeps_its_own_says_close_the_browser(
    library_sandbox, client
):
    """hejmdal's logout component: UNI-login and WAYF keep a login of their own, which only
    closing the browser ends; the return to the client says so."""
    authorize = f"{library_sandbox.urls.oauth}/oauth/authorize"
    login = await client.post(authorize, data={**form(library_sandbox), "idp": "unilogin"})
    assert login.status_code == 302
    response = await client.get(
        f"{library_sandbox.urls.oauth}/logout", params={"redirect_uri": REDIRECT}
    )
    assert response.headers["location"] == f"{REDIRECT}?message=logout_close_browser"
    # Once logged out, the browser's session knows no client to return to (`validateToken`
    # follows a redirect_uri of the session's clients only): the service's own page.
    again = await client.get(
        f"{library_sandbox.urls.oauth}/logout", params={"redirect_uri": REDIRECT}
    )
    assert again.status_code == 200 and "location" not in again.headers
    assert "logget ud" in again.text


async def test_logout_without_redirect_shows_a_page(library_sandbox, client):
    response = await client.get(f"{library_sandbox.urls.oauth}/logout")
    assert response.status_code == 200
    assert "logget ud" in response.text
