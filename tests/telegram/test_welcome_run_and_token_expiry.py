"""/start, /help and the fallback; the running bot (command menus, health, metrics, webhook,
shutdown, refusing to start without keys); a token's expiry warned, forgotten and told once."""

from __future__ import annotations

import asyncio
import contextvars
import json
import secrets
import time
import weakref
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import update

from bot.config.settings import Settings, new_key
from bot.runtime.runner import BotInfo, run_bot
from bot.telegram.handlers import COMMANDS
from storage.tables import CardRow
from tests.fixtures.bot import BotFactory, BotHarness, library_environment
from tests.fixtures.jobs import run_expiry_job, set_expiry
from tests.fixtures.patrons import JONAS, KAREN

CHAT = 6001


@pytest.mark.bot_api_over_http  # the whole path once over HTTP
async def test_start_welcomes_in_both_languages(bot: BotHarness) -> None:
    bot.add_chat(CHAT, language_code="da")
    dansk = await bot.send(CHAT, "/start")
    assert "Kom i gang med /login" in dansk.text
    bot.add_chat(CHAT + 1, language_code="en-GB")
    english = await bot.send(CHAT + 1, "/start")
    assert "Begin with /login" in english.text
    assert english.parse_mode == "HTML" and not english.link_preview


async def test_start_when_connected(bot: BotHarness) -> None:
    await bot.connect(CHAT)
    reply = await bot.send(CHAT, "/start")
    assert "Velkommen tilbage" in reply.text


async def test_help_lists_commands(bot: BotHarness) -> None:
    bot.add_chat(CHAT, language_code="en")
    reply = await bot.send(CHAT, "/help")
    for command in COMMANDS:
        if command not in ("start", "help"):
            assert f"/{command}" in reply.text


async def test_unknown_command_and_plain_text(bot: BotHarness) -> None:
    bot.add_chat(CHAT)
    unknown = await bot.send(CHAT, "/nonsense")
    assert "/help" in unknown.text and "kommando" in unknown.text
    text = await bot.send(CHAT, "hello there")
    assert "/help" in text.text
    # A known command gets exactly one answer (the fallback does not answer it too).
    before = len(bot.telegram.sent(CHAT))
    await bot.send(CHAT, "/help")
    await asyncio.sleep(0.2)
    assert len(bot.telegram.sent(CHAT)) == before + 1


async def test_commands_registered_in_every_language(bot: BotHarness) -> None:
    for language, login in (
        (None, "Forbind"),
        ("da", "Forbind"),
        ("en", "Connect"),
        ("uk", "Підключити"),
    ):
        registered = bot.telegram.commands[language]
        assert [item["command"] for item in registered] == list(COMMANDS)
        described = {item["command"]: item["description"] for item in registered}
        assert login in described["login"]


async def test_health_and_metrics(bot: BotHarness) -> None:
    health = await bot.http.get(f"{bot.info.web_url}/health")
    assert health.status_code == 200
    assert health.json()["status"] == "ok"
    metrics = await bot.http.get(f"{bot.info.web_url}/metrics")
    assert metrics.status_code == 200
    assert metrics.headers["content-type"].startswith("text/plain")


async def test_public_url_follows_the_bound_port(bot: BotHarness) -> None:
    assert bot.info.web_url.startswith("http://127.0.0.1:")
    assert not bot.info.web_url.endswith(":0")
    assert bot.info.public_url == bot.info.web_url
    assert bot.info.bot_username == "library_sandbox_bot"
    bot.add_chat(CHAT)
    url = httpx.URL(await bot.login_url(CHAT))
    assert url.params["redirect_uri"] == f"{bot.info.public_url}/oauth/callback"


async def test_webhook_mode(bot_factory: BotFactory) -> None:
    secret = "s3cret-" + secrets.token_hex(8)
    bot = await bot_factory(WEBHOOK_SECRET=secret)
    assert bot.telegram.calls["setWebhook"] == 1
    assert bot.telegram.calls["getUpdates"] == 0
    url = f"{bot.info.web_url}/telegram/webhook"
    header = "X-Telegram-Bot-Api-Secret-Token"
    assert (await bot.http.post(url, json={"update_id": 1})).status_code == 403
    wrong = await bot.http.post(url, json={"update_id": 1}, headers={header: "wrong"})
    assert wrong.status_code == 403
    malformed = await bot.http.post(url, content=b"{not json", headers={header: secret})
    assert malformed.status_code == 400
    # Updates pushed by the stand-in to the webhook are answered like polled ones.
    bot.add_chat(CHAT)
    reply = await bot.send(CHAT, "/help")
    assert "Kommandoer" in reply.text
    health = await bot.http.get(f"{bot.info.web_url}/health")
    assert health.json()["mode"] == "webhook"


