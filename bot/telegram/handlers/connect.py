"""`/login`, `/logout`, `/forget`, and the token lifecycle jobs (expiry warning, purge)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from telegram import Update
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from bot.actions import cards as card_actions
from bot.actions import chats, logins
from bot.actions.vocabulary import MAX_CARDS
from bot.telegram.buttons import ForgetChoice, LogoutAsk, LogoutCard, Payload, decode
from bot.telegram.cards import send_login
from bot.telegram.context import Context
from bot.telegram.handlers.cards import owner
from bot.telegram.keyboards import callback_buttons, one_per_row, peek_callback, resolve_callback
from bot.telegram.menu import set_chat_menu
from bot.telegram.replies import plain, reply, send, url_button
from bot.texts import t
from bot.texts.cards import card_name
from bot.texts.formatting import format_date

if TYPE_CHECKING:
    from bot.actions.vocabulary import Card, RemovedCard

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
        CallbackQueryHandler(logout_tapped, pattern=rf"^{LogoutCard.ACTION}:"),
        CallbackQueryHandler(logout_ask_tapped, pattern=rf"^{LogoutAsk.ACTION}:"),
    ]


async def login(update: Update, context: Context) -> None:
    """The login link; with cards in the chat it adds a card, and asks the access service
    for a login page even where the browser is signed on (`force_login`): it would otherwise
    log the browser's last patron in again at once. A lapsed card logs in again with its own
    button, which keeps single sign-on."""
    lang = context.lang
    svc = context.services
    chat_id = context.chat_id
    cards = await card_actions.of_chat(svc, chat_id)
    if not cards:
        # Every card lapsed (or none yet): a family's browser may be another holder's.
        every = await card_actions.of_chat(svc, chat_id, lapsed=True)
        await send_login(context, chat_id, lang, another=len(every) > 1)
        return
    if len(cards) >= MAX_CARDS:
        await reply(update, context, t(lang, "cards.login_full", max=MAX_CARDS))
        return
    lead = t(lang, "cards.login_more", count=len(cards), max=MAX_CARDS)
    await send_login(context, chat_id, lang, lead=lead, another=True)


async def logout(update: Update, context: Context) -> None:
    """Forget and revoke the token, then offer to end the access service's session too.

    The single sign-on session lives in the browser that logged in, not here, so the reply
    carries a link to the bot's `/oauth/logout` page, which sends the browser on to the
    access service's logout without any token in a URL; and the next authorize URL asks for
    a fresh login (`force_login=1`) in case the patron does not use the link. With several
    cards it first asks which card, or all of them (`logout_tapped`).
    """
    lang = context.lang
    svc = context.services
    chat_id = context.chat_id
    # A lapsed card too: only /logout and /forget end a card.
    cards = await card_actions.of_chat(svc, chat_id, lapsed=True)
    if len(cards) > 1:
        specs: list[tuple[str, Payload]] = [
            (
                plain(t(lang, "cards.logout_card", name=card_name(card, lang))),
                LogoutCard(card.number, card.card_id),
            )
            for card in cards
        ]
        # The specific choices first, "all cards" last.
        every = tuple(card.card_id for card in cards if card.card_id)
        specs.append((t(lang, "cards.logout_all"), LogoutCard(None, cids=every)))
        buttons = one_per_row(await callback_buttons(update, context, specs))
        await reply(update, context, t(lang, "cards.logout_which"), buttons=buttons)
        return
    # One card (or one whose token can no longer be read): as before several cards.
    removed = await logins.remove_card(
        svc, chat_id, cards[0].number if cards else 1, logout=True, hand_over=True
    )
    if removed is None:
        await reply(update, context, t(lang, "connect.not_logged_in"))
        return
    await chats.set_card_ended(svc, chat_id, "logged_out")
    await chats.set_fresh_login(svc, chat_id, True)
    # Forgotten here whatever the access service says; the reply says what happened there.
    # No token: its key was removed before `rotate-keys` ran.
    key = LOGOUT_TEXTS[await revoke(context, removed.token)]
    await _logged_out(update, context, t(lang, key, date=_latest(context, removed)))


async def logout_tapped(update: Update, context: Context) -> None:
    """/logout's or /cards' choice: log out of one card, or of every card (once)."""
    ref = await resolve_callback(update, context, claim=True)
    if ref is None:
        return
    choice = decode(ref.payload, LogoutCard)
    cards = await card_actions.of_chat(context.services, context.chat_id, lapsed=True)
    # By identity: the number may be another person's card by now (a button stored before
    # identities names no card).
    named = () if choice is None else (choice.cid,) if choice.number is not None else choice.cids
    cards = [card for card in cards if card.card_id and card.card_id in (named or ())]
    await _log_out(update, context, cards)


async def logout_ask_tapped(update: Update, context: Context) -> None:
    """/cards' "🚪 Log out": the question in a message of its own (the list stays), its "yes"
    first (a `LogoutCard`, single-use); or the question's "no"."""
    lang = context.lang
    peek = await peek_callback(update, context)
    seen = decode(peek.payload, LogoutAsk) if peek is not None else None
    ref = await resolve_callback(update, context, asks=seen is not None and not seen.keep)
    if ref is None:
        return
    choice = decode(ref.payload, LogoutAsk)
    card = None
    if choice is not None and choice.cid:
        # By identity, as every card button (a button stored before identities names none).
        found = await card_actions.card(
            context.services, context.chat_id, choice.number, lapsed=True
        )
        card = found if found is not None and found.card_id == choice.cid else None
    if choice is None or card is None:
        if choice is not None and choice.keep:
            await reply(update, context, t(lang, "cards.gone"))  # in place of the question
        else:  # a new message: the tapped /cards list keeps the other cards' buttons
            await send(context.bot, context.chat_id, t(lang, "cards.gone"))
        return
    named = owner(card, lang)
    if choice.keep:
        await reply(update, context, t(lang, "cards.logout_kept", card=named))
        return
    yes, no = await callback_buttons(
        update,
        context,
        [
            (t(lang, "cards.logout_yes"), LogoutCard(card.number, card.card_id)),
            (t(lang, "cards.logout_no"), LogoutAsk(card.number, card.card_id, keep=True)),
        ],
    )
    # The confirming button comes first (operator contract).
    text = t(lang, "cards.logout_ask", card=named)
    await send(context.bot, context.chat_id, text, buttons=[[yes, no]])


