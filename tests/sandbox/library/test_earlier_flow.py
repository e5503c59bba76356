"""The earlier flow (spec 4.1, 2.1, 2.2, 2.3): anonymous token, login session, ticket."""

from __future__ import annotations

import httpx

from sandbox.library import LibrarySandbox
from tests.fixtures.patrons import JONAS, KAREN, OLE
from tests.sandbox.library.helpers import anonymous_token


async def test_password_grant_gives_an_anonymous_bearer_token(library_sandbox, client):
    response = await client.post(
        f"{library_sandbox.urls.auth}/oauth/token",
        auth=(library_sandbox.client_id, library_sandbox.client_secret),
        data={"grant_type": "password", "username": "@", "password": "@"},
    )
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"access_token", "token_type", "expires_in"}
    assert isinstance(body["access_token"], str) and body["access_token"]
    assert body["token_type"] == "bearer"
    assert isinstance(body["expires_in"], int) and 2_000_000 < body["expires_in"] < 3_000_000


async def test_password_grant_needs_basic_client_credentials(library_sandbox, client):
    url = f"{library_sandbox.urls.auth}/oauth/token"
    data = {"grant_type": "password", "username": "@", "password": "@"}
    wrong = await client.post(url, auth=(library_sandbox.client_id, "wrong"), data=data)
    assert wrong.status_code == 401
    assert wrong.json()["error"] == "invalid_client"
    missing = await client.post(url, data=data)
    assert missing.status_code == 401
    as_json = await client.post(
        url, auth=(library_sandbox.client_id, library_sandbox.client_secret), json=data
    )
    assert as_json.status_code == 400
    assert as_json.json()["error"] == "invalid_request"


async def test_anonymous_token_is_refused_by_user_but_good_for_public_data(library_sandbox, client):
    token = await anonymous_token(client, library_sandbox)
    user = await client.get(
        f"{library_sandbox.urls.platform}/v3/user", params={"access_token": token}
    )
    assert user.status_code == 403
    assert user.json() == {"statusCode": 403, "error": "not logged in"}
    search = await client.get(
        f"{library_sandbox.urls.platform}/v3/search", params={"access_token": token, "q": "blixen"}
    )
    assert search.status_code == 200


RETURN = "http://127.0.0.1:8080/earlier/return"


async def log_in_at_login_page(
    client: httpx.AsyncClient, sandbox: LibrarySandbox, token: str, **fields: str
) -> httpx.Response:
    """Open the login page with the client's token, then post the form as a browser would."""
    page = await client.get(
        f"{sandbox.urls.login}/login", params={"token": token, "returnurl": RETURN}
    )
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert 'action="/login"' in page.text and KAREN in page.text
    form = {
        "token": token,
        "returnurl": RETURN,
        "agency": "710100",
        "user_id": KAREN,
        "pin": "1234",
        "action": "login",
        **fields,
    }
    return await client.post(f"{sandbox.urls.login}/login", data=form)


async def test_anonymous_token_opens_the_login_page_and_the_ticket_follows(library_sandbox, client):
    token = await anonymous_token(client, library_sandbox)
    done = await log_in_at_login_page(client, library_sandbox, token)
    assert done.status_code == 302
    back = httpx.URL(done.headers["location"])
    assert str(back.copy_with(query=None)) == RETURN
    session_token, session_id = back.params["token"], back.params["id"]
    assert session_token and session_id.isdigit()
    ticket = await client.get(
        f"{library_sandbox.urls.login}/getTicket/{session_token}/{session_id}"
    )
    assert ticket.status_code == 200
    data = ticket.json()
    assert data["id"] == int(session_id) and data["token"] == session_token
    attributes = data["attributes"]
    assert "cpr" not in attributes
    assert isinstance(attributes["gender"], str) and len(attributes["gender"]) == 1
    assert attributes["wayfId"] is None and attributes["uniloginId"] is None
    assert len(attributes["birthDate"]) == 4 and attributes["birthDate"].isdigit()
    assert len(attributes["birthYear"]) == 4 and attributes["birthYear"].isdigit()
    assert attributes["municipality"] == "101"
    assert attributes["agencies"] == [
        {"userId": KAREN, "agencyId": "710100", "userIdType": "LOCAL"},
        {"userId": KAREN, "agencyId": "751000", "userIdType": "LOCAL"},
    ]