async def test_shutdown_is_quick_and_leaves_no_tasks(
    telegram: Any, library_sandbox: Any, tmp_path: Any
) -> None:
    key = new_key()
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        **library_environment(library_sandbox),
        TELEGRAM_BOT_TOKEN="123456:TEST-token",
        TELEGRAM_API_URL=telegram.url,
        HOST="127.0.0.1",
        PORT=0,
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'shutdown.db'}",
        TOKEN_KEYS=key,
    )
    # Record every task the bot creates (its context carries the marker); the stand-in's own
    # server tasks (a pending long poll) are not the bot's to finish.
    marker: contextvars.ContextVar[bool] = contextvars.ContextVar("bot_task", default=False)
    created: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()
    loop = asyncio.get_running_loop()
    previous = loop.get_task_factory()

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        task = asyncio.Task(coro, loop=loop, **kwargs)
        if marker.get():
            created.add(task)
        return task

    loop.set_task_factory(factory)
    try:
        stop = asyncio.Event()
        ready: list[BotInfo] = []
        is_ready = asyncio.Event()

        def on_ready(info: BotInfo) -> None:
            ready.append(info)
            is_ready.set()

        context = contextvars.copy_context()
        context.run(marker.set, True)
        task = context.run(asyncio.create_task, run_bot(settings, stop=stop, on_ready=on_ready))
        await asyncio.wait_for(is_ready.wait(), 15)
        telegram.add_chat(CHAT)
        await telegram.send_text(CHAT, "/start")
        await telegram.wait_for(CHAT, "/login")
        started = time.monotonic()
        stop.set()
        await asyncio.wait_for(task, 10)
        assert time.monotonic() - started < 10
        await asyncio.sleep(0)
        left = [t for t in created if not t.done()]
        assert left == [], left
        assert len(created) > 1
    finally:
        loop.set_task_factory(previous)
    with pytest.raises(httpx.ConnectError):
        async with httpx.AsyncClient() as client:
            await client.get(f"{ready[0].web_url}/health")


async def test_run_refuses_without_keys(telegram: Any, library_sandbox: Any) -> None:
    from bot.config.settings import SettingsError

    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        **library_environment(library_sandbox),
        TELEGRAM_BOT_TOKEN="123456:TEST-token",
        TELEGRAM_API_URL=telegram.url,
        PORT=0,
        HOST="127.0.0.1",
    )
    with pytest.raises(SettingsError, match="TOKEN_KEYS"):
        await run_bot(settings, stop=asyncio.Event())


async def test_token_expiry_warning_once_and_expired_forgotten(bot: BotHarness) -> None:
    await bot.connect(CHAT)
    await set_expiry(bot, CHAT, datetime.now(UTC) + timedelta(days=2, hours=1))
    before = len(bot.telegram.sent(CHAT))
    await run_expiry_job(bot)
    warning = await bot.next_message(CHAT, before)
    assert "udløber om 3 dage" in warning.text
    assert any(button.url for row in warning.buttons for button in row)
    await run_expiry_job(bot)  # warned once only
    await asyncio.sleep(0.1)
    assert len(bot.telegram.sent(CHAT)) == before + 1

    await bot.connect(CHAT + 1)
    await set_expiry(bot, CHAT + 1, datetime.now(UTC) - timedelta(minutes=1))
    before = len(bot.telegram.sent(CHAT + 1))
    await run_expiry_job(bot)
    expired = await bot.next_message(CHAT + 1, before)
    assert "udløbet" in expired.text
    assert await bot.store.cards.get(CHAT + 1) is None


async def test_a_warned_token_is_still_forgotten_when_it_expires(bot: BotHarness) -> None:
    await bot.connect(CHAT)
    await set_expiry(bot, CHAT, datetime.now(UTC) + timedelta(days=1))
    await run_expiry_job(bot)
    assert (await bot.store.cards.get(CHAT)) is not None
    await set_expiry(bot, CHAT, datetime.now(UTC) - timedelta(minutes=1))
    before = len(bot.telegram.sent(CHAT))
    await run_expiry_job(bot)
    expired = await bot.next_message(CHAT, before)
    assert "udløbet" in expired.text
    assert await bot.store.cards.get(CHAT) is None
    await run_expiry_job(bot)  # told once only
    await asyncio.sleep(0.1)
    assert len(bot.telegram.sent(CHAT)) == before + 1


