"""The borrower lists of a chat with several cards: each card's `/v3/user` fetched side by side
with its own token, shown as one section per card (`👤 <b>Name</b>`) under one header, with a
row of buttons to show only one card, or every card again.

Paging runs over the sections as one list: a page holds the entries in card order, a section's
heading comes before its first entry, and a page that starts inside a section repeats the
heading ("continued"). The views (every card, each card) are stored once per message
(`buttons.ListPage` with `card` and `views`), so ◀ ▶ and the card buttons edit the same message.

A card whose token the platform refuses (401) is forgotten alone, and the patron is told which;
a card the platform fails to read says so in its section while the others are shown.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from telegram import InlineKeyboardButton
from telegram.error import Forbidden

from bot.library.errors import LibraryError, TokenRejected
from bot.services import services
from bot.services.polling import refresh_plan
from bot.telegram.buttons import ButtonId, ListPage, Payload
from bot.telegram.cards import card_name
from bot.telegram.ui import (
    Context,
    answer_library_error,
    answer_query,
    chat_id_of,
    error_text,
    lang_of,
    page_button,
    plain,
    require_account,
    send,
    send_login,
    store_payloads,
)
from bot.texts import t
from bot.texts.formatting import paginate

if TYPE_CHECKING:
    from telegram import Update

    from bot.library.deadline import Deadline
    from bot.library.models import BorrowerStatus
    from storage.store import Account, ChatSettings

log = logging.getLogger(__name__)

# Card buttons in one row of the keyboard (the names must stay readable on a phone).
CARDS_PER_ROW = 3
# `ListPage.views` key of the view of every card.
ALL = "0"


@dataclass(frozen=True)
class CardStatus:
    """One card's answer: its status, or why there is none."""

    account: Account
    name: str
    status: BorrowerStatus | None = None
    error: LibraryError | None = None  # the platform failed for this card
    forgotten: bool = False  # the platform refused the token: the card is forgotten

    @property
    def card(self) -> int:
        return self.account.card

    def trouble(self, lang: str) -> str | None:
        """The section's text for a card that could not be read, else None."""
        if self.forgotten:
            return t(lang, "lists.card_forgotten", name=self.name)
        if self.error is not None:
            return (
                t(lang, "lists.card_failed", name=self.name) + "\n" + error_text(lang, self.error)
            )
        return None

    def unread(self, lang: str) -> Section:
        """The section of a card without a status (its token refused, or the platform failed):
        why, and no entries."""
        return Section(self.name, self.trouble(lang) or "", ())


async def chat_cards(update: Update, context: Context) -> list[Account]:
    """The chat's cards, read quietly: with one card (or none) a command goes on as it always
    did, and it tells the patron itself when nothing is connected."""
    return await services(context).store.cards(chat_id_of(update))


def card_number(cards: Sequence[Account]) -> int:
    """The number of a chat's one card (not always 1: the first may have been logged out)."""
    return cards[0].card if cards else 1


async def only_card(update: Update, context: Context) -> int:
    """`card_number` of the chat's cards, read now (a page tap of a one-card list)."""
    return card_number(await chat_cards(update, context))


def _expired(account: Account) -> bool:
    expires = account.token_expires_at
    return expires is not None and expires <= datetime.now(UTC)


async def require_card(update: Update, context: Context, card: int) -> Account | None:
    """Card `card` of the chat for a button that names it, or None after telling the patron:
    with no other card, as `require_account` tells it; else that the card is no longer here."""
    chat_id = chat_id_of(update)
    store = services(context).store
    account = await store.account(chat_id, card)
    if account is not None and not _expired(account):
        return account
    others = [other for other in await store.cards(chat_id) if other.card != card]
    if not others:
        return await require_account(update, context)
    lang = await lang_of(update, context)
    if update.callback_query is not None:
        await answer_query(update)
    if account is not None and await store.delete_account(chat_id, card) is not None:
        name = card_name(account, lang)
        await send_login(context, chat_id, lang, lead=t(lang, "lists.card_expired", name=name))
    else:
        await send(context.bot, chat_id, t(lang, "cards.gone"))
    return None


async def forget_card(context: Context, account: Account, lang: str) -> bool:
    """Forget one card whose token the platform refused and tell the patron which, with a login
    button; the chat's other cards stay. True when this call did the forgetting."""
    store = services(context).store
    chat_id = account.chat_id
    if await store.delete_account(chat_id, account.card) is None:
        return False
    if not await store.cards(chat_id):
        await store.set_account_ended(chat_id, "rejected")
        lead = t(lang, "common.reconnect")
    else:
        lead = t(lang, "lists.card_refused", name=card_name(account, lang))
    try:
        await send_login(context, chat_id, lang, lead=lead)
    except Forbidden:
        log.info("chat %s blocked the bot; not told about the refused token", chat_id)
    return True


async def answer_card_error(
    update: Update,
    context: Context,
    exc: LibraryError,
    lang: str,
    account: Account,
    *,
    edit: bool = False,
) -> None:
    """`ui.answer_library_error` for a call made with `account`'s token: a refused token forgets
    only that card, saying which, when the chat has others."""
    if isinstance(exc, TokenRejected) and (
        account.card != 1 or len(await chat_cards(update, context)) > 1
    ):
        await answer_query(update)
        if not await forget_card(context, account, lang):
            await send(context.bot, chat_id_of(update), t(lang, "cards.gone"))
        return
    await answer_library_error(update, context, exc, lang, edit=edit, card=account.card)


