"""Webhook mode: Telegram (the stand-in) delivers updates to `/telegram/webhook`."""

from __future__ import annotations

import json
import time

from tests.fixtures.bot import BotFactory, BotHarness
from tests.fixtures.patrons import KAREN
from tests.runtime.conftest import WEBHOOK_SECRET

CHAT = 7101
HEADER = "X-Telegram-Bot-Api-Secret-Token"


async def _webhook_bot(bot_factory: BotFactory) -> BotHarness:
    return await bot_factory(WEBHOOK_SECRET=WEBHOOK_SECRET)


def _update(update_id: int, chat_id: int, text: str) -> dict[str, object]:
    user = {"id": chat_id, "is_bot": False, "first_name": "Karen", "language_code": "da"}
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private", "first_name": "Karen"},
            "from": user,
            "text": text,
            "entities": [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}],
        },
    }


async def test_round_trip_through_the_webhook(bot_factory: BotFactory) -> None:
    bot = await _webhook_bot(bot_factory)
    token = bot.settings.TELEGRAM_BOT_TOKEN
    assert token is not None
    answer = await bot.http.post(f"{bot.telegram.url}/bot{token.get_secret_value()}/getWebhookInfo")
    info = answer.json()["result"]
    assert info["url"] == f"{bot.info.public_url}/telegram/webhook"

    await bot.connect(CHAT, KAREN)  # /login, the browser, then /start <code>, all by webhook
    loans = await bot.send(CHAT, "/loans")
    assert "Kongens fald" in loans.text
    assert bot.telegram.calls["getUpdates"] == 0  # nothing was polled


async def test_forged_or_missing_secret_is_refused(bot_factory: BotFactory) -> None:
    bot = await _webhook_bot(bot_factory)
    bot.add_chat(CHAT)
    url = f"{bot.info.web_url}/telegram/webhook"
    body = _update(900001, CHAT, "/help")
    for headers in ({HEADER: "not-the-secret"}, {}, {HEADER: WEBHOOK_SECRET[:-1]}):
        response = await bot.http.post(url, json=body, headers=headers)
        assert response.status_code == 403
    response = await bot.http.post(url, json=body, headers={HEADER: WEBHOOK_SECRET})
    assert response.status_code == 200
    reply = await bot.next_message(CHAT, 0)
    assert "/loans" in reply.text
    assert len(bot.telegram.sent(CHAT)) == 1  # the forged ones were not processed


async def test_malformed_body_is_a_400(bot_factory: BotFactory) -> None:
    bot = await _webhook_bot(bot_factory)
    url = f"{bot.info.web_url}/telegram/webhook"
    for content in (
        b"{not json",
        b"[1, 2]",
        b'"text"',
        json.dumps({"update_id": "x"}).encode(),
        json.dumps({"update_id": 5, "message": "hello"}).encode(),
    ):
        response = await bot.http.post(
            url,
            content=content,
            headers={HEADER: WEBHOOK_SECRET, "Content-Type": "application/json"},
        )
        assert response.status_code == 400, content
    health = await bot.http.get(f"{bot.info.web_url}/health")
    assert health.status_code == 200


async def test_answers_at_once_and_processes_in_the_background(bot_factory: BotFactory) -> None:
    bot = await _webhook_bot(bot_factory)
    await bot.connect(CHAT, KAREN)
    bot.sandbox.faults.latency["platform"] = 1.5
    started = time.monotonic()
    response = await bot.http.post(
        f"{bot.info.web_url}/telegram/webhook",
        json=_update(900002, CHAT, "/loans"),
        headers={HEADER: WEBHOOK_SECRET},
    )
    assert response.status_code == 200
    assert time.monotonic() - started < 0.75  # the platform call (1.5 s) is not awaited
    before = len(bot.telegram.sent(CHAT))
    reply = await bot.next_message(CHAT, before, timeout=10)
    assert "Kongens fald" in reply.text
