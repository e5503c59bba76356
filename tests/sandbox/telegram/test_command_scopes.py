"""setMyCommands / deleteMyCommands with a chat's scope, as Telegram keeps them: apart from the
default menus, for a chat the bot knows, and resolved chat first, then language, then default."""

from __future__ import annotations

import pytest
import telegram as tg
from telegram import BotCommandScopeChat
from telegram.error import BadRequest

from sandbox.telegram import TelegramStandIn
from tests.sandbox.telegram.conftest import CHAT


async def test_a_chats_menu_is_its_own(bot: tg.Bot, telegram: TelegramStandIn) -> None:
    await bot.set_my_commands([("loans", "Vis dine lån")], language_code="da")
    await bot.set_my_commands([("loans", "Vis dine lån")])
    await bot.set_my_commands([("loans", "Your loans")], scope=BotCommandScopeChat(CHAT))
    # The default menus are untouched; this chat sees its own, another Danish chat the default.
    assert telegram.commands == {
        "da": [{"command": "loans", "description": "Vis dine lån"}],
        None: [{"command": "loans", "description": "Vis dine lån"}],
    }
    assert telegram.chat_commands(CHAT) == [{"command": "loans", "description": "Your loans"}]
    telegram.add_chat(8, language_code="da")
    assert telegram.chat_commands(8)[0]["description"] == "Vis dine lån"
    got = await bot.get_my_commands(scope=BotCommandScopeChat(CHAT))
    assert [(c.command, c.description) for c in got] == [("loans", "Your loans")]
    # Deleted: the chat follows its language again; the default menus stay.
    assert await bot.delete_my_commands(scope=BotCommandScopeChat(CHAT))
    assert telegram.chat_commands(CHAT)[0]["description"] == "Vis dine lån"
    assert set(telegram.commands) == {"da", None}


async def test_a_chat_the_bot_does_not_know_is_refused(bot: tg.Bot) -> None:
    with pytest.raises(BadRequest, match="Chat not found"):
        await bot.set_my_commands([("loans", "x")], scope=BotCommandScopeChat(424242))
    with pytest.raises(BadRequest, match="Chat not found"):
        await bot.delete_my_commands(scope=BotCommandScopeChat(424242))
