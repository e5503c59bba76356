"""All four services on one port: the two `/oauth/token` flows are told apart by grant type."""

from __future__ import annotations

import socket

import pytest
from httpx import URL

from sandbox.library import LibrarySandbox
from tests.fixtures.patrons import KAREN
from tests.sandbox.library.helpers import anonymous_token, login

ATTEMPTS = 200


async def test_single_port_serves_every_flow(client):
    async with LibrarySandbox(single_port=True) as sandbox:
        urls = sandbox.urls
        assert urls.oauth == urls.auth == urls.login == urls.platform
        assert not urls.oauth.endswith("/")
        token = await login(client, sandbox)
        anonymous = await anonymous_token(client, sandbox)
        assert sandbox.calls["oauth POST /oauth/token"] == 1
        assert sandbox.calls["auth POST /oauth/token"] == 1
        user = await client.get(f"{urls.platform}/v3/user", params={"access_token": token})
        assert user.status_code == 200 and user.json()["data"]["name"] == "Karen Jensen"
        refused = await client.get(f"{urls.platform}/v3/user", params={"access_token": anonymous})
        assert refused.status_code == 403
        page = await client.get(f"{urls.login}/login", params={"token": anonymous})
        assert page.status_code == 200 and 'action="/login"' in page.text
        session_token, session_id = sandbox.open_ticket(KAREN)
        ticket = await client.get(f"{urls.login}/getTicket/{session_token}/{session_id}")
        assert ticket.json()["attributes"]["municipality"] == "101"
        info = await client.get(f"{urls.oauth}/userinfo", params={"access_token": token})
        assert "uniqueId" in info.json()["attributes"]
        missing = await client.get(f"{urls.platform}/nowhere")
        assert missing.json() == {"statusCode": 404, "error": "404 Not Found"}
        # Faults still apply per service.
        sandbox.faults.down.add("auth")
        down = await client.post(
            f"{urls.auth}/oauth/token",
            auth=(sandbox.client_id, sandbox.client_secret),
            data={"grant_type": "password", "username": "@", "password": "@"},
        )
        assert down.status_code == 503
        assert (await login(client, sandbox)) != token


def candidate_base() -> int:
    """A port free a moment ago, with room for three more after it (a guess, not a promise)."""
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = int(probe.getsockname()[1])
        if base <= 65535 - 3:
            return base


async def test_fixed_ports_are_consecutive():
    """Given a port, the four services take it and the next three. Another process may hold
    one of those (a busy machine has no four free ports in a row for sure), so the test tries
    other bases until the sandbox starts; what it checks is where the services went."""
    for _ in range(ATTEMPTS):
        base = candidate_base()
        sandbox = LibrarySandbox(port=base)
        try:
            await sandbox.start()
        except OSError:
            continue  # one of the four was taken: start() closed what it had opened
        try:
            urls = sandbox.urls
            ports = [URL(u).port for u in (urls.oauth, urls.auth, urls.login, urls.platform)]
            assert ports == [base, base + 1, base + 2, base + 3]
            return
        finally:
            await sandbox.stop()
    pytest.fail(f"no base port of {ATTEMPTS} tried had the next three free")
