"""The earlier flow (spec 4.1, 2.1, 2.2, 2.3): anonymous token, login session, ticket."""

from __future__ import annotations

import httpx

from sandbox.library import LibrarySandbox
from tests.sandbox_library.helpers import anonymous_token, login


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


async def test_login_session_and_ticket(library_sandbox, client):
    token = await login(client, library_sandbox)
    session = await client.get(f"{library_sandbox.urls.login}/login", params={"token": token})
    assert session.status_code == 200
    body = session.json()
    assert isinstance(body["token"], str) and body["token"]
    assert isinstance(body["id"], int)
    ticket = await client.get(
        f"{library_sandbox.urls.login}/getTicket/{body['token']}/{body['id']}"
    )
    assert ticket.status_code == 200
    data = ticket.json()
    assert data["id"] == body["id"] and data["token"] == body["token"]
    attributes = data["attributes"]
    assert "cpr" not in attributes
    assert isinstance(attributes["gender"], str) and len(attributes["gender"]) == 1
    assert attributes["wayfId"] is None and attributes["uniloginId"] is None
    assert len(attributes["birthDate"]) == 4 and attributes["birthDate"].isdigit()
    assert len(attributes["birthYear"]) == 4 and attributes["birthYear"].isdigit()
    assert attributes["municipality"] == "101"
    assert attributes["agencies"] == [
        {"userId": "1000000001", "agencyId": "710100", "userIdType": "LOCAL"},
        {"userId": "1000000001", "agencyId": "751000", "userIdType": "LOCAL"},
    ]


async def test_cpr_only_when_configured(client):
    async with LibrarySandbox(release_cpr=True) as sandbox:
        token = sandbox.issue_token("1000000002")
        session = (await client.get(f"{sandbox.urls.login}/login", params={"token": token})).json()
        ticket = await client.get(
            f"{sandbox.urls.login}/getTicket/{session['token']}/{session['id']}"
        )
        cpr = ticket.json()["attributes"]["cpr"]
        assert isinstance(cpr, str) and len(cpr) == 10 and cpr.isdigit()


async def test_login_refuses_anonymous_and_unknown_tokens(library_sandbox, client):
    url = f"{library_sandbox.urls.login}/login"
    anonymous = await client.get(
        url, params={"token": await anonymous_token(client, library_sandbox)}
    )
    assert anonymous.status_code == 403
    assert anonymous.json() == {"statusCode": 403, "error": "not logged in"}
    unknown = await client.get(url, params={"token": "nope"})
    assert unknown.status_code == 401
    assert unknown.json()["error"] == "invalid_token"


async def test_ticket_needs_the_matching_session_token(library_sandbox, client):
    token = library_sandbox.issue_token("1000000001")
    session = (
        await client.get(f"{library_sandbox.urls.login}/login", params={"token": token})
    ).json()
    for path in (f"wrong/{session['id']}", f"{session['token']}/1", f"{session['token']}/x"):
        response = await client.get(f"{library_sandbox.urls.login}/getTicket/{path}")
        assert response.status_code == 404
        assert response.json() == {"statusCode": 404, "error": "ticket not found"}
    assert isinstance(httpx.URL(library_sandbox.urls.login).port, int)
