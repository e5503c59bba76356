"""Users, chats and messages as the Bot API puts them on the wire.

Shared by the methods' answers (sendMessage returns the message) and by the updates the user's
side queues (a message, a callback query carrying its message), so both look the same.
"""

from __future__ import annotations

from typing import Any

from sandbox.telegram.markup import utf16_entities
from sandbox.telegram.state import Chat, Message, State


def user_json(chat: Chat) -> dict[str, Any]:
    """The user of a private chat (its id is the chat's id)."""
    user: dict[str, Any] = {"id": chat.id, "is_bot": False, "first_name": chat.first_name}
    if chat.language_code:
        user["language_code"] = chat.language_code
    return user


def chat_json(chat: Chat) -> dict[str, Any]:
    if chat.type != "private":
        return {"id": chat.id, "title": chat.title or "", "type": chat.type}
    return {"id": chat.id, "first_name": chat.first_name, "type": "private"}


def message_json(
    state: State, chat: Chat, message: Message, *, nested: bool = False
) -> dict[str, Any]:
    """A message; a reply carries the message it answers (one level deep, as Telegram's)."""
    result: dict[str, Any] = {"message_id": message.message_id}
    if message.bot_token is not None and message.bot_token in state.bots:
        result["from"] = state.bots[message.bot_token].user()
    elif chat.type == "channel":
        result["sender_chat"] = chat_json(chat)
    else:
        result["from"] = user_json(state.chats.get(message.user_id or chat.id, chat))
    result |= {
        "chat": chat_json(chat),
        "date": message.date,
        "text": message.text,
    }
    if message.via_bot is not None and message.via_bot in state.bots:
        result["via_bot"] = state.bots[message.via_bot].user()
    if message.entities:
        result["entities"] = utf16_entities(message.text, message.entities)
    if message.keyboard:
        result["reply_markup"] = {"inline_keyboard": message.keyboard}
    if message.edit_date is not None:
        result["edit_date"] = message.edit_date
    if not message.link_preview:
        result["link_preview_options"] = {"is_disabled": True}
    if message.reply_to is not None and not nested:
        replied = chat.messages.get(message.reply_to)
        if replied is not None:
            result["reply_to_message"] = message_json(state, chat, replied, nested=True)
    return result
