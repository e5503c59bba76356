"""`/login`, `/logout`, `/forget`, and the token lifecycle jobs (expiry warning, purge)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from telegram import Update
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from library_bot.services import services
from library_bot.telegram.buttons import ForgetChoice, decode
from library_bot.telegram.menu import set_chat_menu
from library_bot.telegram.ui import (
    Context,
    callback_buttons,
    chat_id_of,
    lang_of,
    reply,
    resolve_callback,
    send_login,
    url_button,
)
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
        CallbackQueryHandler(forget_tapped, pattern=rf"^{ForgetChoice.ACTION}:"),
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
    # No token: its key was removed before `rotate-keys` ran.
    key = LOGOUT_TEXTS[await revoke(context, removed.token)]
    until = removed.token_expires_at or datetime.now(UTC) + TOKEN_LIFETIME
    date = format_date(until.astimezone(svc.settings.timezone).date(), lang)
    done = t(lang, key, date=date)
    url = f"{svc.settings.PUBLIC_URL}/oauth/logout?{urlencode({'lang': lang})}"
    button = url_button(t(lang, "connect.logout_button"), url)
    if button is not None:
        await reply(update, context, f"{done}\n\n{t(lang, 'connect.logout_sso')}", buttons=button)
    else:
        await reply(update, context, f"{done}\n\n{t(lang, 'connect.logout_sso_link', url=url)}")


# What the patron is told after the token was revoked (True), not revoked (False), or there
# was none to revoke (None).
LOGOUT_TEXTS = {
    True: "connect.logged_out",
    False: "connect.logged_out_unrevoked",
    None: "connect.logged_out_unreadable",
}
FORGET_TEXTS = {
    True: "connect.forgotten",
    False: "connect.forgotten_not_revoked",
    None: "connect.forgotten_no_login",
}


async def revoke(context: Context, token: str | None) -> bool | None:
    """Revoke a token the bot has forgotten, best effort (`LibraryClient.revoke` never raises):
    True when the access service confirmed, False when not, None when there was no token."""
    if token is None:
        return None
    return await services(context).library.revoke(token)


async def forget(update: Update, context: Context) -> None:
    lang = await lang_of(update, context)
    yes, no = await callback_buttons(
        update,
        context,
        [
            (t(lang, "connect.forget_yes"), ForgetChoice(confirm=True)),
            (t(lang, "connect.forget_no"), ForgetChoice(confirm=False)),
        ],
    )
    # The confirming button comes first (operator contract).
    await reply(update, context, t(lang, "connect.forget_prompt"), buttons=[[yes, no]])


async def forget_tapped(update: Update, context: Context) -> None:
    ref = await resolve_callback(update, context, claim=True)
    if ref is None:
        return
    lang = await lang_of(update, context)
    choice = decode(ref.payload, ForgetChoice)
    if choice is None or not choice.confirm:
        await reply(update, context, t(lang, "connect.forget_kept"))
        return
    svc = services(context)
    chat_id = chat_id_of(update)
    account = await svc.store.delete_account(chat_id)
    key = FORGET_TEXTS[await revoke(context, account.token if account else None)]
    await svc.store.forget_chat(chat_id)
    await set_chat_menu(context.bot, chat_id, None)  # the saved language is gone, so its menu
    # The answer keeps the patron's language even though the saved choice is gone.
    await reply(update, context, t(lang, key))
