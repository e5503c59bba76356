"""Reading a chat's cards with their lists: every card of the chat, lapsed ones too, and for
the cards a view shows one status each: `fresh` (its `/v3/user` just read), `lapsed` (its
login lapsed: no token, so no call; it waits for its patron to log in again) or `failed` (the
library failed for it, with the error).

A card whose token the library refuses, or whose login has run out, is lapsed here
(`Store.lapse_card`): it keeps its name, calendar and settings, and `newly_lapsed` names it so
that the face tells the patron in the same answer. The faces (the chat's lists, the Mini App)
render this and decide nothing themselves.

The chat's cards as they are kept (`of_chat`, `card`), a card's name and library, and a status
a command read (`seen`, which moves the card's check plan) are here too: the faces reach the
store only through the actions.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from bot.library.deadline import Deadline
from bot.library.errors import LibraryError, NotLoggedIn, TokenRejected
from bot.services.checks import refresh_plan

if TYPE_CHECKING:
    from bot.library.models import BorrowerStatus
    from bot.services import Services
    from storage.store import Card, ChatSettings

log = logging.getLogger(__name__)

State = Literal["fresh", "lapsed", "failed"]


@dataclass(frozen=True)
class CardRead:
    """One card's answer: `fresh` with its `status`, `lapsed`, or `failed` with its `error`."""

    card: Card
    state: State
    status: BorrowerStatus | None = None
    error: LibraryError | None = None

    @property
    def number(self) -> int:
        return self.card.number


@dataclass(frozen=True)
class ChatCards:
    """A chat's cards as one read found them: `cards`, every card of the chat by number (lapsed
    ones too, as they are now); `reads`, one per card the view shows, in card order;
    `newly_lapsed`, the cards this read lapsed (the patron not yet told)."""

    cards: list[Card]
    reads: list[CardRead]
    newly_lapsed: list[Card] = field(default_factory=list)

    @property
    def lapsed(self) -> list[Card]:
        """Every lapsed card of the chat, by number."""
        return [card for card in self.cards if card.is_lapsed]

    @property
    def readable(self) -> bool:
        """Some card the view shows was read or failed: the answer is a list, not only a
        login prompt."""
        return any(read.state != "lapsed" for read in self.reads)


def shown_cards(cards: Sequence[Card], view: int | None) -> list[Card]:
    """The cards a view shows (every card when the one asked for is gone)."""
    chosen = [card for card in cards if view is None or card.number == view]
    return chosen or list(cards)


async def read_chat_cards(
    services: Services,
    cards: Sequence[Card],
    *,
    view: int | None = None,
    deadline: Deadline | None = None,
    chat: ChatSettings | None = None,
) -> ChatCards:
    """The chat's `cards` (as read with `lapsed=True`) and the lists of those `view` shows
    (None: every card), each card's `/v3/user` read side by side with its own token.

    A card whose login ran out is lapsed without a call; one the library refuses is lapsed
    after it. Only while it holds the token that lapsed: a login that raced the call keeps the
    fresh card, which then reads as failed for this once."""
    store, library, settings = services.store, services.library, services.settings
    deadline = deadline or Deadline()
    now = datetime.now(UTC)
    lapsed_now: dict[int, Card] = {}

    async def lapse(card: Card) -> Card | None:
        done = await store.lapse_card(card)
        if done is not None:
            lapsed_now[card.number] = done
        return done

    async def one(card: Card) -> CardRead:
        if card.is_lapsed:
            return CardRead(card, "lapsed")
        if card.login_gone(now):  # run out: the library would refuse it
            done = await lapse(card)
            return CardRead(done or card, "lapsed")
        try:
            status = await deadline.run(library.user(card.token))
        except (TokenRejected, NotLoggedIn) as exc:
            done = await lapse(card)
            if done is not None:
                return CardRead(done, "lapsed")
            return CardRead(card, "failed", error=exc)  # a login raced the call
        except LibraryError as exc:
            log.warning(
                "library call failed for card %s: %s (%s)",
                card.number,
                type(exc).__name__,
                exc.code or exc.status,
            )
            return CardRead(card, "failed", error=exc)
        await refresh_plan(store, settings, card, status, chat=chat)
        return CardRead(card, "fresh", status)

    shown = shown_cards(cards, view)
    if len(shown) == 1:  # most chats: no task to make and wait for
        reads = [await one(shown[0])]
    else:
        reads = list(await asyncio.gather(*(one(card) for card in shown)))
    every = [lapsed_now.get(card.number, card) for card in cards]
    newly = [lapsed_now[number] for number in sorted(lapsed_now)]
    return ChatCards(every, reads, newly)


async def of_chat(services: Services, chat_id: int, *, lapsed: bool = False) -> list[Card]:
    """The chat's cards by number: the usable ones, or with `lapsed` every card."""
    return await services.store.cards.of_chat(chat_id, lapsed=lapsed)


async def card(
    services: Services, chat_id: int, number: int = 1, *, lapsed: bool = False
) -> Card | None:
    """Card `number` of the chat (a lapsed one only with `lapsed`), else None."""
    return await services.store.cards.get(chat_id, number, lapsed=lapsed)


async def set_label(services: Services, chat_id: int, number: int, label: str | None) -> bool:
    """The card's name in the chat (None: the patron's own again); False when it is gone."""
    return await services.store.cards.set_label(chat_id, number, label)


async def set_agency(services: Services, chat_id: int, number: int, agency: str | None) -> bool:
    """The card's library (its agency), as its borrower status names it."""
    return await services.store.cards.set_agency(chat_id, number, agency)


async def seen(
    services: Services, card: Card, status: BorrowerStatus, *, chat: ChatSettings | None = None
) -> None:
    """A command read the card's status: its check plan moves with it, for free."""
    await refresh_plan(services.store, services.settings, card, status, chat=chat)
