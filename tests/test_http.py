"""`bot.http`: httpx and PTB over `Http1Transport`; real servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from ipaddress import ip_address
from pathlib import Path

import httpx
import pytest
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from telegram import InputFile
from telegram.error import NetworkError, TimedOut
from telegram.request import RequestData
from telegram.request._requestparameter import RequestParameter

from bot.http import Http1Transport, TelegramRequest

SECRET = "tok-3f9a"


@asynccontextmanager
async def serving(
    routes: list[web.RouteDef], tls: ssl.SSLContext | None = None
) -> AsyncIterator[str]:
    """An aiohttp server on a free loopback port; yields its base URL."""
    app = web.Application()
    app.add_routes(routes)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=tls)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def echo(request: web.Request) -> web.Response:
    body = await request.read()
    answer = {
        "method": request.method,
        "path_qs": request.raw_path,
        "headers": [[k, v] for k, v in request.headers.items()],
        "body": body.decode(),
    }
    response = web.json_response(answer, status=201)
    response.headers.add("X-Multi", "a")
    response.headers.add("X-Multi", "b")
    return response


async def zipped(request: web.Request) -> web.Response:
    return web.Response(
        body=gzip.compress(b'{"ok": true}'),
        headers={"Content-Encoding": "gzip", "Content-Type": "application/json"},
    )


async def chunked(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse()
    response.enable_chunked_encoding()
    await response.prepare(request)
    for part in (b"one ", b"two ", b"three"):
        await response.write(part)
    await response.write_eof()
    return response


async def redirect(request: web.Request) -> web.Response:
    return web.Response(status=302, headers={"Location": "/echo"})


async def slow(request: web.Request) -> web.Response:
    await asyncio.sleep(float(request.query.get("s", "2")))
    return web.Response(text="late")


ROUTES = [
    web.route("*", "/echo", echo),
    web.get("/zipped", zipped),
    web.get("/chunked", chunked),
    web.get("/redirect", redirect),
    web.route("*", "/slow", slow),
    web.route("*", "/bot{token}/getMe", echo),
]


@pytest.fixture
async def base() -> AsyncIterator[str]:
    async with serving(ROUTES) as url:
        yield url


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@asynccontextmanager
async def raw_server(
    handle: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]],
) -> AsyncIterator[str]:
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        await server.wait_closed()


async def test_method_url_headers_and_body_pass_through(base: str) -> None:
    async with httpx.AsyncClient(transport=Http1Transport(), headers={"X-App": "lb"}) as http:
        response = await http.post(
            f"{base}/echo",
            params={"q": "æøå & co", "pids": '["870970-basis:1"]'},
            data={"grant_type": "password", "username": "@"},
            headers={"Authorization": "Bearer abc"},
        )
    assert response.status_code == 201
    assert response.reason_phrase == "Created"
    assert response.http_version == "HTTP/1.1"
    assert response.headers.get_list("X-Multi") == ["a", "b"]
    seen = response.json()
    assert seen["method"] == "POST"
    assert seen["path_qs"] == "/echo?" + str(response.request.url.query, "ascii")
    assert "%C3%A6%C3%B8%C3%A5" in seen["path_qs"]
    assert seen["body"] == "grant_type=password&username=%40"
    headers = {k.lower(): v for k, v in seen["headers"]}
    assert headers["x-app"] == "lb"
    assert headers["authorization"] == "Bearer abc"
    assert headers["content-type"] == "application/x-www-form-urlencoded"
    assert headers["user-agent"].startswith("python-httpx/")  # httpx's headers, as they were
    assert headers["content-length"] == str(len(seen["body"]))
    assert [k.lower() for k, _ in seen["headers"]].count("host") == 1


async def test_a_get_sends_no_body_and_every_method_passes(base: str) -> None:
    async with httpx.AsyncClient(transport=Http1Transport()) as http:
        got = (await http.get(f"{base}/echo")).json()
        deleted = (await http.delete(f"{base}/echo?access_token=x")).json()
    assert got["method"] == "GET" and got["body"] == ""
    assert "content-length" not in {k.lower() for k, _ in got["headers"]}
    assert deleted["method"] == "DELETE" and deleted["path_qs"] == "/echo?access_token=x"


async def test_gzip_is_decoded_once_by_httpx(base: str) -> None:
    async with httpx.AsyncClient(transport=Http1Transport()) as http:
        response = await http.get(f"{base}/zipped")
    assert response.json() == {"ok": True}


async def test_redirects_are_not_followed(base: str) -> None:
    async with httpx.AsyncClient(transport=Http1Transport(), follow_redirects=False) as http:
        response = await http.get(f"{base}/redirect")
    assert response.status_code == 302
    assert response.headers["location"] == "/echo"


async def test_refused_connection_is_connect_error() -> None:
    url = f"http://127.0.0.1:{_free_port()}/v3/user?access_token={SECRET}"
    async with httpx.AsyncClient(transport=Http1Transport()) as http:
        with pytest.raises(httpx.ConnectError) as caught:
            await http.get(url)
    assert SECRET not in str(caught.value)


def _self_signed(directory: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a fresh certificate for 127.0.0.1, and a client trusting only it."""
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
    return server, ssl.create_default_context(cafile=str(cert_file))


