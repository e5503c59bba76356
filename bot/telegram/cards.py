"""The card a tap or command acts on: naming cards, the login prompt that connects one, the
usable card(s) of a chat (or the patron told how to connect one), and forgetting a card."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from telegram import InlineKeyboardMarkup
from telegram.error import BadRequest as TelegramBadRequest
from telegram.error import Forbidden
from telegram.ext import CallbackContext

from bot.services import services
from bot.telegram.buttons import NamesCard
from bot.telegram.context import Context, chat_lang
from bot.telegram.replies import answer_tap, send, url_button, url_button_allowed
from bot.texts import cards as card_texts
from bot.texts import t
from bot.texts.formatting import join_and
from storage.store import Card

if TYPE_CHECKING:
    from bot.config.settings import Settings
    from bot.library.client import LibraryClient
    from storage.store import Store

log = logging.getLogger(__name__)

NEW = "common.not_connected"
# Why a chat has no account (`ChatSettings.account_ended`) -> what the patron is told.
ENDED_TEXTS = {
    "expired": "common.login_expired",
    "logged_out": "common.logged_out_before",
    "rejected": "common.reconnect",
}


def card_name(account: Card, lang: str) -> str:
    """The card's label, else "Card 2" (plain text)."""
    return card_texts.card_name(account.label, account.number, lang)


def card_heading(account: Card, lang: str) -> str:
    """`👤 <b>Karen</b>`: a card's section heading where a message shows several."""
    return card_texts.card_heading(account.label, account.number, lang)


def expired(account: Card) -> bool:
    """The card's login has run out: the platform would refuse its token."""
    return account.lapsed(datetime.now(UTC))


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
    store: Store,
    library: LibraryClient,
    settings: Settings,
    chat_id: int,
    lang: str,
    *,
    lead: str | None = None,
    button: str = "common.login_button",
) -> LoginPrompt:
    """A fresh login state and the prompt that carries its authorize link, after `lead`.

    With a button the lead says it all ("tap the button"); a text link needs its own line.
    """
    state = await store.logins.create_login_state(chat_id)
    fresh = (await store.chats.chat(chat_id)).fresh_login
    url = library.authorize_url(redirect_uri=settings.redirect_uri, state=state, force_login=fresh)
    # A local PUBLIC_URL means a local set-up: a text link works where a button would not.
    local = not url_button_allowed(settings.redirect_uri)
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
) -> None:
    """Send a login prompt (optionally after `lead`), falling back to a text link if refused."""
    svc = services(context)
    prompt = await login_prompt(svc.store, svc.library, svc.settings, chat_id, lang, lead=lead)
    try:
        await send(context.bot, chat_id, prompt.text, buttons=prompt.markup)
        return
    except TelegramBadRequest as exc:
        if prompt.markup is None or "button_url_invalid" not in exc.message.lower():
            raise
    await send(context.bot, chat_id, prompt.as_link())


# --- the card(s) a command or tap acts on --------------------------------------------------


async def require_card(
    context: Context,
    card: int | None = None,
    *,
    known: list[Card] | None = None,
    tapped: NamesCard | None = None,
) -> Card | None:
    """Card `card` of the chat (None: its first), or None after telling the patron: how to
    connect a card when the chat has no other; else that this card is no longer here. An expired
    card is forgotten on the way. `known`: the chat's cards, when the caller has read them.

    `tapped`: a button's payload, which names its card by identity, never by number alone (a
    number is given to the next card after a logout); a payload stored before identities
    names no card."""
    chat_id = context.chat_id
    store = context.services.store
    cards = known if known is not None else await store.cards.of_chat(chat_id)
    if tapped is not None:
        card = tapped.card if tapped.card is not None else 0
        account = next((a for a in cards if tapped.cid and a.card_id == tapped.cid), None)
    else:
        account = next((a for a in cards if card is None or a.number == card), None)
    if account is not None and not expired(account):
        return account
    lang = context.lang
    await answer_tap(context.query)
    others = card is not None and any(other != account for other in cards)
    # Expired: forget it now rather than let the platform refuse it later.
    if (
        account is not None
        and await forget_card(context, account, lang, why="expired", alone=not others) is not None
    ):
        return None
    if others:
        await send(context.bot, chat_id, t(lang, "cards.gone"))
    else:
        ended = (await store.chats.chat(chat_id)).account_ended
        await send_login(context, chat_id, lang, lead=t(lang, ENDED_TEXTS.get(ended or "", NEW)))
    return None


async def require_cards(context: Context) -> list[Card] | None:
    """Every usable card of the chat, by number; None after telling the patron how to connect
    one. Expired cards are forgotten on the way (quietly while another card is usable)."""
    cards = context.take_cards()
    if cards is None:
        cards = await context.services.store.cards.of_chat(context.chat_id)
    live = [account for account in cards if not expired(account)]
    if not live:
        first = await require_card(context, known=cards)
        return None if first is None else [first]
    for account in cards:
        if account not in live:
            await context.services.store.remove_card(
                account.chat_id, account.number, holding=account
            )
    return live


async def forget_card(
    context: Context,
    card: Card,
    lang: str | None = None,
    *,
    why: str = "rejected",
    alone: bool | None = None,
    tell: bool = True,
) -> Card | None:
    """Forget `card` (its token refused, or `why` "expired") and tell the patron once, with
    a login button: which card, when the chat has others (`alone` False); else that the chat is
    no longer connected, remembering why. The card as it was when this call did the
    forgetting, else None. `tell` False: the caller tells, with `tell_lapsed` (several cards
    of one command in one message).

    Only while the card still holds the token that was refused: a login that raced the call
    has replaced it, and that fresh card stays. The dropped token is revoked."""
    store = context.services.store
    chat_id = card.chat_id
    removed = await store.remove_card(chat_id, card.number, holding=card)
    if removed is None:
        return None
    account = removed.was or card
    if tell:
        await tell_lapsed(context, [account], lang, why=why, alone=alone)
    return account


async def tell_lapsed(
    context: Context,
    cards: Sequence[Card],
    lang: str | None = None,
    *,
    why: str = "rejected",
    alone: bool | None = None,
) -> None:
    """Tell the patron, in one message with a login button, that `cards` are logged out here:
    each by name while the chat has other cards (`alone` False), else that the chat is no
    longer connected, remembering why. One message for every card a command found lapsed, so
    no card is called "the other cards, unchanged" beside another that lapsed too."""
    if not cards:
        return
    store = context.services.store
    chat_id = cards[0].chat_id
    if alone is None:
        alone = not await store.cards.of_chat(chat_id)
    lang = lang or await chat_lang(context, chat_id)
    names = join_and([card_name(account, lang) for account in cards], lang)
    if alone:
        await store.chats.set_account_ended(chat_id, why)
        if len(cards) == 1:
            lead = t(lang, "common.login_expired" if why == "expired" else "common.reconnect")
        else:
            lead = t(lang, "lists.cards_lapsed_all", names=names)
    elif len(cards) == 1:
        key = "lists.card_expired" if why == "expired" else "lists.card_refused"
        lead = t(lang, key, name=names)
    else:
        lead = t(lang, "lists.cards_lapsed", names=names)
    try:
        await send_login(context, chat_id, lang, lead=lead)
    except Forbidden:
        log.info("chat %s blocked the bot; not told that a card was forgotten", chat_id)
