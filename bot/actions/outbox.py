"""What a message to a chat offers the patron, and how its sending went: the words the jobs
and the faces share (the jobs' `jobs.delivery.Deliverer` speaks them; the chat's
`telegram.deliver.TelegramDeliverer` implements it).

An offer names the action it leads to and what that acts on by identity (a loan, a card's
`card_id`, a material's pid); a face makes its buttons of it, the labels in its own words.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.library.models import Loan


@dataclass(frozen=True)
class RenewOffer:
    """A card's loans in a digest: renewing each (while they are few) and all of them; `owner`
    names the card in a family's digest."""

    loans: tuple[Loan, ...]
    number: int  # the card's number, as the chat knows it now
    cid: str | None  # the card's identity (`Card.card_id`)
    owner: str | None = None


@dataclass(frozen=True)
class ShelfOffer:
    """A watched title now on the shelf: ordering it with the watch's card, or where it is."""

    pid: str
    number: int
    cid: str | None


Offer = RenewOffer | ShelfOffer


@dataclass(frozen=True)
class Offers:
    """What one message to a chat offers, in the chat's language."""

    chat_id: int
    lang: str
    offers: tuple[Offer, ...]


class Outcome(Enum):
    SENT = "sent"
    BLOCKED = "blocked"  # the patron blocked the bot
    GONE = "gone"  # the chat no longer exists
    REFUSED = "refused"  # the face refused this message as it is
    FAILED = "failed"  # the face failed this time; a later try may do
    THROTTLED = "throttled"  # still asked to wait after every attempt


@dataclass(frozen=True)
class Delivery:
    """How one send went; `error` is the face's own, for the log."""

    outcome: Outcome
    error: Exception | None = None

    @property
    def sent(self) -> bool:
        return self.outcome is Outcome.SENT


SENT = Delivery(Outcome.SENT)
