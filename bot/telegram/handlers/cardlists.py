"""The borrower lists (/loans, /holds, /debt, /renew, /away): each card's `/v3/user` fetched
side by side with its own token (`read_cards`), shown as one section per card
(`👤 <b>Name</b>`) under one header, with a row of buttons to show only one card, or every card
again. A chat's one card is the n = 1 case: no section heading, its summary under the header,
and a page row of its own (`ListPage` without views).

Paging runs over the sections as one list: a page holds the entries in card order, a section's
heading comes before its first entry, and a page that starts inside a section repeats the
heading ("continued"). The views (every card, each card) are stored once per message
(`buttons.ListPage` with `number` and `views`), so ◀ ▶ and the card buttons edit the same message.

The reading itself is the action `bot.actions.cards.read_chat_cards`: one status per card,
fresh, lapsed or failed. A lapsed card (its login refused or run out) is kept and shown in its
own section, with a login button for it under the list; when every card shown is lapsed, one
message names them all, each with its login button (`cards.tell_lapsed`). A card the platform
fails to read says so in its section while the others are shown (with one card, the failure is
the answer).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from telegram import InlineKeyboardButton

from bot.actions import cards as card_actions
from bot.actions.cards import CardRead, read_chat_cards
from bot.library.deadline import Deadline
from bot.library.errors import LibraryError
from bot.telegram.buttons import ButtonId, ListPage, Payload
from bot.telegram.cards import (
    LoginButtons,
    expired,
    login_buttons,
    require_card,
    tell_lapsed,
)
from bot.telegram.context import Context
from bot.telegram.failures import error_text, tell_library_error
from bot.telegram.keyboards import page_button, store_payloads
from bot.telegram.replies import plain, reply
from bot.texts import t
from bot.texts.cards import card_name
from bot.texts.formatting import paginate
from bot.texts.render import SEP

if TYPE_CHECKING:
    from telegram import Update

    from bot.actions.vocabulary import Card, ChatSettings
    from bot.library.models import BorrowerStatus

log = logging.getLogger(__name__)

# Card buttons in one row of the keyboard (the names must stay readable on a phone).
CARDS_PER_ROW = 3
# `ListPage.views` key of the view of every card.
ALL = "0"


@dataclass(frozen=True)
class CardStatus:
    """One card's answer, as the lists render it: its status, or why there is none."""

    card: Card
    name: str
    status: BorrowerStatus | None = None
    error: LibraryError | None = None  # the platform failed for this card
    lapsed: bool = False  # the card's login lapsed: it waits for a login

    @classmethod
    def of(cls, read: CardRead, lang: str) -> CardStatus:
        return cls(
            read.card,
            card_name(read.card, lang),
            read.status,
            read.error,
            lapsed=read.state == "lapsed",
        )

    @property
    def number(self) -> int:
        return self.card.number

    def trouble(self, lang: str) -> str | None:
        """The section's text for a card that could not be read, else None."""
        if self.lapsed:
            return t(lang, "lists.card_lapsed", name=self.name)
        if self.error is not None:
            return (
                t(lang, "lists.card_failed", name=self.name) + "\n" + error_text(lang, self.error)
            )
        return None

    def unread(self, lang: str) -> Section:
        """The section of a card without a status (its login lapsed, or the platform failed):
        why, and no entries."""
        return Section(self.name, summary=self.trouble(lang) or "")


@dataclass(frozen=True)
class Shown:
    """A list's cards: the chat's cards (lapsed ones too) and the statuses of those the view
    shows. `single`: the chat has one card, so its list has no sections (the n = 1 case: the
    card's summary goes under the list's header)."""

    cards: list[Card]
    statuses: list[CardStatus]
    single: bool

    @property
    def lapsed(self) -> list[Card]:
        """The lapsed cards the view shows: each gets its login button under the list."""
        return [status.card for status in self.statuses if status.lapsed]


