"""The card a tap or command acts on: naming cards, the login prompt that connects one, the
usable card(s) of a chat (or the patron told how to connect one), and a card whose login
lapsed: kept (`bot.actions.logins.lapse`), and named with its own login button."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import BadRequest as TelegramBadRequest
from telegram.error import Forbidden
from telegram.ext import CallbackContext

from bot.actions import cards as card_actions
from bot.actions import chats, logins
from bot.actions.vocabulary import Card
from bot.services import services
from bot.telegram.buttons import NamesCard
from bot.telegram.context import Context, chat_lang
from bot.telegram.replies import answer_tap, plain, send, url_button, url_button_allowed
from bot.texts import t
from bot.texts.cards import card_heading, card_name, lapsed_lead

if TYPE_CHECKING:
    from telegram import Bot

    from bot.config.settings import Settings
    from bot.services import Services

log = logging.getLogger(__name__)

NEW = "common.not_connected"
# Why a chat has no card (`ChatSettings.card_ended`) -> what the patron is told.
ENDED_TEXTS = {
    "expired": "common.login_expired",
    "logged_out": "common.logged_out_before",
    "rejected": "common.reconnect",
}


def expired(card: Card) -> bool:
    """The card's login has run out: the platform would refuse its token."""
    return card.login_gone(datetime.now(UTC))


# --- the login prompt ---------------------------------------------------------------------


@dataclass(frozen=True)
class LoginPrompt:
    """A message that leads to the library login: `text` with a URL button (`markup`), or,
    where Telegram would refuse the button, a text link in `text`."""

    text: str
    markup: InlineKeyboardMarkup | None
    url: str
    lead: str | None
    lang: str

    def as_link(self) -> str:
        """The same prompt with a text link instead of the button."""
        link = t(self.lang, "connect.login_prompt_link", url=self.url)
        return f"{self.lead}\n\n{link}" if self.lead else link


async def login_prompt(
    services: Services,
    chat_id: int,
    lang: str,
    *,
    lead: str | None = None,
    button: str = "common.login_button",
    another: bool = False,
) -> LoginPrompt:
    """A fresh login state and the prompt that carries its authorize link, after `lead`
    (for `another` card: `logins.login_url`).

    With a button the lead says it all ("tap the button"); a text link needs its own line.
    """
    url = await logins.login_url(services, chat_id, another=another)
    # A local PUBLIC_URL means a local set-up: a text link works where a button would not.
    local = not url_button_allowed(services.settings.redirect_uri)
    keyboard = None if local else url_button(t(lang, button), url)
    if keyboard is not None:
        return LoginPrompt(lead or t(lang, "connect.login_prompt"), keyboard, url, lead, lang)
    prompt = LoginPrompt("", None, url, lead, lang)
    return replace(prompt, text=prompt.as_link())


async def send_login(
    context: CallbackContext[Any, Any, Any, Any],
    chat_id: int,
    lang: str,
    *,
    lead: str | None = None,
    another: bool = False,
) -> None:
    """Send a login prompt (optionally after `lead`; for `another` card), falling back to a
    text link if refused."""
    await send_login_prompt(
        context.bot, services(context), chat_id, lang, lead=lead, another=another
    )


async def send_login_prompt(
    bot: Bot,
    services: Services,
    chat_id: int,
    lang: str,
    *,
    lead: str | None = None,
    another: bool = False,
) -> None:
    """`send_login` without an update's context (the jobs' deliverer)."""
    prompt = await login_prompt(services, chat_id, lang, lead=lead, another=another)
    try:
        await send(bot, chat_id, prompt.text, buttons=prompt.markup)
        return
    except TelegramBadRequest as exc:
        if prompt.markup is None or "button_url_invalid" not in exc.message.lower():
            raise
    await send(bot, chat_id, prompt.as_link())


@dataclass(frozen=True)
class LoginButtons:
    """A login button for each lapsed card (`rows`), or, where Telegram would refuse URL
    buttons (a local set-up), a text link for each (`links`, to go below the text)."""

    rows: list[list[InlineKeyboardButton]]
    links: str = ""


