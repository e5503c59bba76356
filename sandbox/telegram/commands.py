"""The bot's command menus: set, get and delete per scope and language, and the menu a user sees.

A user sees the menu of the narrowest scope that has one (this chat, then all private chats,
then the default), in their language before the language-less one: Telegram's fallback.
"""

from __future__ import annotations

import json
import re

from sandbox.telegram.params import (
    Params,
    as_json,
    bad,
    language_code,
    scope_key,
)
from sandbox.telegram.state import Bot, State

MAX_COMMANDS = 100
_COMMAND_NAME = re.compile(r"[a-z0-9_]{1,32}")

Command = dict[str, str]


DEFAULT_SCOPE = json.dumps({"type": "default"})


def _key(state: State, params: Params) -> tuple[str, str]:
    key = scope_key(params)
    scope = json.loads(key)
    if scope["type"] == "chat":
        # As Telegram: a chat's scope names a chat the bot knows (a string id is the same chat).
        chat_id = str(scope.get("chat_id", ""))
        if not re.fullmatch(r"-?\d+", chat_id) or int(chat_id) not in state.chats:
            raise bad("chat not found")
        key = json.dumps(scope | {"chat_id": int(chat_id)}, sort_keys=True)
    return key, language_code(params)


def menu(state: State, chat_id: int) -> list[Command]:
    """The command menu the chat's user sees."""
    chat = state.chat(chat_id)
    bot = state.default_bot()
    scopes = [
        {"type": "chat", "chat_id": chat_id},
        {"type": "all_private_chats"},
        {"type": "default"},
    ]
    for scope in scopes:
        key = json.dumps(scope, sort_keys=True)
        for language in (chat.language_code or "", ""):
            found = bot.scoped_commands.get((key, language))
            if found:
                return list(found)
    return []


class Commands:
    def __init__(self, state: State) -> None:
        self.state = state

    async def set_commands(self, bot: Bot, params: Params) -> bool:
        raw = as_json(params.get("commands"), "can't parse commands JSON object")
        if not isinstance(raw, list):
            raise bad("can't parse commands JSON object")
        commands: list[Command] = []
        for item in raw:
            if not isinstance(item, dict):
                raise bad("can't parse BotCommand JSON object")
            command = str(item.get("command", ""))
            description = str(item.get("description", ""))
            if not _COMMAND_NAME.fullmatch(command):
                raise bad("BOT_COMMAND_INVALID")
            if not 1 <= len(description) <= 256:
                raise bad("BOT_COMMAND_DESCRIPTION_INVALID")
            commands.append({"command": command, "description": description})
        if len(commands) > MAX_COMMANDS:
            raise bad("too many commands")
        key = _key(self.state, params)
        if not commands:
            self._forget(bot, key)
            return True
        bot.scoped_commands[key] = commands
        if key[0] == DEFAULT_SCOPE:  # `commands` mirrors the default scope only
            self.state.commands[key[1] or None] = commands
        self.state.bump()
        return True

    async def get_commands(self, bot: Bot, params: Params) -> list[Command]:
        return list(bot.scoped_commands.get(_key(self.state, params), []))

    async def delete_commands(self, bot: Bot, params: Params) -> bool:
        self._forget(bot, _key(self.state, params))
        return True

    def _forget(self, bot: Bot, key: tuple[str, str]) -> None:
        bot.scoped_commands.pop(key, None)
        if key[0] == DEFAULT_SCOPE:
            self.state.commands.pop(key[1] or None, None)
        self.state.bump()
