"""Cancelling a hold: the "yes" under the question, at most once, for the card the button
names (`cancel_hold`); its result typed, for the chat to render."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.actions.outcomes import Already, CardGone, LoginLapsed, claim_for_card
from bot.library.deadline import Deadline
from bot.library.errors import (
    LibraryError,
    NotLoggedIn,
    Refused,
    TokenRejected,
)

if TYPE_CHECKING:
    from bot.services import Services
    from storage.store import Card

# The library's words for a hold it no longer has ("Unknown Request": the NCIP problem type).
HOLD_GONE = frozenset({"order_not_found", "unknown request"})


@dataclass(frozen=True)
class Cancelled:
    """The library cancelled the hold (`deleted`), or answered that it did not."""

    card: Card
    title: str
    deleted: bool


@dataclass(frozen=True)
class HoldGone:
    """The library has no such hold any more (picked up, lapsed, or cancelled already)."""

    card: Card
    title: str


@dataclass(frozen=True)
class CancelRefused:
    """The library refused; `reason` is its own word."""

    card: Card
    title: str
    reason: str


@dataclass(frozen=True)
class MaybeCancelled:
    """Sent once and never answered readably: the hold may be cancelled or not."""

    card: Card
    title: str


@dataclass(frozen=True)
class CancelFailed:
    """Not cancelled: the library could not be asked (`error`)."""

    card: Card
    title: str
    error: LibraryError


Cancelling = (
    Cancelled
    | HoldGone
    | CancelRefused
    | MaybeCancelled
    | CancelFailed
    | LoginLapsed
    | CardGone
    | Already
)


async def cancel_hold(
    services: Services,
    *,
    chat_id: int,
    button: str,
    action: str,
    user_id: int | None = None,
) -> Cancelling:
    """Cancel the hold behind the stored "yes" `button` (stored for `action`), at most once,
    on the card it names by identity with its login alive (`claim_for_card`). Never retried:
    the id stays spent whatever the answer."""
    store, library = services.store, services.library
    claimed = await claim_for_card(
        store, chat_id=chat_id, button=button, action=action, user_id=user_id
    )
    if not isinstance(claimed, tuple):
        return claimed
    card, ref = claimed
    payload = ref.payload
    title = str(payload.get("title") or "")
    order_type = str(payload.get("order_type") or "normal")
    order_id = str(payload.get("order_id", ""))
    # The hold is gone: every button of it (another list's "cancel?", another "yes") says so.
    gone = {"cid": card.card_id, "order_id": order_id}
    try:
        result = await Deadline().run(library.cancel_order(card.token, order_id, order_type))
    except (TokenRejected, NotLoggedIn) as exc:
        return LoginLapsed(card, exc)
    except Refused as exc:
        if (exc.code or "").strip().lower() in HOLD_GONE:
            await store.callbacks.retire_callbacks(chat_id, action, gone)
            return HoldGone(card, title)
        return CancelRefused(card, title, exc.code or "?")
    except LibraryError as exc:
        if exc.outcome_unknown:
            return MaybeCancelled(card, title)
        return CancelFailed(card, title, exc)
    if result.deleted:
        await store.callbacks.retire_callbacks(chat_id, action, gone)
    return Cancelled(card, title, result.deleted)
