"""Logging a card in and out: the login links (each with a login state of its own), the
callback's state taken once, the pending link it leaves and `/start <code>` completing it, a
card whose login lapsed kept with its name, and a card removed (/logout, /forget)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.services import Services
    from storage.links import Identity
    from storage.store import Card, Linked, RemovedCard


async def login_url(services: Services, chat_id: int, *, another: bool = False) -> str:
    """The access service's login link for the chat, with a fresh login state. It asks for
    the card number and PIN again after a /logout (the chat's `fresh_login`), and for
    `another` card: the access service logs a browser that has its single sign-on session in
    again as the same person, without a page, so a second holder on one phone could never
    add their card."""
    store = services.store
    state = await store.logins.create_login_state(chat_id)
    fresh = another or (await store.chats.chat(chat_id)).fresh_login
    return services.library.authorize_url(
        redirect_uri=services.settings.redirect_uri, state=state, force_login=fresh
    )


async def card_logins(services: Services, cards: Sequence[Card]) -> list[str]:
    """A login link for each card (a lapsed one's "log in again"), each with a login state of
    its own: a login of the same person brings the card back, whichever link it came by.

    In a chat of several cards each link asks for a login page (`force_login`): the browser
    may be signed on as another of the family, whom the access service would log in again
    at once. A card alone keeps single sign-on."""
    store = services.store
    family: dict[int, bool] = {}
    urls: list[str] = []
    for card in cards:
        if card.chat_id not in family:
            family[card.chat_id] = len(await store.cards.of_chat(card.chat_id, lapsed=True)) > 1
        state = await store.logins.create_login_state(card.chat_id)
        urls.append(
            services.library.authorize_url(
                redirect_uri=services.settings.redirect_uri,
                state=state,
                force_login=family[card.chat_id],
            )
        )
    return urls


async def take_state(services: Services, state: str) -> tuple[int, bool] | None:
    """The chat a login callback's state names, once: (chat id, expired); None for an unknown
    or used state."""
    return await services.store.logins.take_login_state(state)


async def pending_link(
    services: Services,
    chat_id: int,
    token: str,
    expires_at: datetime | None,
    identity: Identity | Mapping[str, Any] | None,
) -> str:
    """The one-time code (`/start <code>`) that connects a login's token to the chat only."""
    return await services.store.create_pending_link(chat_id, token, expires_at, identity)


async def complete_link(services: Services, chat_id: int, code: str) -> Linked | None:
    """`/start <code>`: the pending login connected to the chat (`Linked` says how), or None
    for a code that is unknown, used, expired or another chat's."""
    return await services.store.complete_link(chat_id, code)


async def lapse(services: Services, card: Card) -> Card | None:
    """The card's login lapsed: the card kept with its name, calendar and settings, without
    its token. The card as it is now, else None (a login since replaced the token, or the
    card is lapsed or gone already)."""
    return await services.store.lapse_card(card)


async def remove_card(
    services: Services,
    chat_id: int,
    number: int,
    *,
    logout: bool = False,
    holding: Card | None = None,
    hand_over: bool = False,
) -> RemovedCard | None:
    """A card and everything of it, gone (once: None when it was gone already). `logout`: the
    patron's own, so its calendar entries go too; `hand_over`: the caller revokes the token
    and tells the patron the answer; `holding`: only while the card still holds that login."""
    return await services.store.remove_card(
        chat_id, number, logout=logout, holding=holding, hand_over=hand_over
    )