async def read_cards(
    context: Context, view: int | None = None, deadline: Deadline | None = None
) -> Shown | None:
    """How every list starts: the chat's cards and their `/v3/user` read side by side
    (`read_chat_cards`); None once the patron has been told that no card is connected, that
    the logins of the cards shown lapsed (one message naming every lapsed card), or (with one
    card) why its list cannot be shown."""
    svc = context.services
    every = context.take_cards()
    if every is None:
        every = await card_actions.of_chat(svc, context.chat_id, lapsed=True)
    if not any(not expired(card) for card in every):
        await require_card(context, known=every)  # no card, or every card lapsed: told
        return None
    read = await read_chat_cards(
        svc,
        every,
        view=view,
        deadline=deadline or Deadline(),
        chat=context.chat,
    )
    lang = context.lang
    if not read.readable:
        await tell_lapsed(context, [one.card for one in read.reads], lang)
        return None
    statuses = [CardStatus.of(one, lang) for one in read.reads]
    single = len(read.cards) == 1
    if single:
        [only] = statuses
        if only.error is not None:
            # A new message, so a tapped list stays in the chat.
            await tell_library_error(context, only.error, card=only.card)
            return None
    return Shown(read.cards, statuses, single)


async def lapsed_logins(context: Context, shown: Shown) -> LoginButtons:
    """A login button for each lapsed card a list shows (none when none is)."""
    svc = context.services
    return await login_buttons(svc, shown.lapsed, context.lang)


async def chat_cards(update: Update, context: Context) -> list[Card]:
    """The chat's usable cards, read quietly: with one card (or none) a command goes on as it
    always did, and it tells the patron itself when nothing is connected."""
    return await card_actions.of_chat(context.services, context.chat_id)


async def fetch_cards(
    context: Context,
    cards: Sequence[Card],
    deadline: Deadline,
    chat: ChatSettings | None = None,
) -> list[CardStatus]:
    """Every card's `/v3/user`, side by side, each with its own token, in card order (the
    action `read_chat_cards`); one message names every card whose login lapsed."""
    svc = context.services
    lang = context.lang
    read = await read_chat_cards(svc, cards, deadline=deadline, chat=chat)
    await tell_lapsed(context, read.newly_lapsed, lang, chat_id=context.chat_id)
    return [CardStatus.of(one, lang) for one in read.reads]


async def named_view(
    update: Update, context: Context, args: Sequence[str] | None = None
) -> tuple[bool, int | None]:
    """The card a list's argument names (`/loans Karen`: its name, or its place in `/cards`;
    `args`: the words that name it, else the command's), as a view; (False, None) once the
    patron has been told no card has that name, and (True, None) for every card when nothing
    is named."""
    words = " ".join((context.args or []) if args is None else args).strip()
    if not words:
        return True, None
    lang = context.lang
    cards = await card_actions.of_chat(context.services, context.chat_id, lapsed=True)
    if not cards:
        return True, None  # the list says how to connect a card
    folded = words.casefold()
    names = [card_name(card, lang) for card in cards]
    for position, (card, name) in enumerate(zip(cards, names, strict=True), start=1):
        if name.casefold() == folded or words == str(position):
            return True, card.number
    starting = [
        a for a, name in zip(cards, names, strict=True) if name.casefold().startswith(folded)
    ]
    if len(starting) == 1:
        return True, starting[0].number
    await reply(update, context, t(lang, "lists.no_such_card", name=words, names=", ".join(names)))
    return False, None


def heading(lang: str, name: str, *, more: bool = False) -> str:
    """A card's section heading, as `bot.texts.cards.card_heading` makes it, from its name (or
    the names of the cards at one library); `more`: a page that goes on with the section."""
    return t(lang, "lists.section_more" if more else "card.heading", name=name)


@dataclass(frozen=True)
class Section:
    """A card's part of a list: under its heading (none when `name` is None: a chat's one card)
    its count and summary, then the entries."""

    name: str | None
    count: str = ""
    summary: str = ""
    entries: Sequence[str] = ()

    @property
    def lead(self) -> str:
        return SEP.join(part for part in (self.count, self.summary) if part)