async def _log_out(update: Update, context: Context, cards: list[Card]) -> None:
    """Log out of `cards` (each once, whoever taps twice), and say what is left."""
    lang = context.lang
    svc = context.services
    chat_id = context.chat_id
    if not cards:
        await reply(update, context, t(lang, "cards.gone"))
        return
    lines = []
    for card in cards:
        removed = await logins.remove_card(svc, chat_id, card.number, logout=True, hand_over=True)
        if removed is None:
            continue  # logged out meanwhile, by another tap
        key = CARD_LOGOUT_TEXTS[await revoke(context, removed.token)]
        date = _latest(context, removed)
        lines.append(t(lang, key, card=owner(card, lang), date=date))
    if not lines:
        await reply(update, context, t(lang, "cards.gone"))
        return
    await chats.set_fresh_login(svc, chat_id, True)
    left = await card_actions.of_chat(svc, chat_id, lapsed=True)
    if left:
        names = ", ".join(card_name(card, lang) for card in left)
        lines.append(t(lang, "cards.remaining", names=names))
    else:
        await chats.set_card_ended(svc, chat_id, "logged_out")
    await _logged_out(update, context, "\n".join(lines))


def _latest(
    context: Context,
    removed: RemovedCard,
) -> str:
    """The date a forgotten token stops working at the latest."""
    lang = context.lang
    until = removed.token_expires_at or datetime.now(UTC) + TOKEN_LIFETIME
    return format_date(until.astimezone(context.services.settings.timezone).date(), lang)


async def _logged_out(update: Update, context: Context, done: str) -> None:
    """`done`, and the offer to log out of the access service in the browser too."""
    lang = context.lang
    svc = context.services
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
# The same for one card of several.
CARD_LOGOUT_TEXTS = {
    True: "cards.logged_out",
    False: "cards.logged_out_unrevoked",
    None: "cards.logged_out_unreadable",
}
FORGET_TEXTS = {
    True: "connect.forgotten",
    False: "connect.forgotten_not_revoked",
    None: "connect.forgotten_no_login",
}


async def revoke(context: Context, token: str | None) -> bool | None:
    """Revoke a token the bot has forgotten, best effort (`LibraryClient.revoke` never raises):
    True when the access service confirmed, False when not, None when there was no token.
    A lapsed card's token ("") was dropped, and revoked, when its login lapsed: nothing is
    left that works."""
    if token is None:
        return None
    if not token:
        return True
    return await context.services.library.revoke(token)


async def forget(update: Update, context: Context) -> None:
    lang = context.lang
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
    lang = context.lang
    choice = decode(ref.payload, ForgetChoice)
    if choice is None or not choice.confirm:
        await reply(update, context, t(lang, "connect.forget_kept"))
        return
    svc = context.services
    chat_id = context.chat_id
    # Every card's token revoked here, so the answer can say whether the library confirmed.
    outcomes = []
    every = await card_actions.of_chat(svc, chat_id, lapsed=True)
    for number in [card.number for card in every] or [1]:
        removed = await logins.remove_card(svc, chat_id, number, hand_over=True)
        outcomes.append(await revoke(context, removed.token if removed else None))
    key = FORGET_TEXTS[False if False in outcomes else True if True in outcomes else None]
    await chats.forget(svc, chat_id)
    await set_chat_menu(context.bot, chat_id, None)  # the saved language is gone, so its menu
    # The answer keeps the patron's language even though the saved choice is gone.
    await reply(update, context, t(lang, key))
