"""Fault injection, in-process and through the HTTP control endpoints, and bulk patrons."""

from __future__ import annotations

import time

import httpx
import pytest
from aiohttp import web
from aiohttp.typedefs import Handler

from sandbox.library import Faults, LibrarySandbox
from tests.fixtures.patrons import KAREN, OLE
from tests.sandbox.library.helpers import get_code


async def user(client, sandbox: LibrarySandbox, token: str) -> httpx.Response:
    return await client.get(f"{sandbox.urls.platform}/v3/user", params={"access_token": token})


async def test_latency_is_added(library_sandbox, client):
    token = library_sandbox.issue_token(OLE)
    library_sandbox.faults.latency["platform"] = 0.2
    started = time.monotonic()
    assert (await user(client, library_sandbox, token)).status_code == 200
    assert time.monotonic() - started >= 0.2
    library_sandbox.faults.latency["platform"] = 0.0
    library_sandbox.faults.latency["*"] = 0.2
    started = time.monotonic()
    await user(client, library_sandbox, token)
    assert time.monotonic() - started < 0.2  # the service's own entry wins over "*"


async def test_down_answers_503_in_each_service_envelope(library_sandbox, client):
    token = library_sandbox.issue_token(OLE)
    library_sandbox.faults.down.add("*")
    platform = await user(client, library_sandbox, token)
    assert platform.status_code == 503
    assert platform.json() == {"statusCode": 503, "error": "service_unavailable"}
    oauth = await client.post(
        f"{library_sandbox.urls.oauth}/oauth/token", data={"grant_type": "authorization_code"}
    )
    assert oauth.status_code == 503
    assert oauth.json()["error"] == "temporarily_unavailable"
    library_sandbox.faults.down.clear()
    assert (await user(client, library_sandbox, token)).status_code == 200


async def test_refused_connections_close_without_an_answer(library_sandbox, client):
    token = library_sandbox.issue_token(OLE)
    library_sandbox.faults.down.add("platform")
    library_sandbox.faults.refuse_connections.add("platform")
    with pytest.raises(httpx.TransportError):
        await user(client, library_sandbox, token)
    library_sandbox.faults.clear()
    assert (await user(client, library_sandbox, token)).status_code == 200


async def test_error_rate_is_reproducible(client):
    async def outcomes() -> list[int]:
        async with LibrarySandbox(seed=7) as sandbox:
            token = sandbox.issue_token(OLE)
            sandbox.faults.error_rate["platform"] = 0.5
            return [(await user(client, sandbox, token)).status_code for _ in range(20)]

    first, second = await outcomes(), await outcomes()
    assert first == second
    assert set(first) == {200, 500}


async def test_error_rate_one_always_fails(library_sandbox, client):
    token = library_sandbox.issue_token(OLE)
    library_sandbox.faults.error_rate["*"] = 1.0
    response = await user(client, library_sandbox, token)
    assert response.status_code == 500
    assert response.json() == {"statusCode": 500, "error": "internal server error"}


async def test_malformed_body(library_sandbox, client):
    token = library_sandbox.issue_token(OLE)
    library_sandbox.faults.malformed.add("platform")
    response = await user(client, library_sandbox, token)
    assert response.status_code == 200
    with pytest.raises(ValueError):
        response.json()


async def test_fail_next_is_a_queue_per_path(library_sandbox, client):
    token = library_sandbox.issue_token(OLE)
    library_sandbox.faults.fail_next["/v3/user"] = [503, 401]
    first = await user(client, library_sandbox, token)
    assert first.status_code == 503 and first.json()["error"] == "service_unavailable"
    second = await user(client, library_sandbox, token)
    assert second.status_code == 401 and second.json()["error"] == "invalid_token"
    assert (await user(client, library_sandbox, token)).status_code == 200
    library_sandbox.faults.fail_next["/v3/order"] = [500]
    order = await client.get(
        f"{library_sandbox.urls.platform}/v3/order",
        params={
            "access_token": token,
            "pids": '["870970-basis:22871420"]',
            "pickUpBranch": "DK-710100",
        },
    )
    assert order.status_code == 500 and order.json()["error"] == "order not placed"
    assert library_sandbox.patron_data(OLE).orders == []
    library_sandbox.faults.fail_next["/userinfo"] = [401]
    info = await client.get(
        f"{library_sandbox.urls.oauth}/userinfo", params={"access_token": token}
    )
    assert info.status_code == 401 and info.content == b""


