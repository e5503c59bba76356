"""Stored buttons: a button's callback data is only a short id, its payload is kept here,
bound to its chat (and user), for its action. Storing a message's buttons, reading a tapped
one, claiming it once, and the words of a search sealed into a button."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from bot.library.deadline import ANSWER_BUDGET

if TYPE_CHECKING:
    from bot.services import Services
    from storage.store import CallbackRef

# Taps of one button this close together, with no other button's tap between them, are one
# double tap. A chat's updates are handled in turn, so the second is read only once the first
# is answered, which may take the whole answer budget when the library is slow.
DOUBLE_TAP = timedelta(seconds=ANSWER_BUDGET + 6)


async def put(
    services: Services,
    chat_id: int,
    rows: Sequence[tuple[str, dict[str, Any]]],
    *,
    user_id: int | None,
    ids: Sequence[str],
) -> None:
    """A message's buttons, (action, payload) each, stored under `ids` in one statement."""
    await services.store.callbacks.put_callbacks(chat_id, rows, user_id=user_id, ids=ids)


async def put_many(
    services: Services, rows: Sequence[tuple[int, str, dict[str, Any]]]
) -> list[str]:
    """Buttons of many chats' messages, (chat id, action, payload) each, stored in one
    transaction (a sweep's group of digests); their ids, in order."""
    return await services.store.callbacks.put_callbacks_many(rows)


async def keep(
    services: Services, chat_id: int, buttons: Sequence[tuple[str, str, dict[str, Any]]]
) -> dict[str, bool]:
    """Buttons whose ids name what they act on, (id, action, payload) each, stored once (a
    view shown again adds no row); each id -> whether its button was used already."""
    return await services.store.callbacks.keep_callbacks(chat_id, buttons)


async def stored(
    services: Services,
    button: str,
    chat_id: int,
    *,
    user_id: int | None = None,
    action: str | None = None,
) -> CallbackRef | None:
    """The live button `button` of the chat (of `user_id`, stored for `action`, when given),
    used or not, without using it up."""
    return await services.store.callbacks.callback(button, chat_id, user_id=user_id, action=action)


async def claim(
    services: Services,
    button: str,
    chat_id: int,
    *,
    user_id: int | None = None,
    action: str | None = None,
) -> CallbackRef | None:
    """The button, used up: only the first claim gets it."""
    return await services.store.callbacks.claim_callback(
        button, chat_id, user_id=user_id, action=action
    )


async def first_tap(services: Services, button: str, chat_id: int) -> bool:
    """Whether this tap of the chat's button is its own, not the second of a double tap (of a
    button whose answer is a new message: a question, a map)."""
    return await services.store.callbacks.note_tap(button, chat_id, DOUBLE_TAP)


async def other_tap(services: Services, chat_id: int) -> None:
    """A tap of a button that does not ask: the next tap of one that does is its own, even
    within `DOUBLE_TAP` (a question answered "no", then asked again)."""
    await services.store.callbacks.end_taps(chat_id)


async def shown_to(
    services: Services, button: str, chat_id: int, *, action: str | None = None
) -> int | None:
    """Who was shown the button, to refuse anyone else politely."""
    return await services.store.callbacks.callback_user(button, chat_id, action=action)


async def stored_many(
    services: Services, buttons: Sequence[str], chat_id: int
) -> list[CallbackRef]:
    """`stored` for the buttons of one message, in one read."""
    return await services.store.callbacks.callbacks_many(buttons, chat_id)


def seal(services: Services, text: str, chat_id: int) -> str:
    """A patron's words sealed for a button's payload: only this chat's button opens them."""
    return services.store.seal(text, chat_id)


def unseal(services: Services, sealed: str, chat_id: int) -> str | None:
    """Words `seal` sealed for the chat, or None when they do not open (another chat's, or
    sealed under a key since dropped)."""
    return services.store.unseal(sealed, chat_id)
