"""The library client on the wire (aiohttp): what the hand-written client's tests checked and
still matters. Real servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import gzip
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from ipaddress import ip_address
from pathlib import Path

import pytest
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from bot.library.client import LibraryClient
from bot.library.errors import NOT_SENT, ServiceUnavailable

SECRET = "tok-3f9a"
USER = {"statusCode": 200, "data": {"name": "Karen Jensen", "loans": []}}


async def user(request: web.Request) -> web.Response:
    assert request.headers["Authorization"] == f"Bearer {SECRET}"
    return web.json_response(USER)


async def zipped(request: web.Request) -> web.Response:
    return web.Response(
        body=gzip.compress(web.json_response(USER).body),  # type: ignore[arg-type]
        headers={"Content-Encoding": "gzip", "Content-Type": "application/json"},
    )


async def redirect(request: web.Request) -> web.Response:
    return web.Response(status=302, headers={"Location": "/v3/user"})


@asynccontextmanager
async def serving(
    handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
    tls: ssl.SSLContext | None = None,
) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_route("*", "/v3/user", handler)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=tls)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


def client_for(url: str) -> LibraryClient:
    return LibraryClient(
        oauth_url=url, auth_url=url, platform_url=url, client_id="c", client_secret="s", timeout=2.0
    )


async def test_a_gzipped_answer_is_decoded() -> None:
    async with serving(zipped) as url, client_for(url) as client:
        assert (await client.user(SECRET)).name == "Karen Jensen"


async def test_redirects_are_not_followed() -> None:
    async with serving(redirect) as url, client_for(url) as client:
        with pytest.raises(ServiceUnavailable) as caught:
            await client.user(SECRET)
    assert caught.value.status == 302


async def test_a_cookie_one_patron_got_does_not_go_with_the_next_patrons_call() -> None:
    """One session serves every patron; a service's cookie must not carry one patron's session
    into another's call."""
    sent: list[str | None] = []

    async def cookie_setting(request: web.Request) -> web.Response:
        sent.append(request.headers.get("Cookie"))
        response = web.json_response(USER)
        response.set_cookie("session", "of-the-first-patron", path="/")
        return response

    async with serving(cookie_setting) as url:
        # A host name: aiohttp keeps no cookie of a bare IP address anyway.
        named = url.replace("127.0.0.1", "localhost")
        async with client_for(named) as client:
            await client.user("token-of-one-patron")
            await client.user("token-of-another")
    assert sent == [None, None]


def _self_signed(directory: Path) -> ssl.SSLContext:
    """A server context with a fresh certificate for 127.0.0.1 that nobody trusts."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=1))
        .not_valid_after(now + timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ip_address("127.0.0.1"))]), False
        )
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert_file, key_file)
    return server


async def test_tls_is_verified(tmp_path: Path) -> None:
    async with serving(user, tls=_self_signed(tmp_path)) as url, client_for(url) as client:
        with pytest.raises(ServiceUnavailable) as refused:
            await client.user(SECRET)
    assert refused.value.code == NOT_SENT  # the handshake failed before the request went
    assert SECRET not in str(refused.value) and "127.0.0.1" not in str(refused.value)


def test_a_client_outlives_its_event_loop() -> None:
    """Sessions belong to a loop; a client used from a second loop makes new ones."""

    async def once(client: LibraryClient | None) -> LibraryClient:
        async with serving(user) as url:
            client = client or client_for(url)
            client.platform_url = url
            client._platform_urls.clear()
            assert (await client.user(SECRET)).name == "Karen Jensen"
            return client

    client = asyncio.run(once(None))
    asyncio.run(once(client))
    asyncio.run(client.aclose())
