"""`/start` (welcome, redeeming the one-time code from the login page, or a shared card's
`order-<pid>` deep link) and `/help`."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from telegram import Update
from telegram.ext import BaseHandler, CommandHandler

from bot.actions import cards as card_actions
from bot.actions import chats, logins
from bot.actions.vocabulary import MAX_CARDS
from bot.library.deadline import Deadline
from bot.library.errors import LibraryError
from bot.telegram.cards import RELOGIN_START, expired, tell_every_lapsed
from bot.telegram.context import Context
from bot.telegram.handlers.cards import (
    card_library,
    card_lines,
    first_name,
    library_name,
    owner,
)
from bot.telegram.handlers.inline import ORDER_PREFIX, SEARCH_START, WHERE_PREFIX, decode_pid
from bot.telegram.handlers.order import order_found
from bot.telegram.handlers.search import ask_for_words
from bot.telegram.handlers.where import show_where
from bot.telegram.keyboards import overview_keyboard
from bot.telegram.replies import reply, url_button
from bot.texts import t
from bot.texts.cards import card_name
from bot.texts.formatting import format_date, join_and

if TYPE_CHECKING:
    from bot.actions.vocabulary import Card

log = logging.getLogger(__name__)

MAX_CODE_LENGTH = 64
# Seconds the name for a new card's label may take: the "connected" answer waits for it.
LABEL_BUDGET = 3.0


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [CommandHandler("start", start), CommandHandler("help", help_command)]


def _name_suffix(update: Update) -> str:
    user = update.effective_user
    return f", {user.first_name}" if user and user.first_name else ""


async def start(update: Update, context: Context) -> None:
    lang = context.lang
    args = context.args or []
    if args and args[0] == SEARCH_START:
        await ask_for_words(update, context)
        return
    if args and args[0].startswith(ORDER_PREFIX):
        # A card shared with inline mode: the order flow, with its confirmation.
        pid = decode_pid(args[0])
        if pid is None:
            await reply(update, context, t(lang, "common.stale_button"))
            return
        await order_found(update, context, pid)
        return
    if args and args[0].startswith(WHERE_PREFIX):
        # A card shared with inline mode: where it stands at this chat's libraries.
        pid = decode_pid(args[0], WHERE_PREFIX)
        if pid is None:
            await reply(update, context, t(lang, "common.stale_button"))
            return
        await show_where(update, context, pid)
        return
    if args and args[0] == RELOGIN_START and await tell_every_lapsed(context):
        return  # the Mini App's "log in again" (a card back meanwhile: the welcome)
    if args and args[0] != RELOGIN_START:
        await _redeem(update, context, args[0])
        return
    cards = await card_actions.of_chat(context.services, context.chat_id)
    key = "connect.welcome_connected" if cards else "connect.welcome"
    keyboard = overview_keyboard(context) if cards else None
    await reply(update, context, t(lang, key, name=_name_suffix(update)), buttons=keyboard)


async def help_command(update: Update, context: Context) -> None:
    lang = context.lang
    await reply(update, context, f"{t(lang, 'connect.help')}\n{t(lang, 'whatson.help')}")


async def _redeem(
    update: Update,
    context: Context,
    code: str,
) -> None:
    """Connect the account only if this chat is the one that asked for `/login`: a new card,
    a card logged in again, or none when the chat is full (the store revoked that token)."""
    lang = context.lang
    chat_id = context.chat_id
    svc = context.services
    linked = None
    if 0 < len(code) <= MAX_CODE_LENGTH and code.isprintable():
        linked = await logins.complete_link(svc, chat_id, code)
    if linked is None:
        log.info("chat %s sent a link code that is not valid for it", chat_id)
        await reply(update, context, t(lang, "connect.code_invalid"))
        return
    card = linked.card
    if linked.outcome == "full" or card is None:
        await reply(update, context, t(lang, "cards.full", max=MAX_CARDS))
        return
    # Why the chat had no card (expired, refused, logged out): this login was to come back.
    ended = (await chats.settings(svc, chat_id)).card_ended
    await chats.set_connected(svc, chat_id)
    if card.label is None or card.agency is None:  # a new card, or one from before
        card = await _details(context, card)
    every = await card_actions.of_chat(svc, chat_id, lapsed=True)
    cards = [other for other in every if not other.is_lapsed]
    library = await library_name(context, card)
    # Cards told to log in again (warned of their login's end, or lapsed): a new card instead
    # means the browser's library login was someone else's (single sign-on), so the answer
    # names both.
    waiting = [
        other
        for other in every
        if other.number != card.number
        and (other.is_lapsed or (other.expiry_warned and not expired(other)))
    ]
    if linked.outcome == "added" and waiting:
        await _someone_else(update, context, card, waiting)
    elif linked.outcome == "restored":
        # A lapsed card of the same person: back as it was, name, calendar and settings.
        await reply(update, context, t(lang, "cards.restored", card=owner(card, lang)))
    elif len(cards) <= 1 and ended and card.label:
        # A login again after the card was gone: say whose card came back, at its library
        # as `/cards` names it.
        await reply(update, context, await _added(context, card))
    elif len(cards) <= 1:  # one card: as before several cards
        key = "connect.connected_library" if library else "connect.connected"
        await reply(update, context, t(lang, key, library=library or ""))
    elif linked.outcome == "refreshed":
        await reply(update, context, t(lang, "cards.refreshed", card=owner(card, lang)))
    else:
        text = await _added(context, card)
        await reply(update, context, f"{text}\n\n{await card_lines(context, cards)}")


async def _added(context: Context, card: Card) -> str:
    """ "Anna's card is connected (Københavns Biblioteker)." """
    library = await card_library(context, card)
    key = "cards.added" if library else "cards.added_plain"
    return t(context.lang, key, card=owner(card, context.lang), library=library or "")


async def _someone_else(update: Update, context: Context, card: Card, waiting: list[Card]) -> None:
    """A login meant to refresh a card (warned of its login's end, or lapsed) came back as
    another person: whose card was connected, which card still needs its login, and the way to
    log out of the browser's library login."""
    lang = context.lang
    svc = context.services
    names = {"card": owner(card, lang), "name": card_name(card, lang)}
    if len(waiting) > 1:
        # The login state names no card: every card waiting is named once, in one text.
        others = join_and([owner(other, lang) for other in waiting], lang)
        text = t(lang, "cards.other_person_many", waiting=others, **names)
    else:
        [other] = waiting
        until = other.token_expires_at
        zone = svc.settings.timezone
        date = format_date(until.astimezone(zone).date(), lang) if until else ""
        key = "cards.other_person_lapsed" if other.is_lapsed else "cards.other_person"
        text = t(lang, key, waiting=owner(other, lang), date=date, **names)
    url = f"{svc.settings.PUBLIC_URL}/oauth/logout?{urlencode({'lang': lang})}"
    button = url_button(t(lang, "connect.logout_button"), url)
    if button is None:
        text = f"{text}\n{url}"
    await reply(update, context, text, buttons=button)


async def _details(context: Context, card: Card) -> Card:
    """The new card's label (the first word of `/v3/user` `name`) and library (`agency`),
    fetched once within a short budget and kept; without them (the platform slow or failing)
    the card is called "Card n" and placed by its holder's municipality."""
    svc = context.services
    try:
        status = await Deadline(LABEL_BUDGET).run(context.services.library.user(card.token))
    except LibraryError as exc:
        log.info("no name for the new card: %s", type(exc).__name__)
        return card
    label = card.label or first_name(status.name)
    if label is not None and label != card.label:
        await card_actions.set_label(svc, card.chat_id, card.number, label)
    agency = (status.agency or "").strip()[:16] or None
    if agency is not None and agency != card.agency:
        await card_actions.set_agency(svc, card.chat_id, card.number, agency)
    return replace(card, label=label, agency=agency or card.agency)