def lay_out(shown: Shown, title: str, sections: Sequence[Section]) -> tuple[str, list[Section]]:
    """The list's header and its sections as shown: with one card there is no section heading,
    and the card's summary stands under the header."""
    if not shown.single or len(sections) != 1:
        return title, list(sections)
    [only] = sections
    header = "\n".join(part for part in (title, only.summary) if part)
    return header, [Section(None, entries=only.entries)]


def section_pages(
    lang: str, sections: Sequence[Section], *, per_page: int, limit: int
) -> list[list[str]]:
    """The sections' entries in pages (as `texts.formatting.paginate`), each section headed
    before its first entry and again, "continued", at the top of a page it goes on in."""
    blocks: list[str] = []
    owner: list[tuple[int, bool]] = []  # (section, is its first block)
    for number, section in enumerate(sections):
        title = heading(lang, section.name) if section.name is not None else ""
        top = "\n".join(part for part in (title, section.lead) if part)
        if not section.entries:
            blocks.append(top)
            owner.append((number, True))
            continue
        for index, entry in enumerate(section.entries):
            blocks.append(f"{top}\n\n{entry}" if index == 0 and top else entry)
            owner.append((number, index == 0))
    pages = paginate(blocks, per_page=per_page, limit=limit)
    first = 0
    for page in pages:
        name = sections[owner[first][0]].name if page else None
        if name is not None and not owner[first][1]:
            page[0] = f"{heading(lang, name, more=True)}\n\n{page[0]}"
        first += len(page)
    return pages


def view_ids(cards: Sequence[Card], offset: int = 0) -> dict[str, ButtonId]:
    """View key -> the `ButtonId` of its stored view, the views stored from `offset` on."""
    views = {ALL: ButtonId.of(offset)}
    views.update({str(card.number): ButtonId.of(offset + 1 + n) for n, card in enumerate(cards)})
    return views


def view_payloads(
    kind: str, cards: Sequence[Card], *, offset: int = 0, **fields: Any
) -> list[Payload]:
    """The stored views of a sectioned list (every card, then each card), each knowing all the
    views' ids, stored from `offset` on in their batch; `fields` go into each (a /renew's
    buttons)."""
    views = view_ids(cards, offset)
    return [
        ListPage(kind, views=dict(views), **fields),
        *(
            ListPage(kind, number=card.number, views=dict(views), cid=card.card_id, **fields)
            for card in cards
        ),
    ]


async def store_views(
    update: Update, context: Context, kind: str, cards: Sequence[Card], **fields: Any
) -> dict[str, str]:
    """Store the views of a new sectioned list; view key -> stored id."""
    ids = await store_payloads(update, context, view_payloads(kind, cards, **fields))
    keys = [ALL, *(str(card.number) for card in cards)]
    return dict(zip(keys, ids, strict=True))


def view_rows(
    lang: str, cards: Sequence[Card], views: Mapping[str, str], shown: int | None
) -> list[list[InlineKeyboardButton]]:
    """The buttons that show one card only, and "All cards" (the view shown is marked); none
    once the chat has only one card left."""
    if len(cards) < 2:
        return []
    buttons: list[InlineKeyboardButton] = []
    for card in cards:
        view = views.get(str(card.number))
        if view is None:
            continue
        label = plain(card_name(card, lang))
        if shown == card.number:
            label = plain(t(lang, "lists.view_shown", label=label))
        buttons.append(page_button(label, view, 0))
    everything = views.get(ALL)
    if everything is not None:
        label = plain(t(lang, "lists.all_cards"))
        if shown is None:
            label = plain(t(lang, "lists.view_shown", label=label))
        buttons.append(page_button(label, everything, 0))
    return [buttons[n : n + CARDS_PER_ROW] for n in range(0, len(buttons), CARDS_PER_ROW)]
