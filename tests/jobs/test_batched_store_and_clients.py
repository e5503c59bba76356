"""The sweep's lean paths: batched store writes, the library client's reads and the Bot API
client it sends with. Each must behave exactly like the path it replaces."""

from __future__ import annotations

import logging
import socket
from datetime import timedelta

import aiohttp
import pytest
from telegram.error import NetworkError, RetryAfter

from bot.library.client import LibraryClient
from bot.library.errors import ServiceUnavailable, TokenRejected
from bot.telegram.botapi import TolerantBot, build_bot, telegram_request
from bot.telegram.request import AiohttpRequest
from sandbox.library import LibrarySandbox
from sandbox.telegram import TelegramStandIn
from storage.store import Store
from tests.fixtures.patrons import KAREN
from tests.fixtures.storage import reminder_states
from tests.fixtures.telegram import TEST_BOT_TOKEN
from tests.jobs.conftest import Rig

LEASE = timedelta(minutes=5)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_begin_reminders_reports_states_and_records_intents(
    database_url: str, store_keys: list[bytes]
) -> None:
    store = await Store.open(database_url, store_keys)
    try:
        assert await store.reminder_log.begin_reminders_many({7: ["a", "b"]}) == {}
        assert await reminder_states(store, 7) == {"a": "intent", "b": "intent"}
        await store.reminder_log.mark_sent(7, ["a"])
        assert await store.reminder_log.begin_reminders_many({7: ["a", "b", "c"], 8: ["a"]}) == {
            7: {"a": "sent", "b": "intent"}
        }
        # A sent key stays sent; the new one is now an intent; chats are apart.
        assert await reminder_states(store, 7) == {"a": "sent", "b": "intent", "c": "intent"}
        assert await reminder_states(store, 8) == {"a": "intent"}
    finally:
        await store.close()


async def test_put_callbacks_keeps_order_and_owner(
    database_url: str, store_keys: list[bytes]
) -> None:
    store = await Store.open(database_url, store_keys)
    try:
        ids = await store.callbacks.put_callbacks(
            7, [("renew", {"loan_id": "L1"}), ("renewall", {})]
        )
        assert len(set(ids)) == 2
        first = await store.callbacks.callback(ids[0], 7)
        second = await store.callbacks.callback(ids[1], 7)
        assert first is not None and first.action == "renew"
        assert first.payload == {"loan_id": "L1"}
        assert second is not None and second.action == "renewall"
        assert await store.callbacks.callback(ids[0], 8) is None  # another chat's button
        assert await store.callbacks.put_callbacks(7, []) == []
    finally:
        await store.close()


async def test_patrons_are_finished_across_many_flushes(rig: Rig) -> None:
    patrons = rig.sandbox.add_patrons(11, due_every=3)
    for offset, patron in enumerate(patrons):
        await rig.connect(800 + offset, patron.user_id)

    report = await rig.sweep(concurrency=2, batch_size=3)

    assert report.patrons == 11 and not report.failures
    assert report.messages == sum(1 for chat in range(800, 811) if rig.telegram.sent(chat))
    # Everyone was marked swept: nobody is claimed again today, so nothing is sent twice.
    assert await rig.store.sweeps.claim_sweep_batch(rig.sandbox.today, "probe", 50, LEASE) == []
    assert (await rig.sweep()).patrons == 0


async def test_reads_share_one_kept_alive_connection(library_sandbox: LibrarySandbox) -> None:
    token = library_sandbox.issue_token(KAREN)
    options = {
        "oauth_url": library_sandbox.urls.oauth,
        "auth_url": library_sandbox.urls.auth,
        "platform_url": library_sandbox.urls.platform,
        "client_id": library_sandbox.client_id,
        "client_secret": library_sandbox.client_secret,
        "timeout": 3.0,
    }
    async with LibraryClient(**options) as lean:
        status = await lean.user(token)
        assert status.name == "Karen Jensen" and status.loans
        assert (await lean.user(token)) == status
        found = await lean.search(token, "kongens")
        assert found.works
        assert lean._transport._sessions is not None
        connector = lean._transport._sessions.pooled.connector
        assert isinstance(connector, aiohttp.TCPConnector)
        assert len(connector._conns) == 1  # the three reads went over one connection
        library_sandbox.expire_token(token)
        with pytest.raises(TokenRejected):
            await lean.user(token)


async def test_user_maps_a_dead_platform_without_leaking_the_token(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    dead = f"http://127.0.0.1:{_free_port()}"
    async with LibraryClient(
        oauth_url=dead,
        auth_url=dead,
        platform_url=dead,
        client_id="c",
        client_secret="s",
        timeout=2.0,
    ) as client:
        with pytest.raises(ServiceUnavailable) as caught:
            await client.user("secret-token-xyz")
    assert caught.value.code == "not_sent"  # no connection: nothing left the bot
    assert "retrying data platform /v3/user" in caplog.text  # an idempotent read: one retry
    assert "secret-token-xyz" not in caplog.text + str(caught.value)


async def test_telegram_request_sends_and_maps_errors(telegram: TelegramStandIn, rig: Rig) -> None:
    telegram.add_chat(4242)
    settings = rig.settings.model_copy(update={"TELEGRAM_API_URL": telegram.url})
    request = telegram_request(settings, connection_pool_size=4, read_timeout=5.0)
    bot = TolerantBot(TEST_BOT_TOKEN, base_url=f"{telegram.url}/bot", request=request)
    async with bot:
        message = await bot.send_message(4242, "<b>Hej</b> &amp; velkommen", parse_mode="HTML")
        assert message.chat.id == 4242
        telegram.failures.fail("sendMessage", 429, retry_after=3)
        with pytest.raises(RetryAfter):
            await bot.send_message(4242, "for hurtigt")
    [sent] = telegram.sent(4242)
    assert sent.text == "Hej & velkommen"

    request = telegram_request(
        settings, connection_pool_size=1, read_timeout=1.0, connect_timeout=1.0
    )
    await request.initialize()
    try:
        with pytest.raises(NetworkError) as caught:
            await request.post(
                f"http://127.0.0.1:{_free_port()}/bot{TEST_BOT_TOKEN}/sendMessage",
                request_data=None,
            )
    finally:
        await request.shutdown()
    assert TEST_BOT_TOKEN not in str(caught.value)


async def test_build_bot_uses_ptb_own_request_and_the_tolerant_bot(rig: Rig) -> None:
    bot = build_bot(rig.settings)
    assert isinstance(bot, TolerantBot) and isinstance(bot.request, AiohttpRequest)