async def test_a_ticket_is_read_once(library_sandbox, client):
    session_token, session_id = library_sandbox.open_ticket(OLE)
    url = f"{library_sandbox.urls.login}/getTicket/{session_token}/{session_id}"
    first = await client.get(url)
    assert first.json()["attributes"]["municipality"] == "101"
    again = await client.get(url)
    assert again.status_code == 200
    assert again.json() == {"id": session_id, "token": session_token, "attributes": None}


async def test_wrong_pin_shows_the_form_again_and_cancel_goes_back(library_sandbox, client):
    token = await anonymous_token(client, library_sandbox)
    wrong = await log_in_at_login_page(client, library_sandbox, token, pin="0000")
    assert wrong.status_code == 200
    assert "Wrong user id or PIN" in wrong.text
    cancelled = await log_in_at_login_page(client, library_sandbox, token, action="deny")
    assert cancelled.status_code == 302
    assert cancelled.headers["location"] == f"{RETURN}?error=LoginCancelled"


async def test_without_returnurl_the_page_shows_the_session(library_sandbox, client):
    token = await anonymous_token(client, library_sandbox)
    form = {"token": token, "agency": "710100", "user_id": JONAS, "pin": "1234"}
    page = await client.post(f"{library_sandbox.urls.login}/login", data=form)
    assert page.status_code == 200
    session_token = page.text.split("id=tickettoken>")[1].split("<")[0]
    session_id = page.text.split("id=ticketid>")[1].split("<")[0]
    ticket = await client.get(
        f"{library_sandbox.urls.login}/getTicket/{session_token}/{session_id}"
    )
    assert ticket.json()["attributes"]["agencies"][0]["userId"] == JONAS


async def test_single_sign_on_offers_to_continue(library_sandbox):
    async with httpx.AsyncClient(timeout=5.0) as browser:
        token = await anonymous_token(browser, library_sandbox)
        await log_in_at_login_page(browser, library_sandbox, token)
        page = await browser.get(
            f"{library_sandbox.urls.login}/login", params={"token": token, "returnurl": RETURN}
        )
        assert "Karen Jensen" in page.text and "value=continue" in page.text
        done = await browser.post(
            f"{library_sandbox.urls.login}/login",
            data={"token": token, "returnurl": RETURN, "action": "continue"},
        )
        assert done.status_code == 302 and "id=" in done.headers["location"]


async def test_cpr_only_when_configured(client):
    async with LibrarySandbox(release_cpr=True) as sandbox:
        session_token, session_id = sandbox.open_ticket(OLE)
        ticket = await client.get(f"{sandbox.urls.login}/getTicket/{session_token}/{session_id}")
        cpr = ticket.json()["attributes"]["cpr"]
        assert isinstance(cpr, str) and len(cpr) == 10 and cpr.isdigit()


async def test_login_page_refuses_unknown_tokens_and_foreign_return_addresses(
    library_sandbox, client
):
    url = f"{library_sandbox.urls.login}/login"
    unknown = await client.get(url, params={"token": "nope"})
    assert unknown.status_code == 403
    assert "ugyldigt token" in unknown.text
    expired = library_sandbox.issue_token(KAREN)
    library_sandbox.expire_token(expired)
    assert (await client.get(url, params={"token": expired})).status_code == 403
    token = await anonymous_token(client, library_sandbox)
    foreign = await client.get(
        url, params={"token": token, "returnurl": "https://evil.example.com/x"}
    )
    assert foreign.status_code == 400


async def test_ticket_needs_the_matching_session_token(library_sandbox, client):
    session_token, session_id = library_sandbox.open_ticket(KAREN)
    for path, ticket_id, token in (
        (f"wrong/{session_id}", session_id, "wrong"),
        (f"{session_token}/1", 1, session_token),
        (f"{session_token}/x", "x", session_token),
    ):
        response = await client.get(f"{library_sandbox.urls.login}/getTicket/{path}")
        assert response.status_code == 200
        assert response.json() == {"id": ticket_id, "token": token, "attributes": False}
    # The failed reads did not use the ticket up.
    good = await client.get(f"{library_sandbox.urls.login}/getTicket/{session_token}/{session_id}")
    assert good.json()["attributes"]["municipality"] == "101"
