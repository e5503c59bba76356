"""Telegram's language remembered from every update, and logging out for real (issue 15)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

from tests.fixtures.bot import BotHarness
from tests.fixtures.chat import command
from tests.fixtures.jobs import run_expiry_job, set_expiry
from tests.fixtures.patrons import KAREN

CHAT = 7101


async def test_telegram_language_is_remembered_and_used_for_expiry_notices(
    bot: BotHarness,
) -> None:
    # English Telegram, and never /language: the chat's own choice stays unset.
    await bot.connect(CHAT, KAREN, language_code="en")
    chat = await bot.store.chats.chat(CHAT)
    assert chat.language is None and chat.telegram_language == "en"
    await set_expiry(bot, CHAT, datetime.now(UTC) - timedelta(minutes=1))
    before = len(bot.telegram.sent(CHAT))
    await run_expiry_job(bot)  # a message nobody asked for
    expired = await bot.next_message(CHAT, before)
    assert expired.text.startswith("🔑 Your library login has expired")
    # What actually happened, also when the patron writes afterwards.
    [again] = await command(bot, CHAT, "/loans")
    assert again.text.startswith("🔑 Your library login has expired")


async def test_logout_revokes_offers_the_sso_logout_and_asks_for_a_fresh_login(
    bot: BotHarness,
) -> None:
    await bot.connect(CHAT, KAREN, language_code="en")
    # With a card, /login adds another: a login page even where the browser is signed on.
    assert "force_login=1" in await bot.login_url(CHAT)
    [reply] = await command(bot, CHAT, "/logout")
    assert reply.text.startswith("👋 You are logged out here. I deleted your access")
    # What happened and what will happen, without a "you" that may be someone else.
    assert "the next /login here asks for a card number and PIN again" in reply.text
    assert "remembers you" not in reply.text
    # The link to end the single sign-on session goes through the bot's page, no token in it.
    account_link = next(
        (b.url for row in reply.buttons for b in row if b.url),
        reply.text[reply.text.index("http") :] if "http" in reply.text else None,
    )
    assert account_link is not None
    assert account_link.startswith(f"{bot.info.public_url}/oauth/logout?")
    assert "token" not in account_link
    assert bot.sandbox.calls["oauth DELETE /oauth/revoke"] == 1
    # The page sends the browser on to the access service's logout, without a token.
    hop = await bot.http.get(account_link.replace(bot.info.public_url, bot.info.web_url))
    assert hop.status_code == 302
    target = hop.headers["location"]
    assert target.startswith(f"{bot.sandbox.env()['OAUTH_URL']}/logout?")
    assert "access_token" not in target
    assert parse_qs(urlsplit(target).query)["redirect_uri"] == [
        f"{bot.info.public_url}/oauth/callback"
    ]
    # The access service ends the session and comes back: a page in the chat's language (the
    # bot's page left it in a cookie, which the browser, here the test's client, sends back).
    back = await bot.http.get(target)
    assert back.status_code in (302, 303)
    page = await bot.http.get(
        back.headers["location"].replace(bot.info.public_url, bot.info.web_url),
        headers={"Accept-Language": "da"},
    )
    assert back.headers["location"].endswith("?message=logout")
    assert page.status_code == 200 and "You are logged out" in page.text
    assert "card number and PIN again" in page.text and "close the browser" not in page.text
    assert "Back to the chat" in page.text
    # The next login asks for the card number and PIN again.
    assert "force_login=1" in await bot.login_url(CHAT)
    [told] = await command(bot, CHAT, "/loans")
    assert told.text.startswith("🔑 You logged out.")
    # Connecting again ends the fresh-login request.
    await bot.connect(CHAT, KAREN, language_code="en")
    assert not (await bot.store.chats.chat(CHAT)).fresh_login


async def test_forget_says_what_was_deleted(bot: BotHarness) -> None:
    bot.add_chat(CHAT + 1, language_code="en")
    prompt = await bot.send(CHAT + 1, "/forget")
    done = await bot.tap(CHAT + 1, prompt, "🗑 Yes, delete everything")
    assert done is not None and "(you were not logged in)" in done.text


async def test_a_logout_that_needs_the_browser_closed_says_so(bot: BotHarness) -> None:
    """hejmdal returns `message=logout_close_browser` after a UNI-login or WAYF login: only
    closing the browser ends that login, and the page tells the patron, in their language."""
    url = f"{bot.info.web_url}/oauth/callback"
    for lang, words in (("en", "close the browser"), ("da", "luk browseren"), ("uk", "закрийте")):
        page = await bot.http.get(
            url, params={"message": "logout_close_browser"}, headers={"Accept-Language": lang}
        )
        assert page.status_code == 200 and words in page.text, lang
