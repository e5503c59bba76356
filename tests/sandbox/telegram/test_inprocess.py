"""The stand-in's Bot API in-process (`TelegramStandIn.request()`): PTB's whole request path,
the stand-in's strict checks and faults, no socket."""

from __future__ import annotations

import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import BadRequest, Forbidden, InvalidToken, RetryAfter, TimedOut

from sandbox.telegram import TelegramStandIn

TOKEN = "123456:in-process"
CHAT = 5


def keyboard(**button: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton("x", **button)]])  # type: ignore[arg-type]


@pytest.fixture
def stand_in() -> TelegramStandIn:
    """Never started: no server, no port."""
    stand_in = TelegramStandIn()
    stand_in.add_bot(TOKEN)
    stand_in.add_chat(CHAT)
    return stand_in


async def test_a_send_lands_in_the_chat_and_is_counted(stand_in: TelegramStandIn) -> None:
    async with Bot(TOKEN, base_url="http://unused/bot", request=stand_in.request()) as bot:
        assert bot.username == "library_sandbox_bot"
        sent = await bot.send_message(
            CHAT,
            "<b>Hej</b> &amp; farvel",
            parse_mode="HTML",
            reply_markup=keyboard(callback_data="y"),
        )
    [shown] = stand_in.sent(CHAT)
    assert (sent.message_id, sent.text) == (shown.message_id, "Hej & farvel")
    assert shown.html == "<b>Hej</b> &amp; farvel" and shown.buttons[0][0].callback_data == "y"
    assert stand_in.calls["sendMessage"] == 1


@pytest.mark.parametrize(
    ("text", "markup", "refusal"),
    [
        ("<b>unclosed", None, "Can't parse entities"),
        ("x" * 4097, None, "Message is too long"),
        ("x", keyboard(callback_data="y" * 65), "Button_data_invalid"),
        ("x", keyboard(url="http://localhost:8080/"), "Button_url_invalid"),
    ],
)
async def test_what_telegram_refuses_is_refused(
    stand_in: TelegramStandIn, text: str, markup: InlineKeyboardMarkup | None, refusal: str
) -> None:
    async with Bot(TOKEN, base_url="http://unused/bot", request=stand_in.request()) as bot:
        with pytest.raises(BadRequest, match=refusal):
            await bot.send_message(CHAT, text, parse_mode="HTML", reply_markup=markup)
    assert stand_in.sent(CHAT) == []


async def test_faults_blocks_and_tokens_answer_as_over_http(stand_in: TelegramStandIn) -> None:
    async with Bot(TOKEN, base_url="http://unused/bot", request=stand_in.request()) as bot:
        stand_in.failures.fail("sendMessage", 429, retry_after=3)
        with pytest.raises(RetryAfter):
            await bot.send_message(CHAT, "x")
        stand_in.block(CHAT)
        with pytest.raises(Forbidden, match="blocked"):
            await bot.send_message(CHAT, "x")
    with pytest.raises(InvalidToken):
        async with Bot("999:unknown", base_url="http://unused/bot", request=stand_in.request()):
            pass


async def test_a_call_given_up_on_still_takes_effect(stand_in: TelegramStandIn) -> None:
    """As on a server: the bot cannot tell a late send that took effect from a lost one."""
    stand_in.failures.hang("sendMessage", 0.3)
    async with Bot(TOKEN, base_url="http://unused/bot", request=stand_in.request()) as bot:
        with pytest.raises(TimedOut):
            await bot.send_message(CHAT, "late", read_timeout=0.05)
        await stand_in.wait_for(CHAT, "late", timeout=5)