async def test_tls_is_verified(tmp_path: Path) -> None:
    server, trusting = _self_signed(tmp_path)
    async with serving(ROUTES, tls=server) as url:
        async with httpx.AsyncClient(transport=Http1Transport(ssl_context=trusting)) as http:
            assert (await http.get(f"{url}/echo")).json()["method"] == "GET"
            assert (await http.get(f"{url}/chunked")).text == "one two three"  # kept alive
        # The default context (the system's and certifi's roots) refuses a self-signed one.
        async with httpx.AsyncClient(transport=Http1Transport()) as http:
            with pytest.raises(httpx.ConnectError) as refused:
                await http.get(f"{url}/echo?access_token={SECRET}")
    assert "SSL" in str(refused.value) and SECRET not in str(refused.value)


async def test_read_timeout_from_the_request(base: str) -> None:
    timeout = httpx.Timeout(5.0, read=0.2)
    async with httpx.AsyncClient(transport=Http1Transport(), timeout=timeout) as http:
        started = asyncio.get_running_loop().time()
        with pytest.raises(httpx.ReadTimeout):
            await http.get(f"{base}/slow?s=2&access_token={SECRET}")
        assert asyncio.get_running_loop().time() - started < 1.5
        # The per-request time-out wins over the client's.
        response = await http.get(f"{base}/slow?s=0.3", timeout=2.0)
    assert response.text == "late"


async def test_waiting_for_a_free_connection_is_a_pool_timeout(base: str) -> None:
    timeout = httpx.Timeout(5.0, pool=0.2)
    async with httpx.AsyncClient(
        transport=Http1Transport(connection_limit=1), timeout=timeout
    ) as http:
        busy = asyncio.create_task(http.get(f"{base}/slow?s=1"))
        await asyncio.sleep(0.1)
        with pytest.raises(httpx.PoolTimeout):
            await http.get(f"{base}/echo")
        assert (await busy).text == "late"
        assert (await http.get(f"{base}/echo")).status_code == 201  # the slot came back


async def test_connections_are_kept_alive_and_reused(base: str) -> None:
    transport = Http1Transport()
    async with httpx.AsyncClient(transport=transport) as http:
        for _ in range(3):
            assert (await http.get(f"{base}/echo")).status_code == 201
        pool = transport._pool
        assert pool is not None
        [idle] = pool.idle.values()
        assert len(idle) == 1  # one connection served all three


