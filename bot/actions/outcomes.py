"""What every action that acts on a stored button or id shares: the card it names, by identity
and with its login alive, and the id claimed at most once (`claim_for_card`), with the results
that end an action before anything is sent (`CardGone`, `LoginLapsed`, `NotRead`, `Already`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from storage.store import Card

if TYPE_CHECKING:
    from bot.library.errors import LibraryError
    from storage.store import CallbackRef, Store


@dataclass(frozen=True)
class CardGone:
    """The card the button or id was made for is no longer in the chat (logged out, or its
    number now held by another card): nothing is sent."""


@dataclass(frozen=True)
class LoginLapsed:
    """The card's login has run out (`error` None: known before sending, so the id is not
    spent) or the library refused its token (`error`): nothing was done."""

    card: Card
    error: LibraryError | None = None


@dataclass(frozen=True)
class NotRead:
    """What the action needs could not be read from the library (`error`): nothing was done."""

    error: LibraryError


@dataclass(frozen=True)
class Already:
    """The id was used already (or is unknown, expired, another face's or another user's)."""


def card_for(cards: Iterable[Card], cid: object) -> Card | CardGone | LoginLapsed:
    """The card an id names by identity (`Card.card_id`), never by number (numbers are given
    again after a logout; an id stored before identities names no card), with its login alive."""
    card = next((card for card in cards if cid and card.card_id == cid), None)
    if card is None:
        return CardGone()
    if card.login_gone(dt.datetime.now(dt.UTC)):
        return LoginLapsed(card)
    return card


async def claim_for_card(
    store: Store, *, chat_id: int, button: str, action: str, user_id: int | None = None
) -> tuple[Card, CallbackRef] | CardGone | LoginLapsed | Already:
    """The card the stored id `button` names, and the id's row, claimed: only an id stored for
    `action` (each face claims only its own), and only once the card is known to be here with
    its login alive, so a card that is gone or lapsed spends nothing. A second claim (a double
    tap, two views, a race) gets `Already`."""
    ref = await store.callbacks.callback(button, chat_id, user_id=user_id, action=action)
    if ref is None or ref.used_at is not None:
        return Already()
    card = card_for(await store.cards.of_chat(chat_id), ref.payload.get("cid"))
    if not isinstance(card, Card):
        return card
    claimed = await store.callbacks.claim_callback(button, chat_id, user_id=user_id, action=action)
    if claimed is None:
        return Already()
    return card, claimed