async def test_expired_token_is_forgotten_on_use(bot: BotHarness) -> None:
    await bot.connect(CHAT)
    await set_expiry(bot, CHAT, datetime.now(UTC) - timedelta(minutes=1))
    reply = await bot.send(CHAT, "/loans")
    assert "udløbet" in reply.text or "Log ind" in reply.text
    assert await bot.store.cards.get(CHAT) is None


async def test_webhook_update_json_is_processed(bot_factory: BotFactory) -> None:
    secret = "hook-" + secrets.token_hex(8)
    bot = await bot_factory(WEBHOOK_SECRET=secret)
    bot.add_chat(CHAT, language_code="en")
    update_json = {
        "update_id": 999001,
        "message": {
            "message_id": 1,
            "date": int(time.time()),
            "chat": {"id": CHAT, "type": "private", "first_name": "Patron"},
            "from": {"id": CHAT, "is_bot": False, "first_name": "Patron", "language_code": "en"},
            "text": "/help",
            "entities": [{"type": "bot_command", "offset": 0, "length": 5}],
        },
    }
    before = len(bot.telegram.sent(CHAT))
    response = await bot.http.post(
        f"{bot.info.web_url}/telegram/webhook",
        content=json.dumps(update_json),
        headers={"X-Telegram-Bot-Api-Secret-Token": secret, "Content-Type": "application/json"},
    )
    assert response.status_code == 200
    reply = await bot.next_message(CHAT, before)
    assert "Commands" in reply.text


async def test_refused_token_lapses_the_card_and_patron_is_told(bot: BotHarness) -> None:
    await bot.connect(CHAT)
    bot.sandbox.expire_all_tokens()
    reply = await bot.send(CHAT, "/loans")
    assert "udløbet eller blev afvist" in reply.text
    assert any(button.url for row in reply.buttons for button in row)
    assert await bot.store.cards.get(CHAT) is None  # no token to hand the library
    kept = await bot.store.cards.get(CHAT, lapsed=True)
    assert kept is not None and kept.is_lapsed  # the card stays, waiting for a login
    again = await bot.send(CHAT, "/loans")
    # What actually happened, not "not logged in yet".
    assert "udløbet eller blev afvist" in again.text
    assert "endnu" not in again.text


async def test_a_family_card_is_warned_and_forgotten_by_name(bot: BotHarness) -> None:
    chat = CHAT + 40
    await bot.connect(chat, KAREN)
    await bot.connect(chat, JONAS)
    await bot.store.cards.set_label(chat, 2, "Jonas")
    statement = (
        update(CardRow)
        .where(CardRow.chat_id == chat, CardRow.number == 2)  # type: ignore[arg-type]
        .values(token_expires_at=datetime.now(UTC) + timedelta(days=2, hours=1))
    )
    await bot.store.database.run(lambda conn: conn.execute(statement))
    before = len(bot.telegram.sent(chat))
    await run_expiry_job(bot)
    warning = await bot.next_message(chat, before)
    assert warning.html.startswith("👤 <b>Jonas</b>\n") and "udløber om 3 dage" in warning.text
    # Only Jonas's card was warned; Karen's has no expiry.
    assert not (await bot.store.cards.get(chat, 1)).expiry_warned  # type: ignore[union-attr]
    assert (await bot.store.cards.get(chat, 2)).expiry_warned  # type: ignore[union-attr]


async def test_logins_running_out_lapse_their_cards_in_one_message(bot: BotHarness) -> None:
    """The daily job: both cards' logins ran out; one message names both, each with its login,
    and the cards stay, by name, until their holders log in again (told once: the next run
    says nothing)."""
    chat = CHAT + 41
    await bot.connect(chat, KAREN)
    await bot.connect(chat, JONAS)
    await bot.store.cards.set_label(chat, 2, "Jonas")
    statement = (
        update(CardRow)
        .where(CardRow.chat_id == chat)  # type: ignore[arg-type]
        .values(token_expires_at=datetime.now(UTC) - timedelta(minutes=1))
    )
    await bot.store.database.run(lambda conn: conn.execute(statement))
    before = len(bot.telegram.sent(chat))
    await run_expiry_job(bot)
    told = await bot.next_message(chat, before)
    assert told.text.startswith("🔑 Bibliotekslogin for Karen og Jonas er udløbet.")
    logins = [b.text for row in told.buttons for b in row if b.url]
    links = [line for line in told.text.splitlines() if line.startswith("🔑 Log ind igen")]
    assert len(logins or links) == 2
    cards = await bot.store.cards.of_chat(chat, lapsed=True)
    assert [(card.label, card.is_lapsed) for card in cards] == [("Karen", True), ("Jonas", True)]
    await run_expiry_job(bot)
    assert len(bot.telegram.sent(chat)) == before + 1
