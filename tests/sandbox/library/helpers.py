"""Shared steps of the sandbox tests: the login journey over real HTTP."""

from __future__ import annotations

import httpx

from sandbox.library import LibrarySandbox
from tests.fixtures.patrons import KAREN

REDIRECT = "http://127.0.0.1:8080/oauth/callback"


def form(
    sandbox: LibrarySandbox,
    *,
    user_id: str = KAREN,
    pin: str = "1234",
    action: str = "login",
    state: str = "s-1",
    redirect_uri: str = REDIRECT,
    agency: str = "710100",
) -> dict[str, str]:
    return {
        "response_type": "code",
        "client_id": sandbox.client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "agency": agency,
        "user_id": user_id,
        "pin": pin,
        "action": action,
    }


async def get_code(client: httpx.AsyncClient, sandbox: LibrarySandbox, **fields: str) -> str:
    response = await client.post(
        f"{sandbox.urls.oauth}/oauth/authorize", data=form(sandbox, **fields)
    )
    assert response.status_code == 302, response.text
    return httpx.URL(response.headers["location"]).params["code"]


async def exchange(
    client: httpx.AsyncClient, sandbox: LibrarySandbox, code: str, redirect_uri: str = REDIRECT
) -> httpx.Response:
    return await client.post(
        f"{sandbox.urls.oauth}/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "client_id": sandbox.client_id,
            "client_secret": sandbox.client_secret,
            "redirect_uri": redirect_uri,
        },
    )


async def login(client: httpx.AsyncClient, sandbox: LibrarySandbox, user_id: str = KAREN) -> str:
    """The whole code flow as a browser and a bot would do it; the patron's token."""
    code = await get_code(client, sandbox, user_id=user_id)
    response = await exchange(client, sandbox, code)
    assert response.status_code == 200, response.text
    token = response.json()["access_token"]
    assert isinstance(token, str)
    return token


async def anonymous_token(client: httpx.AsyncClient, sandbox: LibrarySandbox) -> str:
    response = await client.post(
        f"{sandbox.urls.auth}/oauth/token",
        auth=(sandbox.client_id, sandbox.client_secret),
        data={"grant_type": "password", "username": "@", "password": "@"},
    )
    assert response.status_code == 200, response.text
    token = response.json()["access_token"]
    assert isinstance(token, str)
    return token
