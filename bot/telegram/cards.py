"""Several cards in one chat: naming them, and the cards a command works on."""

from __future__ import annotations

from datetime import UTC, datetime

from telegram import Update

from bot.services import services
from bot.telegram.ui import Context, chat_id_of, require_account
from bot.texts import cards as card_texts
from storage.store import Account


def card_name(account: Account, lang: str) -> str:
    """The card's label, else "Card 2" (plain text)."""
    return card_texts.card_name(account.label, account.card, lang)


def card_heading(account: Account, lang: str) -> str:
    """`👤 <b>Karen</b>`: a card's section heading where a message shows several."""
    return card_texts.card_heading(account.label, account.card, lang)


async def require_cards(update: Update, context: Context) -> list[Account] | None:
    """Every usable card of the chat, by number; None after telling the patron how to connect
    one. Expired cards are forgotten on the way (as `require_account` does for one)."""
    cards = await services(context).store.cards(chat_id_of(update))
    now = datetime.now(UTC)
    live = [a for a in cards if a.token_expires_at is None or a.token_expires_at > now]
    if live and len(live) == len(cards):
        return live
    if not live:
        # `require_account` forgets the expired card and says how to log in again.
        first = await require_account(update, context)
        return None if first is None else [first]
    store = services(context).store
    for account in cards:
        if account not in live:
            await store.delete_account(account.chat_id, account.card)
    return live
