"""No token is left valid at the access service once the bot lets go of it: a replaced
account, a replaced or expired pending link, /logout (also with a key gone), /forget."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from bot.library.client import LibraryClient
from storage.crypto import TokenCipher
from storage.store import Store
from storage.tables import CardRow, PendingLinkRow
from tests.fixtures.bot import DEEP_LINK, BotHarness
from tests.fixtures.database import new_key
from tests.fixtures.patrons import KAREN
from tests.fixtures.storage import FakeClock

CHAT = 5401
REVOKE = "oauth DELETE /oauth/revoke"


async def _pending(bot: BotHarness, chat_id: int = CHAT) -> str:
    """/login and the library's login page, up to the page with the code; the code."""
    bot.add_chat(chat_id)
    redirect = await bot.log_in_at_library(await bot.login_url(chat_id), KAREN)
    page = await bot.follow(redirect)
    assert page.status_code == 200
    found = DEEP_LINK.search(page.text)
    assert found is not None
    return found.group(1)


async def _account_token(bot: BotHarness) -> str:
    card = await bot.store.cards.get(CHAT)
    assert card is not None
    return card.token


async def test_a_new_login_revokes_the_token_it_replaces(bot: BotHarness) -> None:
    await bot.connect(CHAT, KAREN)
    first = await _account_token(bot)
    await bot.connect(CHAT, KAREN)
    second = await _account_token(bot)
    assert second != first
    assert bot.sandbox.was_revoked(first)
    assert bot.sandbox.live_tokens(KAREN) == [second]
    assert bot.sandbox.calls[REVOKE] == 1
    assert "Kongens fald" in (await bot.send(CHAT, "/loans")).text


async def test_a_replaced_pending_link_revokes_its_token(bot: BotHarness) -> None:
    stale = await _pending(bot)
    [first] = bot.sandbox.live_tokens(KAREN)
    fresh = await _pending(bot)
    assert bot.sandbox.was_revoked(first)
    [second] = bot.sandbox.live_tokens(KAREN)
    assert "ikke gyldig" in (await bot.send(CHAT, f"/start {stale}")).text
    assert "✅" in (await bot.send(CHAT, f"/start {fresh}")).text
    assert await _account_token(bot) == second
    assert bot.sandbox.calls[REVOKE] == 1


async def test_an_expired_pending_link_is_revoked_at_the_next_login(bot: BotHarness) -> None:
    code = await _pending(bot)
    [expired] = bot.sandbox.live_tokens(KAREN)
    past = update(PendingLinkRow).values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
    await bot.store.database.run(lambda conn: conn.execute(past))
    assert "ikke gyldig" in (await bot.send(CHAT, f"/start {code}")).text
    assert not bot.sandbox.was_revoked(expired)  # not yet: the sweep or the next login does it
    await bot.connect(CHAT, KAREN)
    assert bot.sandbox.was_revoked(expired)
    assert bot.sandbox.live_tokens(KAREN) == [await _account_token(bot)]


async def test_the_hourly_purge_revokes_expired_pending_links(
    library_sandbox: Any, database_url: str
) -> None:
    sandbox = library_sandbox
    clock = FakeClock()
    key = new_key()
    store = await Store.open(database_url, [key], clock=clock)
    client = LibraryClient(**_client_arguments(sandbox))
    store.revoke_dropped = client.revoke
    try:
        token = sandbox.issue_token(KAREN)
        live = sandbox.issue_token(KAREN)
        await store.create_pending_link(1, token, None)
        clock.advance(timedelta(minutes=5))
        await store.create_pending_link(2, live, None)
        clock.advance(timedelta(minutes=6))  # the first is expired, the second not yet
        assert await store.purge_expired() == 1
        assert sandbox.was_revoked(token)
        assert not sandbox.was_revoked(live)
        assert sandbox.calls[REVOKE] == 1
        assert await store.purge_expired() == 0
    finally:
        await client.aclose()
        await store.close()


def _client_arguments(sandbox: Any) -> dict[str, str]:
    env = sandbox.env()
    return {
        "oauth_url": env["OAUTH_URL"],
        "auth_url": env["AUTH_URL"],
        "platform_url": env["PLATFORM_URL"],
        "client_id": env["CLIENT_ID"],
        "client_secret": env["CLIENT_SECRET"],
    }


async def test_forget_revokes_the_account_and_a_pending_link(bot: BotHarness) -> None:
    await bot.connect(CHAT, KAREN)
    await _pending(bot)
    assert len(bot.sandbox.live_tokens(KAREN)) == 2
    prompt = await bot.send(CHAT, "/forget")
    done = await bot.tap(CHAT, prompt, "🗑 Ja, slet alt")
    assert done is not None and "Alt er slettet" in done.text
    assert bot.sandbox.live_tokens(KAREN) == []
    assert bot.sandbox.calls[REVOKE] == 2


async def test_logout_with_the_access_service_failing_says_so(bot: BotHarness) -> None:
    await bot.connect(CHAT, KAREN)
    token = await _account_token(bot)
    bot.sandbox.faults.fail_next["/oauth/revoke"] = [500]
    reply = await bot.send(CHAT, "/logout")
    assert "Biblioteket svarede ikke" in reply.text
    assert bot.sandbox.calls[REVOKE] == 1  # never retried
    assert bot.sandbox.token_is_live(token)
    assert await bot.store.cards.get(CHAT) is None


@pytest.mark.parametrize("with_pending_link", [False, True])
async def test_logout_after_a_key_went_missing_tells_the_truth(
    bot: BotHarness, with_pending_link: bool
) -> None:
    await bot.connect(CHAT, KAREN)
    token = await _account_token(bot)
    # The key the token was sealed with is gone (removed before `rotate-keys` ran).
    lost = TokenCipher([new_key()]).encrypt(token, CHAT)
    seal = update(CardRow).where(CardRow.chat_id == CHAT).values(token=lost)
    await bot.store.database.run(lambda conn: conn.execute(seal))
    pending = None
    if with_pending_link:
        await _pending(bot)
        pending = next(t for t in bot.sandbox.live_tokens(KAREN) if t != token)
    reply = await bot.send(CHAT, "/logout")
    assert "kunne ikke afsluttes hos biblioteket" in reply.text
    assert "ikke logget ind" not in reply.text
    cards = select(CardRow.chat_id)  # type: ignore[call-overload]
    assert await bot.store.database.run(lambda conn: conn.execute(cards).all()) == []
    assert bot.sandbox.token_is_live(token)  # nobody can revoke what nobody can read
    if pending is not None:
        assert bot.sandbox.was_revoked(pending)  # what can be revoked still is
    assert bot.sandbox.calls[REVOKE] == (1 if with_pending_link else 0)
    again = await bot.send(CHAT, "/logout")
    assert "ikke logget ind" in again.text