async def test_calls_are_counted(library_sandbox, client):
    token = library_sandbox.issue_token(KAREN)
    await user(client, library_sandbox, token)
    await user(client, library_sandbox, token)
    await get_code(client, library_sandbox)
    session_token, session_id = library_sandbox.open_ticket(KAREN)
    body = {"token": session_token, "id": session_id}
    await client.get(f"{library_sandbox.urls.login}/getTicket/{session_token}/{session_id}")
    calls = library_sandbox.calls
    assert calls["platform GET /v3/user"] == 2
    assert calls["oauth POST /oauth/authorize"] == 1
    assert calls["login GET /getTicket/{token}/{id}"] == 1
    assert not any(body["token"] in key for key in calls)


async def test_http_control_endpoints(library_sandbox, client):
    token = library_sandbox.issue_token(OLE)
    control = f"{library_sandbox.urls.oauth}/_sandbox"  # any host will do
    response = await client.post(
        f"{control}/faults", json={"down": ["platform"], "latency": {"auth": 0.01}}
    )
    assert response.status_code == 200
    assert response.json()["down"] == ["platform"]
    assert library_sandbox.faults.latency == {"auth": 0.01}
    assert (await user(client, library_sandbox, token)).status_code == 503
    calls = (await client.get(f"{library_sandbox.urls.platform}/_sandbox/calls")).json()
    assert calls == {"platform GET /v3/user": 1}
    bad = await client.post(f"{control}/faults", json={"nonsense": 1})
    assert bad.status_code == 400
    bad_rate = await client.post(f"{control}/faults", json={"error_rate": {"*": 2}})
    assert bad_rate.status_code == 400
    assert (await client.post(f"{control}/reset")).status_code == 200
    assert library_sandbox.faults == Faults()
    assert not library_sandbox.calls
    assert (await user(client, library_sandbox, token)).status_code == 200


async def test_add_patrons_is_cheap_and_usable(library_sandbox, client):
    started = time.monotonic()
    added = library_sandbox.add_patrons(10_000, due_every=10)
    assert time.monotonic() - started < 2.0
    assert len(added) == 10_000 and len({p.user_id for p in added}) == 10_000
    assert len(library_sandbox.patrons) == 7  # the login page lists only the named ones
    due_soon = [
        p
        for p in added
        if any(
            _days(library_sandbox, loan["dueDate"]) <= 3
            for loan in library_sandbox.patron_data(p.user_id).loans
        )
    ]
    assert len(due_soon) == 1000
    patron = added[0]
    code = await get_code(client, library_sandbox, user_id=patron.user_id, pin=patron.pin)
    assert code
    more = library_sandbox.add_patrons(2)
    assert more[0].user_id not in {p.user_id for p in added}


def _days(sandbox: LibrarySandbox, text: str) -> int:
    from bot.library.models import parse_library_date

    parsed = parse_library_date(text)
    assert not isinstance(parsed, str) and parsed is not None
    return (parsed - sandbox.today).days


async def order_1984(client, sandbox: LibrarySandbox, token: str) -> httpx.Response:
    return await client.get(
        f"{sandbox.urls.platform}/v3/order",
        params={
            "access_token": token,
            "pids": '["870970-basis:22871420"]',
            "pickUpBranch": "DK-710104",
        },
    )


