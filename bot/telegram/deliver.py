"""The jobs' messages delivered in the chat: `TelegramDeliverer`, a `jobs.delivery.Deliverer`
that `bot.runtime` hands to the sweep, the shelf watches' check and the token jobs.

The offers become stored buttons (`keyboards`), a lapsed card's login a URL button or a text
link (`cards.lapsed_message`), and Telegram's errors a `Delivery` the jobs act on. Every send
is a background send (`ratelimit.background_sends`): replies to chats go first.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING

from telegram import InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import BadRequest, Forbidden, RetryAfter, TelegramError

from bot.actions import buttons as callbacks
from bot.actions.outbox import SENT, Delivery, Offer, Offers, Outcome, RenewOffer
from bot.telegram.buttons import OrderFound, Payload, WhereIs
from bot.telegram.cards import lapsed_message, send_login_prompt
from bot.telegram.keyboards import (
    MAX_BUTTONS,
    in_pairs,
    one_per_row,
    renew_buttons,
    stored_buttons,
    stored_rows,
)
from bot.telegram.ratelimit import SEND_ATTEMPTS, UNRANKED, background_sends
from bot.telegram.replies import send
from bot.texts import t

if TYPE_CHECKING:
    from telegram import Bot

    from bot.actions.vocabulary import Card
    from bot.services import Services

Rows = list[list[InlineKeyboardButton]]


class TelegramDeliverer:
    """Delivers the jobs' messages through `bot` (the paced bot of `run`)."""

    def __init__(self, bot: Bot, services: Services) -> None:
        self.bot = bot
        self.services = services

    async def keyboards(self, wanted: Sequence[Offers]) -> list[InlineKeyboardMarkup | None]:
        """Each message's buttons, stored for all the messages in one transaction (the sweep
        keeps a group's store round trips to one)."""
        specs = [_within_limit(message) for message in wanted]
        ids = await callbacks.put_many(
            self.services,
            [
                (message.chat_id, action, payload)
                for message, offers in zip(wanted, specs, strict=True)
                for buttons, _ in offers
                for action, payload in stored_rows(buttons)
            ],
        )
        taken = 0
        keyboards: list[InlineKeyboardMarkup | None] = []
        for offers in specs:
            rows: Rows = []
            for buttons, layout in offers:
                mine = ids[taken : taken + len(buttons)]
                taken += len(buttons)
                rows += layout(stored_buttons(buttons, mine))
            keyboards.append(InlineKeyboardMarkup(rows) if rows else None)
        return keyboards

    async def login_message(
        self, cards: Sequence[Card], lang: str, lead: str
    ) -> tuple[str, InlineKeyboardMarkup | None]:
        return await lapsed_message(self.services, cards, lang, lead)

    async def send(
        self,
        chat_id: int,
        text: str,
        keyboard: InlineKeyboardMarkup | None = None,
        *,
        patient: bool = False,
        rank: int | None = None,
    ) -> Delivery:
        """One message; `patient`: a 429 that reaches here (PTB's rate limiter waits them out
        already; a bare `Bot` does not) is waited out, up to `SEND_ATTEMPTS` times."""
        waited: RetryAfter | None = None
        for _ in range(SEND_ATTEMPTS if patient else 1):
            try:
                with background_sends(UNRANKED if rank is None else rank):
                    await send(self.bot, chat_id, text, buttons=keyboard)
                return SENT
            except RetryAfter as exc:
                if not patient:
                    return Delivery(Outcome.FAILED, exc)
                waited = exc
                await asyncio.sleep(_seconds(exc))
            except TelegramError as exc:
                return _undelivered(exc)
        return Delivery(Outcome.THROTTLED, waited)

    async def send_login(self, chat_id: int, lang: str, lead: str) -> Delivery:
        try:
            with background_sends():
                await send_login_prompt(self.bot, self.services, chat_id, lang, lead=lead)
        except TelegramError as exc:
            return _undelivered(exc)
        return SENT


Specs = tuple[list[tuple[str, Payload]], Callable[[Sequence[InlineKeyboardButton]], Rows]]


def _within_limit(message: Offers) -> list[Specs]:
    """A message's offers as buttons, within Telegram's 100 a message: past it, a family's
    loans lose their buttons of their own first (each card keeps "renew these"), then the
    last offers go."""
    specs = [_buttons(message.lang, offer) for offer in message.offers]
    if sum(len(buttons) for buttons, _ in specs) > MAX_BUTTONS:
        specs = [_buttons(message.lang, offer, each=False) for offer in message.offers]
    kept: list[Specs] = []
    room = MAX_BUTTONS
    for buttons, layout in specs:
        if len(buttons) > room:
            break
        kept.append((buttons, layout))
        room -= len(buttons)
    return kept


def _buttons(lang: str, offer: Offer, *, each: bool = True) -> Specs:
    """An offer's (label, payload) buttons and how they are laid out; `each`: a renew offer
    names each loan on a button of its own while they are few."""
    if isinstance(offer, RenewOffer):
        loans = list(offer.loans)
        specs = renew_buttons(
            loans,
            lang,
            every=loans,
            digest=True,
            each=each,
            number=offer.number,
            cid=offer.cid,
            owner=offer.owner,
        )
        return specs, one_per_row
    # A watched title on the shelf: order it and where is it, side by side.
    order = OrderFound(offer.pid, offer.number, offer.cid)
    found: list[tuple[str, Payload]] = [
        (t(lang, "shelf.order_button"), order),
        (t(lang, "shelf.button"), WhereIs(offer.pid)),
    ]
    return found, in_pairs


def _undelivered(exc: TelegramError) -> Delivery:
    if isinstance(exc, Forbidden):
        return Delivery(Outcome.BLOCKED, exc)
    if isinstance(exc, BadRequest):
        gone = "chat not found" in exc.message.lower()
        return Delivery(Outcome.GONE if gone else Outcome.REFUSED, exc)
    return Delivery(Outcome.FAILED, exc)


def _seconds(exc: RetryAfter) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PTB warns about the int form of `retry_after`
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)
