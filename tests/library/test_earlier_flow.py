"""The earlier flow: the anonymous token, its cache, login and getTicket."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

import httpx
import pytest

from bot.library.client import PUBLIC_TOKEN_MARGIN, LibraryClient
from bot.library.errors import BadRequest, NotLoggedIn
from tests.fixtures.patrons import KAREN
from tests.library.conftest import make_client

if TYPE_CHECKING:
    from sandbox.library import LibrarySandbox

TOKEN_CALLS = "auth POST /oauth/token"


async def test_password_grant(library_sandbox: LibrarySandbox, client: LibraryClient) -> None:
    grant = await client.password_grant()
    assert grant.access_token
    assert grant.token_type.lower() == "bearer"
    assert grant.expires_in and grant.expires_in > 86400


async def test_anonymous_token_is_not_a_patron(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    token = await client.public_token()
    with pytest.raises(NotLoggedIn) as caught:
        await client.user(token)
    assert caught.value.status == 403


async def test_public_token_is_cached_and_shared(library_sandbox: LibrarySandbox) -> None:
    before = library_sandbox.calls[TOKEN_CALLS]
    async with make_client(library_sandbox) as library:
        tokens = await asyncio.gather(*(library.public_token() for _ in range(8)))
        assert len(set(tokens)) == 1
        assert await library.public_token() == tokens[0]
        results = await asyncio.gather(
            library.search_public("kongens", limit=3),
            library.work_public(["870970-basis:29318871"]),
            library.libraries_public(agency_ids=["710100"]),
        )
        assert results[1][0].pid == "870970-basis:29318871"
        assert results[2]
    assert library_sandbox.calls[TOKEN_CALLS] == before + 1


async def test_public_token_is_renewed_after_a_401(library_sandbox: LibrarySandbox) -> None:
    async with make_client(library_sandbox) as library:
        first = await library.public_token()
        library_sandbox.expire_token(first)
        before = library_sandbox.calls[TOKEN_CALLS]
        works = await library.work_public(["870970-basis:29318871"])
        assert works[0].title
        assert library_sandbox.calls[TOKEN_CALLS] == before + 1
        assert await library.public_token() != first


async def test_public_token_is_renewed_before_it_expires(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    grant = await client.password_grant()
    assert grant.expires_in
    started = time.monotonic()
    await client.public_token()
    cached = client._public
    assert cached is not None
    # Renewed a minute before the service's expiry, not at it.
    expected = started + grant.expires_in - PUBLIC_TOKEN_MARGIN
    assert abs(cached.renew_at - expected) < 5
    before = library_sandbox.calls[TOKEN_CALLS]
    client._public = type(cached)(cached.token, time.monotonic() - 1)  # that minute has come
    renewed = await client.public_token()
    assert library_sandbox.calls[TOKEN_CALLS] == before + 1
    assert renewed != cached.token


async def test_login_page_and_ticket(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    token = await client.public_token()
    url = client.login_page_url(token, return_url="http://127.0.0.1:9/back")
    assert url.startswith(f"{client.login_url}/login?token=")
    # The login page is a page for the browser (HTML), never a JSON session.
    async with httpx.AsyncClient() as http:
        page = await http.get(url)
    assert page.status_code == 200 and "html" in page.headers["content-type"]
    # The browser comes back with the session token and id: the sandbox's hook stands in.
    session_token, ticket_id = library_sandbox.open_ticket(KAREN)
    session = client.session_from_return({"token": session_token, "id": str(ticket_id)})
    ticket = await client.get_ticket(session)
    assert ticket.id == session.id
    assert ticket.attributes.municipality == "101"
    assert {agency.agency_id for agency in ticket.attributes.agencies} >= {"710100"}
    assert "cpr" not in ticket.model_dump_json().lower()
    # A ticket is read once; the second read has no attributes and is refused.
    with pytest.raises(BadRequest) as caught:
        await client.get_ticket(session)
    assert caught.value.code == "invalid_ticket"
    with pytest.raises(BadRequest):
        client.session_from_return({"error": "LoginCancelled"})