async def test_a_stale_kept_alive_connection_is_retried_once_for_a_get() -> None:
    served = 0

    async def once_per_connection(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        # Answers one request, claims keep-alive, then reads the next request and hangs up.
        nonlocal served
        await reader.readuntil(b"\r\n\r\n")
        served += 1
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        await reader.readuntil(b"\r\n\r\n")
        writer.close()

    async with (
        raw_server(once_per_connection) as url,
        httpx.AsyncClient(transport=Http1Transport()) as http,
    ):
        assert (await http.get(url)).text == "ok"
        assert (await http.get(url)).text == "ok"  # the first connection died unanswered
        assert served == 2
        with pytest.raises(httpx.RemoteProtocolError):
            await http.post(url, data={"a": "b"})  # never repeated: it may have been seen


async def test_a_body_that_ends_with_the_connection_is_read_whole() -> None:
    async def until_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{"ok": ')
        await writer.drain()
        writer.write(b"true}")
        writer.close()

    async with (
        raw_server(until_close) as url,
        httpx.AsyncClient(transport=Http1Transport()) as http,
    ):
        assert (await http.get(url)).json() == {"ok": True}


async def test_chunked_responses_are_joined(base: str) -> None:
    async with httpx.AsyncClient(transport=Http1Transport()) as http:
        response = await http.get(f"{base}/chunked")
    assert response.text == "one two three"


async def test_a_server_that_hangs_up_is_a_protocol_error() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.close()

    async def half_body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"data":')
        await writer.drain()
        writer.close()

    async with httpx.AsyncClient(transport=Http1Transport()) as http:
        async with raw_server(hang_up) as url:
            with pytest.raises(httpx.RemoteProtocolError):
                await http.get(url)
        async with raw_server(half_body) as url:
            with pytest.raises(httpx.RemoteProtocolError):
                await http.get(url)


async def test_closing_closes_the_kept_connections(base: str) -> None:
    transport = Http1Transport()
    http = httpx.AsyncClient(transport=transport)
    await http.get(f"{base}/echo")
    pool = transport._pool
    assert pool is not None
    [[connection]] = pool.idle.values()
    await http.aclose()  # closes its transport
    assert connection.closed and transport._pool is None


def test_a_pool_from_another_loop_is_not_reused() -> None:
    transport = Http1Transport()

    async def once() -> int:
        async with serving(ROUTES) as url:
            response = await httpx.AsyncClient(transport=transport).get(f"{url}/echo")
            return response.status_code

    assert asyncio.run(once()) == 201
    assert asyncio.run(once()) == 201  # a new loop: a new pool, not the dead loop's
    asyncio.run(transport.aclose())


# --- TelegramRequest ------------------------------------------------------------------------


async def test_telegram_request_logs_at_debug_without_the_token(
    base: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    request = TelegramRequest()
    await request.initialize()
    try:
        status, _ = await request.do_request(f"{base}/bot123:{SECRET}/getMe", "POST")
    finally:
        await request.shutdown()
    assert status == 201
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name == "bot.http")
    assert "/bot123:[redacted]/getMe" in ours and SECRET not in ours


async def test_telegram_request_posts_fields_and_maps_time_outs(base: str) -> None:
    request = TelegramRequest(read_timeout=0.2)
    await request.initialize()
    try:
        fields = RequestData(
            [RequestParameter("chat_id", 42, None), RequestParameter("text", "æ & ø", None)]
        )
        status, body = await request.do_request(f"{base}/echo", "POST", fields, read_timeout=2.0)
        seen = json.loads(body)
        assert status == 201 and seen["method"] == "POST"
        assert seen["body"] == "chat_id=42&text=%C3%A6+%26+%C3%B8"
        headers = {k.lower(): v for k, v in seen["headers"]}
        assert headers["content-type"] == "application/x-www-form-urlencoded"
        assert headers["user-agent"] == TelegramRequest.USER_AGENT
        with pytest.raises(TimedOut) as timed_out:
            await request.do_request(f"{base}/slow?s=2&t={SECRET}", "POST")
        with pytest.raises(NetworkError) as refused:
            await request.do_request(f"http://127.0.0.1:{_free_port()}/bot{SECRET}/x", "POST")
    finally:
        await request.shutdown()
    assert SECRET not in str(timed_out.value) + str(refused.value)
    assert request.read_timeout == 0.2
    with pytest.raises(RuntimeError):
        await request.do_request(f"{base}/echo", "POST")


async def test_telegram_request_uploads_files_as_multipart(base: str) -> None:
    request = TelegramRequest()
    await request.initialize()
    try:
        upload = RequestData(
            [
                RequestParameter("chat_id", 42, None),
                RequestParameter.from_input("document", InputFile(b"hello", filename="a.txt")),
            ]
        )
        status, body = await request.do_request(f"{base}/echo", "POST", upload)
    finally:
        await request.shutdown()
    seen = json.loads(body)
    headers = {k.lower(): v for k, v in seen["headers"]}
    assert status == 201 and headers["content-type"].startswith("multipart/form-data; boundary=")
    assert 'name="chat_id"\r\n\r\n42\r\n' in seen["body"]
    assert 'filename="a.txt"' in seen["body"] and "\r\n\r\nhello\r\n" in seen["body"]
