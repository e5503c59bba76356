"""Logs at DEBUG through a whole journey carry none of the secrets, in either format."""

from __future__ import annotations

import io
import json
import logging
from typing import Literal
from urllib.parse import parse_qs, urlsplit

import pytest

from bot.config.logs import setup_logging
from bot.runtime.maintenance import remind_once
from sandbox.library import LibrarySandbox
from tests.fixtures.bot import DEEP_LINK, BotFactory
from tests.fixtures.patrons import KAREN, LITTLE_PRINCE
from tests.fixtures.telegram import TEST_BOT_TOKEN
from tests.runtime.conftest import WEBHOOK_SECRET

CHAT = 7301


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.usefixtures("restore_logging")
async def test_no_secret_in_the_logs(
    bot_factory: BotFactory, library_sandbox: LibrarySandbox, fmt: Literal["text", "json"]
) -> None:
    stream = io.StringIO()
    client_secret = library_sandbox.client_secret
    # As `library-bot run` does before it starts the bot.
    setup_logging(
        "DEBUG", fmt, secrets=[TEST_BOT_TOKEN, client_secret, WEBHOOK_SECRET], stream=stream
    )
    logging.getLogger("tests").info("journey starts")
    bot = await bot_factory(WEBHOOK_SECRET=WEBHOOK_SECRET, LOG_FORMAT=fmt)

    # /login, the library's login page, the callback, /start <code>.
    bot.add_chat(CHAT)
    authorize = await bot.login_url(CHAT)
    state = parse_qs(urlsplit(authorize).query)["state"][0]
    redirect = await bot.log_in_at_library(authorize, KAREN)
    code = parse_qs(urlsplit(redirect.headers["location"]).query)["code"][0]
    page = await bot.follow(redirect)
    found = DEEP_LINK.search(page.text)
    assert found is not None
    link_code = found.group(1)
    done = await bot.send(CHAT, f"/start {link_code}")
    assert "✅" in done.text
    card = await bot.store.cards.get(CHAT)
    assert card is not None
    access_token = card.token

    loans = await bot.send(CHAT, "/loans")
    assert "Kongens fald" in loans.text
    ask = await bot.send(CHAT, f"/order {LITTLE_PRINCE}")
    ordered = await bot.tap(CHAT, ask, "📥 Ja, bestil")
    assert ordered is not None
    report = await remind_once(bot.settings)
    assert report.reminders > 0
    # A failing platform call: the error path logs too.
    bot.sandbox.faults.down.add("platform")
    await bot.send(CHAT, "/debt")
    bot.sandbox.faults.down.clear()

    logged = stream.getvalue()
    assert "journey starts" in logged
    assert "bot.jobs.sweep" in logged  # the sweep's summary
    assert len(logged.splitlines()) > 50  # DEBUG really was on
    # The lines that carried secrets were logged, masked. The Bot API's calls are logged by
    # method, never by URL (the bot token is in it).
    assert "setWebhook" in logged and "/bot123456:" not in logged
    assert "/v3/user" in logged  # the token went in a header, the request line is logged
    secrets = {
        "access token": access_token,
        "code": code,
        "state": state,
        "link code": link_code,
        "client secret": client_secret,
        "bot token": TEST_BOT_TOKEN,
        "bot token secret part": TEST_BOT_TOKEN.split(":", 1)[1],
        "webhook secret": WEBHOOK_SECRET,
    }
    leaks = {name for name, secret in secrets.items() if secret in logged}
    assert not leaks, f"found in the logs: {sorted(leaks)}"
    if fmt == "json":
        for line in logged.splitlines():
            entry = json.loads(line)
            assert isinstance(entry, dict) and {"time", "level", "logger", "message"} <= set(entry)
