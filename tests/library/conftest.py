"""Helpers for the library client tests: a client pointed at the running sandbox."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from bot.library.client import LibraryClient
from tests.fixtures.patrons import KAREN

if TYPE_CHECKING:
    from sandbox.library import LibrarySandbox

REDIRECT_URI = "http://127.0.0.1:9/oauth/callback"
PATRON = KAREN


def make_client(sandbox: LibrarySandbox, **overrides: Any) -> LibraryClient:
    """A client for the sandbox; `overrides` replace any constructor argument."""
    options: dict[str, Any] = {
        "oauth_url": sandbox.urls.oauth,
        "auth_url": sandbox.urls.auth,
        "login_url": sandbox.urls.login,
        "platform_url": sandbox.urls.platform,
        "client_id": sandbox.client_id,
        "client_secret": sandbox.client_secret,
        "timeout": 3.0,
        **overrides,
    }
    return LibraryClient(**options)


@pytest.fixture
async def client(library_sandbox: LibrarySandbox) -> AsyncIterator[LibraryClient]:
    library = make_client(library_sandbox)
    yield library
    await library.aclose()


async def login_code(
    sandbox: LibrarySandbox,
    *,
    user_id: str = PATRON,
    pin: str = "1234",
    state: str = "state-123",
    redirect_uri: str = REDIRECT_URI,
) -> str:
    """Post the sandbox's login form as a patron would, and return the code it redirects with."""
    async with httpx.AsyncClient(follow_redirects=False) as http:
        response = await http.post(
            f"{sandbox.urls.oauth}/oauth/authorize",
            data={
                "response_type": "code",
                "client_id": sandbox.client_id,
                "redirect_uri": redirect_uri,
                "state": state,
                "agency": "710100",
                "user_id": user_id,
                "pin": pin,
                "action": "login",
            },
        )
    assert response.status_code in (302, 303), response.text
    location = response.headers["location"]
    assert location.startswith(redirect_uri)
    query = parse_qs(urlsplit(location).query)
    assert query["state"] == [state]
    return query["code"][0]
