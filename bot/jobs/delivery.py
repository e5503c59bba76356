"""What the jobs need of a face: `Deliverer`.

The jobs decide what is due and word it (`bot.texts`); they know no face. What a message
offers the patron to do next is an offer (`actions.outbox`), not a button. A deliverer (the
chat's is `telegram.deliver.TelegramDeliverer`, handed in by `bot.runtime`) makes its buttons of
the offers, keeps them for their taps, and sends; it tells how a send went as a `Delivery`, and
the jobs decide what that means for the chat (marked inactive, tried again later, or let be).
Its sends are background sends: replies to chats go first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from bot.actions.outbox import Delivery, Offers
    from storage.store import Card

K = TypeVar("K")


class Deliverer(Protocol[K]):
    """A face's delivery of the jobs' messages; `K` is its keyboard, opaque to the jobs."""

    async def keyboards(self, wanted: Sequence[Offers]) -> list[K | None]:
        """Each message's offers as its keyboard (None: it offers nothing), the buttons of all
        of them kept for their taps in one transaction."""
        ...

    async def login_message(
        self, cards: Sequence[Card], lang: str, lead: str
    ) -> tuple[str, K | None]:
        """`lead` with a login of its own for each of the lapsed `cards`: the text to send and
        its keyboard."""
        ...

    async def send(
        self,
        chat_id: int,
        text: str,
        keyboard: K | None = None,
        *,
        patient: bool = False,
        rank: int | None = None,
    ) -> Delivery:
        """One message (HTML, as `bot.texts` words it). `patient`: the face's requests to slow
        down are waited out, up to its number of attempts; else one attempt. `rank`: how
        urgent it is (a digest's `storage.sweeps.urgency`, 0 the most; None: after those)."""
        ...

    async def send_login(self, chat_id: int, lang: str, lead: str) -> Delivery:
        """A login prompt after `lead`, in one attempt."""
        ...
