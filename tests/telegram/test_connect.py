"""Connecting a library account: the whole journey over real HTTP against the sandbox."""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from sqlalchemy import update

from bot.library.client import LibraryClient
from bot.library.errors import TokenRejected
from storage.tables import LoginStateRow
from tests.fixtures.bot import DEEP_LINK, BotFactory, BotHarness
from tests.fixtures.patrons import KAREN, OLE

CHAT = 5001
OTHER_CHAT = 5002
TOKEN_CALL = "oauth POST /oauth/token"


def _state_of(url: str) -> str:
    return parse_qs(urlsplit(url).query)["state"][0]


async def _success_page(bot: BotHarness, chat_id: int, user_id: str = KAREN) -> str:
    bot.add_chat(chat_id)
    redirect = await bot.log_in_at_library(await bot.login_url(chat_id), user_id)
    page = await bot.follow(redirect)
    assert page.status_code == 200
    found = DEEP_LINK.search(page.text)
    assert found
    return found.group(1)


async def test_connect_success(bot: BotHarness) -> None:
    await bot.connect(CHAT)
    card = await bot.store.cards.get(CHAT)
    assert card is not None
    assert card.token_expires_at is not None
    assert card.token_expires_at > datetime.now(UTC) + timedelta(days=25)
    assert card.unique_id and card.municipality == "101"
    last = bot.telegram.sent(CHAT)[-1]
    assert "Forbundet" in last.text


async def test_success_page_follows_the_chats_language_not_the_browsers(bot: BotHarness) -> None:
    for chat_id, code, accept, back, title in (
        (CHAT, "en", "da,en;q=0.5", "Back to Telegram", "Almost done"),
        (OTHER_CHAT, "da", "en-GB,en;q=0.9", "Tilbage til Telegram", "Næsten færdig"),
    ):
        bot.add_chat(chat_id, language_code=code)
        redirect = await bot.log_in_at_library(await bot.login_url(chat_id))
        page = await bot.follow(redirect, **{"Accept-Language": accept})
        assert page.status_code == 200
        assert back in page.text and title in page.text
        link = re.search(r'href="([^"]+)"', page.text)
        assert link is not None
        assert link.group(1).startswith(f"https://t.me/{bot.info.bot_username}?start=")
        code = link.group(1).rsplit("=", 1)[1]
        assert f"/start {code}" in page.text
        assert page.headers["Cache-Control"] == "no-store"
        assert page.headers["Referrer-Policy"] == "no-referrer"
        assert page.headers["X-Frame-Options"] == "DENY"
        assert "default-src 'none'" in page.headers["Content-Security-Policy"]
        assert "script-src" not in page.headers["Content-Security-Policy"]


async def test_denied_login(bot: BotHarness) -> None:
    bot.add_chat(CHAT, language_code="en")
    calls = bot.sandbox.calls[TOKEN_CALL]
    redirect = await bot.log_in_at_library(await bot.login_url(CHAT), action="deny")
    assert "error=access_denied" in redirect.headers["location"]
    page = await bot.follow(redirect, **{"Accept-Language": "da"})
    assert page.status_code == 200
    assert "Login cancelled" in page.text  # the chat's language
    # A way back to the chat (no start parameter: there is nothing to redeem).
    assert f'href="https://t.me/{bot.info.bot_username}">Back to the chat</a>' in page.text
    again = await bot.http.get(redirect.headers["location"])
    assert again.status_code == 410  # the state was used up by the denial
    # A used state names no chat any more: the browser's language (here none: Danish).
    assert "Linket er udløbet" in again.text
    assert f'href="https://t.me/{bot.info.bot_username}">Tilbage til chatten</a>' in again.text
    assert bot.sandbox.calls[TOKEN_CALL] == calls
    assert await bot.store.cards.get(CHAT) is None


async def test_expired_link_page_speaks_the_chats_language(bot: BotHarness) -> None:
    bot.add_chat(CHAT, language_code="en")
    await bot.send(CHAT, "/start")  # Telegram's language is remembered from the update
    state = await bot.store.logins.create_login_state(CHAT, ttl=timedelta(seconds=-1))
    url = f"{bot.info.public_url}/oauth/callback?{urlencode({'state': state, 'code': 'abc'})}"
    page = await bot.http.get(url, headers={"Accept-Language": "da"})
    assert page.status_code == 410
    assert "This link has expired" in page.text
    assert f'href="https://t.me/{bot.info.bot_username}">Back to the chat</a>' in page.text


