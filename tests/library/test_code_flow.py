"""The code flow end to end against the sandbox access service."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
import pytest

from bot.library.client import LibraryClient
from bot.library.errors import BadRequest, TokenRejected
from tests.fixtures.patrons import OLE
from tests.library.conftest import REDIRECT_URI, login_code, make_client

if TYPE_CHECKING:
    from sandbox.library import LibrarySandbox


async def test_whole_code_flow(library_sandbox: LibrarySandbox, client: LibraryClient) -> None:
    url = client.authorize_url(redirect_uri=REDIRECT_URI, state="s-1")
    async with httpx.AsyncClient() as http:
        page = await http.get(url)
    assert page.status_code == 200  # the sandbox's login form

    code = await login_code(library_sandbox, state="s-1")
    grant = await client.exchange_code(code, redirect_uri=REDIRECT_URI)
    assert grant.access_token
    assert grant.token_type.lower() == "bearer"
    assert grant.expires_in is not None and grant.expires_in > 86400

    info = await client.userinfo(grant.access_token)
    assert info.unique_id
    assert info.municipality == "101"
    assert set(info.model_dump()) == {"unique_id", "municipality"}

    status = await client.user(grant.access_token)
    assert status.name == "Karen Jensen"

    assert await client.revoke(grant.access_token) is True
    with pytest.raises(TokenRejected):
        await client.user(grant.access_token)


async def test_code_is_single_use(library_sandbox: LibrarySandbox, client: LibraryClient) -> None:
    code = await login_code(library_sandbox)
    await client.exchange_code(code, redirect_uri=REDIRECT_URI)
    with pytest.raises(BadRequest) as caught:
        await client.exchange_code(code, redirect_uri=REDIRECT_URI)
    assert caught.value.code == "invalid_grant"
    assert code not in str(caught.value)


async def test_redirect_uri_must_match(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    code = await login_code(library_sandbox)
    with pytest.raises(BadRequest) as caught:
        await client.exchange_code(code, redirect_uri="http://127.0.0.1:9/elsewhere")
    assert caught.value.code == "invalid_request"  # hejmdal: checked before the code is used
    token = await client.exchange_code(code, redirect_uri=REDIRECT_URI)
    assert token.access_token


async def test_wrong_client_secret_is_invalid_client(library_sandbox: LibrarySandbox) -> None:
    code = await login_code(library_sandbox)
    wrong = make_client(library_sandbox, client_secret="not-the-secret")
    try:
        with pytest.raises(BadRequest) as caught:
            await wrong.exchange_code(code, redirect_uri=REDIRECT_URI)
    finally:
        await wrong.aclose()
    assert caught.value.code == "invalid_client"
    assert "not-the-secret" not in str(caught.value)


async def test_userinfo_with_a_bad_token(client: LibraryClient) -> None:
    with pytest.raises(TokenRejected) as caught:
        await client.userinfo("no-such-token")
    assert caught.value.status == 401
    assert "no-such-token" not in str(caught.value)


async def test_userinfo_of_an_expired_token(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    token = library_sandbox.issue_token(OLE)
    assert (await client.userinfo(token)).unique_id
    library_sandbox.expire_token(token)
    with pytest.raises(TokenRejected):
        await client.userinfo(token)
