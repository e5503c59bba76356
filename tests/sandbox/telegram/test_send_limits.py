"""The stand-in enforces Telegram's send limits per bot: 30 a second, one a second per chat after
a short burst, 20 a minute per group; each with a 429 and its `retry_after`. The stand-in's
clock is stopped or moved by hand, so no answer depends on how fast the machine is."""

from __future__ import annotations

import httpx
import pytest
import telegram as tg
from telegram.error import RetryAfter

from sandbox.telegram import TelegramStandIn
from sandbox.telegram.messages import CHAT_BURST, GROUP_LIMIT, TELEGRAM_RATE
from tests.fixtures.telegram import TEST_BOT_TOKEN

OTHER_TOKEN = "222222:OTHER-bot"
GROUP = -100777


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def _send(client: httpx.AsyncClient, url: str, chat_id: int, token: str) -> httpx.Response:
    return await client.post(
        f"{url}/bot{token}/sendMessage", data={"chat_id": str(chat_id), "text": "hej"}
    )


async def test_one_chat_gets_a_burst_then_one_a_second(telegram: TelegramStandIn) -> None:
    clock = telegram.send_rate.clock = Clock()
    telegram.add_chat(9001)
    async with tg.Bot(TEST_BOT_TOKEN, base_url=f"{telegram.url}/bot") as bot:
        for n in range(CHAT_BURST):
            await bot.send_message(9001, f"m{n}")
        with pytest.raises(RetryAfter, match="Retry in 1 second"):
            await bot.send_message(9001, "too soon")
        clock.now += 1.0  # a second on: one more
        await bot.send_message(9001, "a second later")
    assert len(telegram.sent(9001)) == CHAT_BURST + 1
    assert telegram.send_rate.refused_by == {"chat": 1}


async def test_thirty_a_second_per_bot_and_twenty_a_minute_per_group(
    telegram: TelegramStandIn,
) -> None:
    clock = telegram.send_rate.clock = Clock()
    telegram.add_bot(OTHER_TOKEN)
    chats = list(range(9100, 9100 + round(TELEGRAM_RATE) + 1))
    for chat in chats:
        telegram.add_chat(chat)
    telegram.add_group(GROUP)
    async with httpx.AsyncClient() as client:
        answers = [await _send(client, telegram.url, chat, TEST_BOT_TOKEN) for chat in chats]
        assert [a.status_code for a in answers] == [200] * (len(chats) - 1) + [429]
        assert answers[-1].json()["parameters"] == {"retry_after": 1}
        # Another bot has a second of its own.
        assert (await _send(client, telegram.url, chats[-1], OTHER_TOKEN)).status_code == 200

        clock.now += 1.0
        group = [await _send(client, telegram.url, GROUP, OTHER_TOKEN) for _ in range(GROUP_LIMIT)]
        assert {a.status_code for a in group} == {200}
        clock.now += 1.0
        refused = await _send(client, telegram.url, GROUP, OTHER_TOKEN)
        assert refused.status_code == 429
        assert refused.json()["parameters"] == {"retry_after": 59}  # when the first leaves
        clock.now += 59.0
        assert (await _send(client, telegram.url, GROUP, OTHER_TOKEN)).status_code == 200
    assert telegram.send_rate.refused_by == {"global": 1, "group": 1}
