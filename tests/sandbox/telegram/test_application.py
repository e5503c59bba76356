"""A real PTB Application with long polling, against the stand-in."""

from __future__ import annotations

from sandbox.telegram import TelegramStandIn
from tests.sandbox.telegram.scripted_bot import scripted_bot

CHAT = 777


async def test_polling_application_conversation(telegram: TelegramStandIn) -> None:
    telegram.add_chat(CHAT, first_name="Ib", language_code="da")
    async with scripted_bot(telegram.url):
        asked = await telegram.send_text(CHAT, "/start abc-123")
        welcome = await telegram.wait_for(CHAT, "Velkommen", after=asked)
        assert welcome.text == "Velkommen! Kode: abc-123"

        typed = await telegram.send_text(CHAT, "Hej <verden> & co")
        echo = await telegram.wait_for(CHAT, "Du skrev", after=typed)
        assert echo.text == "Du skrev: Hej <verden> & co"
        assert echo.html == "Du skrev: <b>Hej &lt;verden&gt; &amp; co</b>"
        button = echo.button("Bekræft")
        assert button.callback_data == "confirm"

        query_id = await telegram.tap(CHAT, echo.message_id, "confirm")
        edited = await telegram.wait_for(CHAT, lambda m: m.edits == 1)
        assert (edited.message_id, edited.text, edited.buttons) == (
            echo.message_id,
            "Bekræftet: tak",
            [],
        )
        assert telegram.callback_answers[query_id]["text"] == "Bekræftet ✓"
        assert telegram.commands["da"][1] == {"command": "loans", "description": "Vis dine lån"}
    assert telegram.calls["getUpdates"] >= 2
    assert telegram.calls["deleteWebhook"] == 1
