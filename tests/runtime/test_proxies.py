"""Forward proxies (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`): the Bot API and the
library services are reached through the proxy on 127.0.0.1, and only through it; `NO_PROXY`
exempts hosts. Every origin here is http:// on loopback, so `HTTP_PROXY` (or `ALL_PROXY`) is
the variable that applies."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.fixtures.bot import BotFactory
from tests.fixtures.patrons import KAREN
from tests.fixtures.proxy import ForwardProxy

CHAT = 7401


def _bot_api(proxy: ForwardProxy, telegram_url: str, method: str) -> int:
    return sum(n for path, n in proxy.to(telegram_url).items() if path.endswith(f"/{method}"))


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "ALL_PROXY"])
async def test_bot_api_and_library_services_go_through_the_proxy(
    forward_proxy: ForwardProxy, bot_factory: BotFactory, variable: str
) -> None:
    bot = await bot_factory(**{variable: forward_proxy.url})
    await bot.connect(CHAT, KAREN)
    loans = await bot.send(CHAT, "/loans")
    assert "Kongens fald" in loans.text

    telegram, sandbox = bot.telegram, bot.sandbox
    urls = sandbox.urls
    # Every call the stand-in and the sandbox saw came through the proxy: none went directly.
    for method in ("getMe", "setMyCommands", "sendMessage"):
        assert telegram.calls[method] > 0
        assert _bot_api(forward_proxy, telegram.url, method) == telegram.calls[method], method
    assert _bot_api(forward_proxy, telegram.url, "getUpdates") >= 1
    assert forward_proxy.to(urls.platform)["/v3/user"] == sandbox.calls["platform GET /v3/user"]
    assert sandbox.calls["platform GET /v3/user"] >= 1
    assert forward_proxy.to(urls.oauth)["/oauth/token"] == sandbox.calls["oauth POST /oauth/token"]
    assert forward_proxy.to(urls.oauth)["/userinfo"] == sandbox.calls["oauth GET /userinfo"]

    # With the proxy's way to the platform gone, it is out of reach: there is no direct way.
    forward_proxy.refusing.add(urlsplit(urls.platform).netloc)
    user_calls = sandbox.calls["platform GET /v3/user"]
    reply = await bot.send(CHAT, "/loans")
    assert "svarer ikke" in reply.text  # common.unavailable, in Danish
    assert sandbox.calls["platform GET /v3/user"] == user_calls


async def test_no_proxy_exempts_the_hosts_it_names(
    forward_proxy: ForwardProxy, bot_factory: BotFactory, telegram: object
) -> None:
    stand_in = urlsplit(telegram.url)  # type: ignore[attr-defined]
    bot = await bot_factory(
        HTTP_PROXY=forward_proxy.url, NO_PROXY=f"example.org, {stand_in.hostname}:{stand_in.port}"
    )
    await bot.connect(CHAT, KAREN)
    await bot.send(CHAT, "/loans")

    assert forward_proxy.to(bot.telegram.url) == {}  # the Bot API: direct
    platform = forward_proxy.to(bot.sandbox.urls.platform)
    assert platform["/v3/user"] == bot.sandbox.calls["platform GET /v3/user"] >= 1  # proxied


async def test_no_proxy_for_every_host(
    forward_proxy: ForwardProxy, bot_factory: BotFactory
) -> None:
    bot = await bot_factory(HTTP_PROXY=forward_proxy.url, NO_PROXY="127.0.0.1")
    await bot.connect(CHAT, KAREN)
    assert "Kongens fald" in (await bot.send(CHAT, "/loans")).text
    assert forward_proxy.relayed == {}