def _login_buttons(
    settings: Settings, cards: Sequence[Card], urls: Sequence[str], lang: str
) -> LoginButtons:
    rows: list[list[InlineKeyboardButton]] = []
    links: list[str] = []
    for card, url in zip(cards, urls, strict=True):
        name = card_name(card, lang)
        if url_button_allowed(settings.redirect_uri):
            label = plain(t(lang, "lists.login_card", name=name))
            rows.append([InlineKeyboardButton(label, url=url)])
        else:
            links.append(t(lang, "lists.login_card_link", name=name, url=url))
    return LoginButtons(rows, "\n".join(links))


async def login_buttons(services: Services, cards: Sequence[Card], lang: str) -> LoginButtons:
    """`🔑 Log in again: Karen`, one button per card, each with a login state of its own (a
    login of the same person brings the card back as it was, whichever button it came by)."""
    urls = await logins.card_logins(services, cards)
    return _login_buttons(services.settings, cards, urls, lang)


async def lapsed_message(
    services: Services, cards: Sequence[Card], lang: str, lead: str
) -> tuple[str, InlineKeyboardMarkup | None]:
    """`lead` with a login of its own for each lapsed card: buttons, or the links where a
    local set-up has no dotted host for a button (`login_buttons`)."""
    logins = await login_buttons(services, cards, lang)
    text = f"{lead}\n\n{logins.links}" if logins.links else lead
    return text, InlineKeyboardMarkup(logins.rows) if logins.rows else None


# --- the card(s) a command or tap acts on --------------------------------------------------


async def require_card(
    context: Context,
    number: int | None = None,
    *,
    known: list[Card] | None = None,
    tapped: NamesCard | None = None,
) -> Card | None:
    """Card `number` of the chat (None: its first), or None after telling the patron: how to
    connect a card when the chat has no other; else that this card is no longer here, or that
    its login lapsed (with every lapsed card, and their login buttons). An expired card is
    lapsed on the way. `known`: the chat's cards, when the caller has read them (lapsed
    ones too, or not).

    `tapped`: a button's payload, which names its card by identity, never by number alone (a
    number is given to the next card after a logout); a payload stored before identities
    names no card."""
    chat_id = context.chat_id
    svc = context.services
    cards = known if known is not None else await card_actions.of_chat(svc, chat_id, lapsed=True)
    if tapped is not None:
        number = tapped.number if tapped.number is not None else 0
        card = next((a for a in cards if tapped.cid and a.card_id == tapped.cid), None)
    elif number is None:  # the first usable card, else the first
        usable = [a for a in cards if not expired(a)]
        card = next(iter(usable or cards), None)
    else:
        card = next((a for a in cards if a.number == number), None)
    if card is not None and not expired(card):
        return card
    lang = context.lang
    await answer_tap(context.query)
    others = number is not None and any(other != card and not other.is_lapsed for other in cards)
    if card is not None:
        # Lapsed, or run out: lapse it now rather than let the platform refuse it later.
        why = "expired"
        if card.is_lapsed:  # told again as it was told first
            why = (await chats.settings(svc, chat_id)).card_ended or "rejected"
        else:
            await logins.lapse(svc, card)
        # A tapped button of a lapsed card: that card and its login, not the whole family's
        # message again for every old button.
        await tell_lapsed(context, [card], lang, why=why, only=tapped is not None)
        return None
    if any(other.is_lapsed for other in cards) and not others:
        why = (await chats.settings(svc, chat_id)).card_ended or "rejected"
        await tell_lapsed(context, [other for other in cards if other.is_lapsed], lang, why=why)
        return None
    if others:
        await send(context.bot, chat_id, t(lang, "cards.gone"))
    else:
        ended = (await chats.settings(svc, chat_id)).card_ended
        await send_login(context, chat_id, lang, lead=t(lang, ENDED_TEXTS.get(ended or "", NEW)))
    return None


