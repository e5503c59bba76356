"""How a borrower command of one card starts (/calendar, the suggestions): the patron's
language, a connected account and a fresh `/v3/user` status, or an answer saying why not."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.actions import cards as card_actions
from bot.library.deadline import Deadline
from bot.library.errors import LibraryError
from bot.telegram.cards import require_card
from bot.telegram.context import Context
from bot.telegram.failures import answer_library_error

if TYPE_CHECKING:
    from telegram import Update

    from bot.actions.vocabulary import Card, ChatSettings
    from bot.library.models import BorrowerStatus


async def borrower_status(
    update: Update,
    context: Context,
    card: Card,
    deadline: Deadline,
    chat: ChatSettings | None = None,
    *,
    edit: bool = True,
) -> BorrowerStatus | None:
    """`/v3/user` for the patron, or None after the patron has been told what went wrong.

    `chat` (the settings the caller already read, if any) saves the plan a read of its own.
    `edit=False` tells a failure in a new message, so a tapped list stays in the chat.
    """
    svc = context.services
    try:
        status = await deadline.run(svc.library.user(card.token))
    except LibraryError as exc:
        await answer_library_error(update, context, exc, edit=edit, card=card)
        return None
    await card_actions.seen(svc, card, status, chat=chat)
    return status


async def command_status(
    update: Update,
    context: Context,
    deadline: Deadline | None = None,
    *,
    edit: bool = True,
    cards: list[Card] | None = None,
) -> tuple[str, BorrowerStatus] | None:
    """How every borrower command starts: the language, a connected account, a fresh status.
    `cards`: the chat's cards when the caller has read them already.

    None once the patron has been answered (not connected, or the platform failed).
    """
    chat, lang = context.chat, context.lang
    card = await require_card(context, known=cards)
    if card is None:
        return None
    deadline = deadline or Deadline()
    status = await borrower_status(update, context, card, deadline, chat, edit=edit)
    return None if status is None else (lang, status)
