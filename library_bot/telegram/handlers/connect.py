"""`/login`, `/logout`, `/forget`, and the token lifecycle jobs (expiry warning, purge)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from telegram import InlineKeyboardButton, Update
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from library_bot.services import services
from library_bot.telegram.handlers.common import (
    Context,
    callback_buttons,
    chat_id_of,
    lang_of,
    reply,
    resolve_callback,
    send_login,
    url_button_allowed,
)
from library_bot.telegram.menu import set_chat_menu
from library_bot.texts import t
from library_bot.texts.formatting import format_date

log = logging.getLogger(__name__)

# The access service's tokens live thirty days (production notes): the latest a token whose
# expiry is unknown stops working.
TOKEN_LIFETIME = timedelta(days=30)


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("login", login),
        CommandHandler("logout", logout),
        CommandHandler("forget", forget),
        CallbackQueryHandler(forget_tapped, pattern=r"^forget:"),
    ]


async def login(update: Update, context: Context) -> None:
    lang = await lang_of(update, context)
    await send_login(context, chat_id_of(update), lang)


async def logout(update: Update, context: Context) -> None:
    """Forget and revoke the token, then offer to end the access service's session too.

    The single sign-on session lives in the browser that logged in, not here, so the reply
    carries a link to the bot's `/oauth/logout` page, which sends the browser on to the
    access service's logout without any token in a URL; and the next authorize URL asks for
    a fresh login (`force_login=1`) in case the patron does not use the link.
    """
    lang = await lang_of(update, context)
    svc = services(context)
    chat_id = chat_id_of(update)
    removed = await svc.store.remove_account(chat_id)
    if removed is None:
        await reply(update, context, t(lang, "connect.not_logged_in"))
        return
    await svc.store.set_account_ended(chat_id, "logged_out")
    await svc.store.set_fresh_login(chat_id, True)
    # Forgotten here whatever the access service says; the reply says what happened there.
    if removed.token is None:
        key = "connect.logged_out_unreadable"  # a key removed before `rotate-keys` ran
    elif await svc.library.revoke(removed.token):
        key = "connect.logged_out"
    else:
        key = "connect.logged_out_unrevoked"
    until = removed.token_expires_at or datetime.now(UTC) + TOKEN_LIFETIME
    date = format_date(until.astimezone(svc.settings.timezone).date(), lang)
    done = t(lang, key, date=date)
    url = f"{svc.settings.PUBLIC_URL}/oauth/logout?{urlencode({'lang': lang})}"
    if url_button_allowed(url):
        button = InlineKeyboardButton(t(lang, "connect.logout_button"), url=url)
        await reply(
            update, context, f"{done}\n\n{t(lang, 'connect.logout_sso')}", buttons=[[button]]
        )
    else:
        await reply(update, context, f"{done}\n\n{t(lang, 'connect.logout_sso_link', url=url)}")


async def forget(update: Update, context: Context) -> None:
    lang = await lang_of(update, context)
    yes, no = await callback_buttons(
        update,
        context,
        [
            (t(lang, "connect.forget_yes"), "forget", {"confirm": True}),
            (t(lang, "connect.forget_no"), "forget", {"confirm": False}),
        ],
    )
    # The confirming button comes first (operator contract).
    await reply(update, context, t(lang, "connect.forget_prompt"), buttons=[[yes, no]])


async def forget_tapped(update: Update, context: Context) -> None:
    ref = await resolve_callback(update, context, claim=True)
    if ref is None:
        return
    lang = await lang_of(update, context)
    if not ref.payload.get("confirm"):
        await reply(update, context, t(lang, "connect.forget_kept"))
        return
    svc = services(context)
    chat_id = chat_id_of(update)
    account = await svc.store.delete_account(chat_id)
    key = "connect.forgotten_no_login"
    if account is not None:
        revoked = await svc.library.revoke(account.token)
        key = "connect.forgotten" if revoked else "connect.forgotten_not_revoked"
    await svc.store.forget_chat(chat_id)
    await set_chat_menu(context.bot, chat_id, None)  # the saved language is gone, so its menu
    # The answer keeps the patron's language even though the saved choice is gone.
    await reply(update, context, t(lang, key))