async def test_replayed_state(bot: BotHarness) -> None:
    bot.add_chat(CHAT)
    redirect = await bot.log_in_at_library(await bot.login_url(CHAT))
    first = await bot.follow(redirect)
    assert first.status_code == 200
    calls = bot.sandbox.calls[TOKEN_CALL]
    again = await bot.follow(redirect, **{"Accept-Language": "en"})
    assert again.status_code == 410
    assert "expired or was already used" in again.text
    assert bot.sandbox.calls[TOKEN_CALL] == calls


async def test_forged_state(bot: BotHarness) -> None:
    callback = f"{bot.info.web_url}/oauth/callback"
    page = await bot.http.get(callback, params={"state": "forged-state", "code": "abc"})
    assert page.status_code == 410
    assert "Linket er udløbet" in page.text
    assert bot.sandbox.calls[TOKEN_CALL] == 0


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"code": "abc"},
        {"state": "abc"},
        {"state": "x" * 300, "code": "abc"},
        {"state": "abc\x00", "code": "abc"},
        {"state": "abc", "code": "c" * 5000},
    ],
)
async def test_malformed_callback(bot: BotHarness, params: dict[str, str]) -> None:
    page = await bot.http.get(
        f"{bot.info.web_url}/oauth/callback", params=params, headers={"Accept-Language": "en"}
    )
    assert page.status_code == 400
    assert "Invalid request" in page.text
    assert bot.sandbox.calls[TOKEN_CALL] == 0


async def test_expired_state(bot: BotHarness) -> None:
    bot.add_chat(CHAT)
    url = await bot.login_url(CHAT)
    expire = update(LoginStateRow).values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
    await bot.store.database.run(lambda conn: conn.execute(expire))
    redirect = await bot.log_in_at_library(url)
    page = await bot.follow(redirect)
    assert page.status_code == 410
    assert bot.sandbox.calls[TOKEN_CALL] == 0


async def test_phishing_code_refused_in_another_chat(bot: BotHarness) -> None:
    # The attacker's chat makes the link; the victim (patron 2) logs in with it.
    code = await _success_page(bot, CHAT, user_id=OLE)
    bot.add_chat(OTHER_CHAT)
    refused = await bot.send(OTHER_CHAT, f"/start {code}")
    assert "ikke gyldig her" in refused.text
    assert await bot.store.cards.get(OTHER_CHAT) is None
    # Only the chat that asked for /login can complete it, and the code still works there.
    done = await bot.send(CHAT, f"/start {code}")
    assert "Forbundet" in done.text
    assert await bot.store.cards.get(CHAT) is not None
    replay = await bot.send(CHAT, f"/start {code}")
    assert "ikke gyldig" in replay.text


async def test_token_endpoint_failure(bot: BotHarness) -> None:
    bot.add_chat(CHAT, language_code="en")
    bot.sandbox.faults.fail_next["/oauth/token"] = [500]
    redirect = await bot.log_in_at_library(await bot.login_url(CHAT))
    page = await bot.follow(redirect, **{"Accept-Language": "en"})
    assert page.status_code == 502
    assert "not answering" in page.text
    assert "start=" not in page.text
    assert await bot.store.cards.count() == 0


async def test_logout_revokes_and_forgets(bot: BotHarness) -> None:
    await bot.connect(CHAT)
    card = await bot.store.cards.get(CHAT)
    assert card is not None
    reply = await bot.send(CHAT, "/logout")
    assert "logget ud" in reply.text
    assert await bot.store.cards.get(CHAT) is None
    assert bot.sandbox.calls["oauth DELETE /oauth/revoke"] == 1
    async with LibraryClient.from_settings(bot.settings) as client:
        with pytest.raises(TokenRejected):
            await client.userinfo(card.token)
    again = await bot.send(CHAT, "/logout")
    assert "ikke logget ind" in again.text


async def test_forget_removes_everything(bot: BotHarness) -> None:
    await bot.connect(CHAT)
    await bot.store.chats.set_language(CHAT, "en")
    prompt = await bot.send(CHAT, "/forget")
    labels = [button.text for row in prompt.buttons for button in row]
    assert labels[0] == "🗑 Yes, delete everything"  # the confirming button first
    done = await bot.tap(CHAT, prompt, "🗑 Yes, delete everything")
    assert done is not None and "Everything is deleted" in done.text
    assert await bot.store.cards.get(CHAT) is None
    assert (await bot.store.chats.chat(CHAT)).language is None
    assert not done.buttons  # the prompt's buttons are gone with the edit


async def test_forget_declined_keeps_account(bot: BotHarness) -> None:
    await bot.connect(CHAT)
    prompt = await bot.send(CHAT, "/forget")
    kept = await bot.tap(CHAT, prompt, "Nej, behold")
    assert kept is not None and "Intet er slettet" in kept.text
    assert await bot.store.cards.get(CHAT) is not None