async def test_drop_reads_the_request_and_closes_without_handling_it(library_sandbox, client):
    token = library_sandbox.issue_token(OLE)
    library_sandbox.faults.drop.add("/v3/order")
    with pytest.raises(httpx.RemoteProtocolError):
        await order_1984(client, library_sandbox, token)
    assert library_sandbox.calls["platform GET /v3/order"] == 1
    assert library_sandbox.patron_data(OLE).orders == []
    # Only that path: the rest of the platform answers.
    assert (await user(client, library_sandbox, token)).status_code == 200


async def test_lose_answer_handles_the_request_and_closes_before_answering(library_sandbox, client):
    token = library_sandbox.issue_token(OLE)
    library_sandbox.faults.lose_answer.add("platform")
    with pytest.raises(httpx.RemoteProtocolError):
        await order_1984(client, library_sandbox, token)
    library_sandbox.faults.lose_answer.clear()
    [placed] = library_sandbox.patron_data(OLE).orders
    assert placed["title"] == "1984"


async def test_drop_through_the_control_endpoint(library_sandbox, client):
    url = f"{library_sandbox.urls.platform}/_sandbox/faults"
    answer = await client.post(url, json={"drop": ["/v3/renew"], "lose_answer": ["/v3/order"]})
    assert answer.json()["drop"] == ["/v3/renew"]
    assert answer.json()["lose_answer"] == ["/v3/order"]
    assert library_sandbox.faults.drop == {"/v3/renew"}
    await client.post(f"{library_sandbox.urls.platform}/_sandbox/reset")
    assert library_sandbox.faults.drop == set() and library_sandbox.faults.lose_answer == set()


async def test_refuse_orders_queues_order_system_reasons(library_sandbox, client):
    token = library_sandbox.issue_token(OLE)
    url = f"{library_sandbox.urls.platform}/_sandbox/faults"
    await client.post(url, json={"refuse_orders": ["unknown_user", "service_unavailable"]})
    first = await order_1984(client, library_sandbox, token)
    assert first.status_code == 500
    assert first.json() == {"statusCode": 500, "error": "unknown_user"}
    second = await order_1984(client, library_sandbox, token)
    assert second.status_code == 503
    assert second.json() == {"statusCode": 503, "error": "service_unavailable"}
    third = await order_1984(client, library_sandbox, token)
    assert third.json()["data"]["status"] == "ok"


async def test_lose_next_loses_one_answer_only(library_sandbox, client):
    token = library_sandbox.issue_token(OLE)
    library_sandbox.faults.lose_next.append("/v3/order")
    with pytest.raises(httpx.RemoteProtocolError):
        await order_1984(client, library_sandbox, token)
    assert library_sandbox.faults.lose_next == []
    second = await order_1984(client, library_sandbox, token)
    assert second.json()["data"]["status"] == "ok"
    # Both were placed: the first one's answer was lost, not its effect.
    assert len(library_sandbox.patron_data(OLE).orders) == 2
    url = f"{library_sandbox.urls.platform}/_sandbox/faults"
    await client.post(url, json={"drop_next": ["/v3/order"]})
    with pytest.raises(httpx.RemoteProtocolError):
        await order_1984(client, library_sandbox, token)
    assert len(library_sandbox.patron_data(OLE).orders) == 2
    assert (await order_1984(client, library_sandbox, token)).status_code == 200


async def test_middlewares_see_every_service_and_a_faulted_answer(client):
    seen: list[tuple[str, int]] = []

    @web.middleware
    async def watch(request: web.Request, handler: Handler) -> web.StreamResponse:
        response = await handler(request)
        seen.append((request.path, response.status))
        return response

    sandbox = LibrarySandbox()
    sandbox.middlewares.append(watch)
    async with sandbox:
        token = sandbox.issue_token(KAREN)
        sandbox.faults.fail_next["/v3/user"] = [502]
        assert (await user(client, sandbox, token)).status_code == 502
        await get_code(client, sandbox)
    assert seen[0] == ("/v3/user", 502)
    assert ("/oauth/authorize", 302) in seen