async def for_card(context: Context, card: Card, text: str) -> str:
    """`text` headed by the card's name when the chat has several (a lapsed one counts: the
    family still has it): whose order, hold or loan it is."""
    cards = await card_actions.of_chat(context.services, card.chat_id, lapsed=True)
    return f"{card_heading(card, context.lang)}\n{text}" if len(cards) > 1 else text


def identities(cards: Sequence[Card]) -> tuple[str, ...]:
    """The cards' identities: what a button shown to the whole chat keeps, to tell later
    whether any of its cards is still here."""
    return tuple(card.card_id for card in cards if card.card_id)


async def card_identities(context: Context) -> tuple[str, ...]:
    """The identities of the chat's cards, lapsed ones too (`identities`)."""
    return identities(await card_actions.of_chat(context.services, context.chat_id, lapsed=True))


async def require_cards(context: Context) -> list[Card] | None:
    """Every usable card of the chat, by number; None after telling the patron how to connect
    one, or that every card's login lapsed. Cards whose login ran out are lapsed on the way
    (quietly while another card is usable: the lists name them)."""
    cards = context.take_cards()
    if cards is None:
        cards = await card_actions.of_chat(context.services, context.chat_id, lapsed=True)
    live = [card for card in cards if not expired(card)]
    if not live:
        first = await require_card(context, known=cards)
        return None if first is None else [first]
    for card in cards:
        if card not in live and not card.is_lapsed:
            await logins.lapse(context.services, card)
    return live


async def lapse_card(context: Context, card: Card, lang: str | None = None) -> Card | None:
    """`card`'s token was refused: keep the card, lapsed (`Store.lapse_card`), and tell the
    patron once, naming every lapsed card of the chat with a login button each. The card as
    it is now, else None (a login that raced the call has replaced the token: the fresh card
    stays, and nothing is told)."""
    lapsed = await logins.lapse(context.services, card)
    if lapsed is not None:
        await tell_lapsed(context, [lapsed], lang)
    return lapsed


# `/start relogin`: the Mini App's "log in again" opens the chat, which names every lapsed card
# with a login button each (a login state is made when asked for, not on every page view).
RELOGIN_START = "relogin"


async def tell_every_lapsed(context: Context) -> bool:
    """Name every lapsed card of the chat, each with its login button; False when none is."""
    cards = await card_actions.of_chat(context.services, context.chat_id, lapsed=True)
    lapsed = [card for card in cards if card.is_lapsed]
    await tell_lapsed(context, lapsed, context.lang, chat_id=context.chat_id)
    return bool(lapsed)


async def tell_lapsed(
    context: Context,
    cards: Sequence[Card],
    lang: str | None = None,
    *,
    why: str = "rejected",
    chat_id: int | None = None,
    only: bool = False,
) -> None:
    """One message naming every lapsed card of the chat (`cards` and any other; with `only`,
    `cards` alone), each with its own login button: a card lapsed alone is never told beside
    another lapsed one as "the other cards are unchanged". In a chat of one card, that its
    login must be renewed (`why`: "expired" or "rejected"); the cards stay, with their names
    and settings. Nothing when `cards` is empty (no card lapsed in the caller's read)."""
    if not cards:
        return
    svc = context.services
    chat_id = chat_id if chat_id is not None else cards[0].chat_id
    every = await card_actions.of_chat(svc, chat_id, lapsed=True)
    named = {card.number for card in cards}
    lapsed = [a for a in every if (a.is_lapsed and not only) or a.number in named]
    if not lapsed:
        return
    lang = lang or await chat_lang(context, chat_id)
    if len(every) == len(lapsed):
        await chats.set_card_ended(svc, chat_id, why)
    if len(every) == 1:
        lead = t(lang, "common.login_expired" if why == "expired" else "common.reconnect")
    else:
        lead = lapsed_lead(lapsed, lang, one="lists.lapsed_one", many="lists.lapsed_many")
    text, markup = await lapsed_message(svc, lapsed, lang, lead)
    try:
        await send(context.bot, chat_id, text, buttons=markup)
    except Forbidden:
        log.info("chat %s blocked the bot; not told that a card's login lapsed", chat_id)