async def test_language_choice(bot: BotHarness) -> None:
    bot.add_chat(CHAT)
    prompt = await bot.send(CHAT, "/language")
    labels = [button.text for row in prompt.buttons for button in row]
    assert labels == ["Dansk", "English", "Українська", "Automatisk (fra Telegram)"]
    chosen = await bot.tap(CHAT, prompt, "English")
    assert chosen is not None and "now English" in chosen.text
    assert (await bot.store.chats.chat(CHAT)).language == "en"
    help_text = await bot.send(CHAT, "/help")
    assert "Commands" in help_text.text
    prompt = await bot.send(CHAT, "/language")
    auto = await bot.tap(CHAT, prompt, "Automatic (from Telegram)")
    assert auto is not None
    assert (await bot.store.chats.chat(CHAT)).language is None


async def test_no_plain_token_in_database(bot: BotHarness) -> None:
    await bot.connect(CHAT)
    card = await bot.store.cards.get(CHAT)
    assert card is not None
    database = Path(bot.settings.DATABASE_URL.split("///", 1)[1])
    content = b"".join(
        path.read_bytes() for path in database.parent.glob(database.name + "*") if path.is_file()
    )
    assert card.token.encode() not in content
    assert len(content) > 0


async def test_no_secrets_in_logs(bot: BotHarness, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    bot.add_chat(CHAT)
    url = await bot.login_url(CHAT)
    state = _state_of(url)
    redirect = await bot.log_in_at_library(url)
    code = parse_qs(urlsplit(redirect.headers["location"]).query)["code"][0]
    page = await bot.follow(redirect)
    link_code = DEEP_LINK.search(page.text)
    assert link_code is not None
    reply = await bot.send(CHAT, f"/start {link_code.group(1)}")
    assert "Forbundet" in reply.text
    card = await bot.store.cards.get(CHAT)
    assert card is not None
    await bot.send(CHAT, "/logout")
    text = caplog.text + "".join(str(record.__dict__) for record in caplog.records)
    secret = bot.settings.CLIENT_SECRET
    assert secret is not None
    for value in (card.token, code, state, link_code.group(1), secret.get_secret_value()):
        assert value not in text


async def test_localhost_public_url_sends_link_as_text(bot_factory: BotFactory) -> None:
    bot = await bot_factory(PUBLIC_URL="http://localhost:8080")
    bot.add_chat(CHAT)
    reply = await bot.send(CHAT, "/login")
    assert not reply.buttons
    assert "http" in reply.text and "oauth/authorize" in reply.text
    assert "redirect_uri=http%3A%2F%2Flocalhost%3A8080%2Foauth%2Fcallback" in reply.text


async def test_callback_without_bot_redirect_is_not_found(bot: BotHarness) -> None:
    async with httpx.AsyncClient() as client:
        response = await client.post(f"{bot.info.web_url}/telegram/webhook", json={})
    assert response.status_code in (404, 405)  # no webhook route in polling mode


async def _callback_with_state(bot: BotHarness, **params: str) -> httpx.Response:
    """The callback as the access service would send the browser back, with a live state."""
    state = parse_qs(urlsplit(await bot.login_url(CHAT)).query)["state"][0]
    query = urlencode({"state": state, **params})
    return await bot.http.get(f"{bot.info.public_url}/oauth/callback?{query}")


@pytest.mark.parametrize("error", ["server_error", "temporarily_unavailable", "invalid_request"])
async def test_a_failed_login_is_not_told_as_cancelled(bot: BotHarness, error: str) -> None:
    """Only `access_denied` is the patron's cancellation; any other error is the service's
    failure (or a refusal of our request): 502, said as such, with a way back."""
    bot.add_chat(CHAT, language_code="en")
    page = await _callback_with_state(bot, error=error)
    assert page.status_code == 502
    assert "The library is not answering" in page.text and "cancelled" not in page.text
    assert f'href="https://t.me/{bot.info.bot_username}">Back to the chat</a>' in page.text


async def test_a_code_the_access_service_refuses_is_an_expired_link(bot: BotHarness) -> None:
    """A code that expired or was used (`invalid_grant`) is not the library failing: 410, and
    a new /login."""
    bot.add_chat(CHAT, language_code="en")
    page = await _callback_with_state(bot, code="BOGUSCODE123")
    assert page.status_code == 410
    assert "This link has expired" in page.text
    assert await bot.store.cards.get(CHAT) is None