async def fetch_cards(
    context: Context,
    accounts: Sequence[Account],
    lang: str,
    deadline: Deadline,
    chat: ChatSettings | None = None,
) -> list[CardStatus]:
    """Every card's `/v3/user`, side by side, each with its own token, in card order."""
    svc = services(context)

    async def one(account: Account) -> CardStatus:
        name = card_name(account, lang)
        try:
            status = await deadline.run(svc.library.user(account.token))
        except TokenRejected:
            await forget_card(context, account, lang)
            return CardStatus(account, name, forgotten=True)
        except LibraryError as exc:
            log.warning(
                "library call failed for card %s: %s (%s)",
                account.card,
                type(exc).__name__,
                exc.code or exc.status,
            )
            return CardStatus(account, name, error=exc)
        await refresh_plan(svc.store, svc.settings, account, status, chat=chat)
        return CardStatus(account, name, status)

    return list(await asyncio.gather(*(one(account) for account in accounts)))


def heading(lang: str, name: str, *, more: bool = False) -> str:
    """A card's section heading, as `telegram.cards.card_heading` makes it, from its name (or
    the names of the cards at one library); `more`: a page that goes on with the section."""
    return t(lang, "lists.section_more" if more else "card.heading", name=name)


@dataclass(frozen=True)
class Section:
    """A card's part of a list: what stands under its heading before the entries, the entries."""

    name: str
    lead: str
    entries: Sequence[str]


def section_pages(
    lang: str, sections: Sequence[Section], *, per_page: int, limit: int
) -> list[list[str]]:
    """The sections' entries in pages (as `texts.formatting.paginate`), each section headed
    before its first entry and again, "continued", at the top of a page it goes on in."""
    blocks: list[str] = []
    owner: list[tuple[int, bool]] = []  # (section, is its first block)
    for number, section in enumerate(sections):
        top = "\n".join(part for part in (heading(lang, section.name), section.lead) if part)
        if not section.entries:
            blocks.append(top)
            owner.append((number, True))
            continue
        for index, entry in enumerate(section.entries):
            blocks.append(f"{top}\n\n{entry}" if index == 0 else entry)
            owner.append((number, index == 0))
    pages = paginate(blocks, per_page=per_page, limit=limit)
    first = 0
    for page in pages:
        if page and not owner[first][1]:
            name = sections[owner[first][0]].name
            page[0] = f"{heading(lang, name, more=True)}\n\n{page[0]}"
        first += len(page)
    return pages


def view_ids(cards: Sequence[Account], offset: int = 0) -> dict[str, ButtonId]:
    """View key -> the `ButtonId` of its stored view, the views stored from `offset` on."""
    views = {ALL: ButtonId.of(offset)}
    views.update(
        {str(account.card): ButtonId.of(offset + 1 + n) for n, account in enumerate(cards)}
    )
    return views


def view_payloads(
    kind: str, cards: Sequence[Account], *, offset: int = 0, **fields: Any
) -> list[Payload]:
    """The stored views of a sectioned list (every card, then each card), each knowing all the
    views' ids, stored from `offset` on in their batch; `fields` go into each (a /renew's
    buttons)."""
    views = view_ids(cards, offset)
    return [
        ListPage(kind, card=card, views=dict(views), **fields)
        for card in (None, *(account.card for account in cards))
    ]


async def store_views(
    update: Update, context: Context, kind: str, cards: Sequence[Account], **fields: Any
) -> dict[str, str]:
    """Store the views of a new sectioned list; view key -> stored id."""
    ids = await store_payloads(update, context, view_payloads(kind, cards, **fields))
    keys = [ALL, *(str(account.card) for account in cards)]
    return dict(zip(keys, ids, strict=True))


def view_rows(
    lang: str, cards: Sequence[Account], views: Mapping[str, str], shown: int | None
) -> list[list[InlineKeyboardButton]]:
    """The buttons that show one card only, and "All cards" (the view shown is marked); none
    once the chat has only one card left."""
    if len(cards) < 2:
        return []
    buttons: list[InlineKeyboardButton] = []
    for account in cards:
        view = views.get(str(account.card))
        if view is None:
            continue
        label = plain(card_name(account, lang))
        if shown == account.card:
            label = plain(t(lang, "lists.view_shown", label=label))
        buttons.append(page_button(label, view, 0))
    everything = views.get(ALL)
    if everything is not None:
        label = plain(t(lang, "lists.all_cards"))
        if shown is None:
            label = plain(t(lang, "lists.view_shown", label=label))
        buttons.append(page_button(label, everything, 0))
    return [buttons[n : n + CARDS_PER_ROW] for n in range(0, len(buttons), CARDS_PER_ROW)]


def kept_cards(cards: Sequence[Account], statuses: Sequence[CardStatus]) -> list[Account]:
    """`cards` less those just forgotten (their token refused)."""
    gone = {status.card for status in statuses if status.forgotten}
    return [account for account in cards if account.card not in gone]


def shown_cards(cards: Sequence[Account], view: int | None) -> list[Account]:
    """The cards a view shows (every card when the one asked for is gone)."""
    chosen = [account for account in cards if view is None or account.card == view]
    return chosen or list(cards)


def for_card(card: int) -> Callable[[Update, Context], Awaitable[Account | None]]:
    """`ui.claim_once`'s `require` for a button of card `card`."""

    async def require(update: Update, context: Context) -> Account | None:
        return await require_card(update, context, card)

    return require
