"""How the borrower commands (/loans, /holds, /debt, /renew) start: the patron's language, a
connected account and a fresh `/v3/user` status, or an answer saying why not."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.library.deadline import Deadline
from bot.library.errors import LibraryError
from bot.services import services
from bot.services.polling import refresh_plan
from bot.telegram.ui import (
    Context,
    answer_library_error,
    chat_and_lang,
    reply,
    require_account,
)
from bot.texts import t

if TYPE_CHECKING:
    from telegram import Update

    from bot.library.models import BorrowerStatus
    from storage.store import Account, ChatSettings


async def borrower_status(
    update: Update,
    context: Context,
    account: Account,
    lang: str,
    deadline: Deadline,
    chat: ChatSettings | None = None,
    *,
    edit: bool = True,
) -> BorrowerStatus | None:
    """`/v3/user` for the patron, or None after the patron has been told what went wrong.

    `chat` (the settings the caller already read, if any) saves the plan a read of its own.
    `edit=False` tells a failure in a new message, so a tapped list stays in the chat.
    """
    svc = services(context)
    try:
        status = await deadline.run(svc.library.user(account.token))
    except LibraryError as exc:
        await answer_library_error(update, context, exc, lang, edit=edit, card=account.card)
        return None
    await refresh_plan(svc.store, svc.settings, account, status, chat=chat)
    return status


async def command_status(
    update: Update,
    context: Context,
    deadline: Deadline | None = None,
    *,
    edit: bool = True,
    cards: list[Account] | None = None,
) -> tuple[str, BorrowerStatus] | None:
    """How every borrower command starts: the language, a connected account, a fresh status.
    `cards`: the chat's cards when the caller has read them already.

    None once the patron has been answered (not connected, or the platform failed).
    """
    chat, lang = await chat_and_lang(update, context)
    account = await require_account(update, context, known=cards)
    if account is None:
        return None
    deadline = deadline or Deadline()
    status = await borrower_status(update, context, account, lang, deadline, chat, edit=edit)
    return None if status is None else (lang, status)


async def loans_status(
    update: Update,
    context: Context,
    empty_key: str,
    *,
    edit: bool = True,
    cards: list[Account] | None = None,
) -> tuple[str, BorrowerStatus] | None:
    """`command_status` for the commands about loans: None also when there are none, after
    telling the patron so with the text `empty_key`."""
    started = await command_status(update, context, edit=edit, cards=cards)
    if started is None:
        return None
    lang, status = started
    if not status.loans:
        await reply(update, context, t(lang, empty_key))
        return None
    return started
