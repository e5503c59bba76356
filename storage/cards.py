"""Connected library cards (table `card`): each card's sealed token, the two things kept from
userinfo, and what is the card's own (label, pick-up branch, notice state). A chat holds up to
`MAX_CARDS` (a family), numbered from 1. A token leaves the store only as `Card.token`, opened
by `Cards.open`; every card's token is sealed to its chat.

A card whose login lapsed (its token refused or run out) is not removed: `Store.lapse_card`
drops its token and marks it (`lapsed_at`), and it keeps its number, name, identity, calendar
entries and settings until the same person logs in again (`Store.complete_link`). Reads leave
lapsed cards out unless asked (`lapsed=True`), so no caller hands the library an empty token.

Removing a card is `Store.remove_card` (/logout, /forget): it spans the tables that hold what
is the card's."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import Row, and_, bindparam, delete, false, func, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.expression import Executable

from storage.crypto import TokenCipher, TokenDecryptError, envelope_key_id
from storage.database import Database, Repository
from storage.tables import CARD

log = logging.getLogger(__name__)

# The most cards one chat holds: a family's, not a library's.
MAX_CARDS = 6
# (chat id, card number): what is per card is keyed so.
CardKey = tuple[int, int]


# The columns of `card` that `Cards.open` makes a `Card` of, for reads that join them onto others
# (`Store.read_chat`): not the sweep's lease and marks, nor the calendar feed's.
CARD_COLUMNS = tuple(
    CARD.c[name]
    for name in (
        "chat_id",
        "number",
        "token",
        "token_expires_at",
        "unique_id",
        "municipality",
        "connected_at",
        "expiry_warned",
        "next_check",
        "label",
        "agency",
        "pickup_branch",
        "fees_known",
        "order_check",
        "card_id",
        "lapsed_at",
    )
)


@dataclass(frozen=True)
class Card:
    """One connected card: the `number` it has in its chat, its identity at the library
    (`unique_id`, `municipality`: all that is kept from userinfo) and its token."""

    chat_id: int
    token: str
    token_expires_at: datetime | None
    unique_id: str | None
    municipality: str | None
    connected_at: datetime
    expiry_warned: bool
    next_check: date | None = None  # the check plan (rules/checks.py)
    number: int = 1
    label: str | None = None  # the borrower's first name, or the patron's name for the card
    agency: str | None = None  # the card's library (`/v3/user` `agency`)
    pickup_branch: str | None = None
    fees_known: bool = False  # the card's fees were recorded (only later ones are new)
    order_check: date | None = None  # when an order placed through the bot is next checked
    # The card's identity in its chat, never given to another card (numbers are reused): what
    # a button names, so that a stale one cannot act on whoever holds the number now.
    card_id: str | None = None
    # The token as stored (sealed): a refusal lapses the card only while it still holds it.
    sealed: str = ""
    # When the card's login lapsed: it has no token (`token` is ""), only its name and the rest.
    lapsed_at: datetime | None = None

    @property
    def is_lapsed(self) -> bool:
        """The card is marked lapsed: it waits for its patron to log in again."""
        return self.lapsed_at is not None

    def login_gone(self, now: datetime) -> bool:
        """The card's login is of no use at `now`: marked lapsed (`is_lapsed`), or its token run
        out by then, so the platform would refuse it. The card itself stays either way."""
        return self.is_lapsed or (
            self.token_expires_at is not None and self.token_expires_at <= now
        )

    @property
    def key(self) -> CardKey:
        """The card's key in the store: (chat id, number)."""
        return (self.chat_id, self.number)

    def __repr__(self) -> str:  # keep the token out of logs and tracebacks
        return (
            f"Card(chat_id={self.chat_id}, number={self.number}, "
            f"unique_id={self.unique_id!r}, token=<hidden>)"
        )


@dataclass(frozen=True)
class RemovedCard:
    """A card just removed: its token to revoke (None: it can no longer be decrypted), and the
    card as it was (`was`, None when its token does not open)."""

    chat_id: int
    token: str | None
    token_expires_at: datetime | None
    number: int = 1
    label: str | None = None
    was: Card | None = None

    def __repr__(self) -> str:
        return f"RemovedCard(chat_id={self.chat_id}, number={self.number}, token=<hidden>)"


def new_card_id() -> str:
    """A card's identity: random, so never given again (a number is, after a logout)."""
    return secrets.token_urlsafe(9)


def of_card(chat_id: int, number: int) -> Any:
    """The WHERE clause of one card's rows, in any table keyed by (chat, card)."""
    return and_(CARD.c.chat_id == chat_id, CARD.c.number == number)


# Built once: every command reads its chat's cards.
_CARDS = select(CARD).where(CARD.c.chat_id == bindparam("chat_id")).order_by(CARD.c.number)


class Cards(Repository):
    """The cards of the chats. Calling the repository (`store.cards(chat_id)`) is `of_chat`,
    the name the handlers still use."""

    def __init__(
        self, database: Database, now: Callable[[], datetime], cipher: TokenCipher
    ) -> None:
        super().__init__(database, now)
        self._cipher = cipher

    def open(self, row: Mapping[Any, Any]) -> Card | None:
        """The card of a row of `card` (its `_mapping`, or the card's part of a joined
        row), its token decrypted (a lapsed card has none: ""); None if the token does not
        open."""
        chat_id = int(row["chat_id"])
        sealed = row["token"]
        token = ""
        if sealed is not None:
            try:
                token = self._cipher.decrypt(sealed, chat_id)
            except TokenDecryptError as exc:
                # Treated as not connected: the patron is asked to /login again.
                log.warning("stored token of chat %s cannot be opened: %s", chat_id, exc)
                return None
        return Card(
            chat_id=chat_id,
            token=token,
            token_expires_at=row["token_expires_at"],
            unique_id=row["unique_id"],
            municipality=row["municipality"],
            connected_at=row["connected_at"],
            expiry_warned=bool(row["expiry_warned"]),
            next_check=row["next_check"],
            number=int(row["number"]),
            label=row["label"],
            agency=row["agency"],
            pickup_branch=row["pickup_branch"],
            fees_known=bool(row["fees_known"]),
            order_check=row["order_check"],
            card_id=row["card_id"],
            sealed=sealed or "",
            lapsed_at=row["lapsed_at"],
        )

    async def get(self, chat_id: int, number: int = 1, *, lapsed: bool = False) -> Card | None:
        """Card `number` of the chat, whoever holds that number now; a lapsed card only when
        asked (`lapsed`)."""
        statement = select(CARD).where(of_card(chat_id, number))
        row = await self._read(lambda conn: conn.execute(statement).first())
        card = None if row is None else self.open(row._mapping)
        return card if card is None or lapsed or not card.is_lapsed else None

    async def of_chat(self, chat_id: int, *, lapsed: bool = False) -> list[Card]:
        """Every card of the chat, by number; a card whose token does not open is left out,
        and so are lapsed cards unless asked (`lapsed`)."""
        return await self._read(lambda conn: self.read(conn, chat_id, lapsed=lapsed))

    def read(self, conn: Connection, chat_id: int, *, lapsed: bool = False) -> list[Card]:
        """`of_chat`, inside a transaction."""
        rows = conn.execute(_CARDS, {"chat_id": chat_id}).all()
        return [
            card
            for row in rows
            if (card := self.open(row._mapping)) is not None and (lapsed or not card.is_lapsed)
        ]

    @staticmethod
    def take(chat_id: int, number: int | None = 1, *, holding: str | None = None) -> Executable:
        """Delete a card (None: every card of the chat), returning the rows: who deletes a
        card, has it (once). `holding`: only while it still holds that sealed token (a login
        since has replaced a refused token: the card is fresh, not refused)."""
        where = CARD.c.chat_id == chat_id if number is None else of_card(chat_id, number)
        if holding is not None:
            where = and_(where, CARD.c.token == holding)
        return delete(CARD).where(where).returning(*CARD.c)

    @staticmethod
    def lapse(chat_id: int, number: int, holding: str, now: datetime) -> Executable:
        """Mark a card lapsed and drop its token, returning the row as it was before: only
        while it still holds `holding` (a login since has replaced the refused token), so who
        lapses a card, has it (once). The sweep's lease and plan go too."""
        return (
            update(CARD)
            .where(of_card(chat_id, number), CARD.c.token == holding)
            .values(
                token=None,
                key_id=None,
                lapsed_at=now,
                expiry_warned=False,
                lease_owner=None,
                lease_until=None,
                next_check=None,
                hold_ready=False,
                first_due=None,
            )
            .returning(*CARD.c)
        )

    def connect(self, chat_id: int, number: int, link: Row[Any], now: datetime) -> Executable:
        """Make card `card` from a taken pending link, or log an existing card in again (its
        label, pick-up branch and notice state stay); returns the row."""
        # The associated data is the chat id, the same in both tables: no re-encryption.
        values: dict[str, Any] = {
            "token": link.token,
            "key_id": envelope_key_id(link.token),
            "token_expires_at": link.token_expires_at,
            "unique_id": link.unique_id,
            "municipality": link.municipality,
            "connected_at": now,
            "expiry_warned": False,
            "swept_on": None,
            "lease_owner": None,
            "lease_until": None,
            "next_check": None,  # a new login: checked by the next sweep
            "lapsed_at": None,  # a lapsed card of the same person is back
        }
        # An upsert all the same: a concurrent completion must not fail on the key.
        return (
            self._insert(CARD)
            .values(chat_id=chat_id, number=number, card_id=new_card_id(), **values)
            .on_conflict_do_update(index_elements=["chat_id", "number"], set_=values)
            .returning(*CARD.c)
        )

    async def _set(self, chat_id: int, number: int, values: dict[str, Any]) -> bool:
        statement = update(CARD).where(of_card(chat_id, number)).values(**values)
        return bool(await self._run(lambda conn: conn.execute(statement).rowcount))

    async def set_label(self, chat_id: int, number: int, label: str | None) -> bool:
        """Name the card (cut to 32 characters); False when the chat has no such card."""
        return await self._set(chat_id, number, {"label": (label or None) and label[:32]})

    async def set_agency(self, chat_id: int, number: int, agency: str | None) -> bool:
        """The card's library, as `/v3/user` names it (cut to 16 characters)."""
        return await self._set(chat_id, number, {"agency": (agency or None) and agency[:16]})

    async def set_pickup_branch(self, chat_id: int, branch: str | None, number: int = 1) -> bool:
        return await self._set(chat_id, number, {"pickup_branch": branch})

    async def expiring(self, before: datetime) -> list[Card]:
        """Cards whose token expires before `before` and that were not yet warned."""
        statement = (
            select(CARD)
            .where(
                CARD.c.lapsed_at.is_(None),
                CARD.c.token_expires_at.is_not(None),
                CARD.c.token_expires_at < before,
                CARD.c.expiry_warned == false(),
            )
            .order_by(CARD.c.chat_id, CARD.c.number)
        )
        rows = await self._run(lambda conn: conn.execute(statement).all())
        return [card for row in rows if (card := self.open(row._mapping)) is not None]

    async def expired(self, now: datetime) -> list[CardKey]:
        """Cards whose token has run out, warned or not, not yet marked lapsed: the daily job
        lapses them."""
        statement = (
            select(CARD.c.chat_id, CARD.c.number)
            .where(
                CARD.c.lapsed_at.is_(None),
                CARD.c.token_expires_at.is_not(None),
                CARD.c.token_expires_at <= now,
            )
            .order_by(CARD.c.chat_id, CARD.c.number)
        )
        rows = await self._run(lambda conn: conn.execute(statement).all())
        return [(int(row.chat_id), int(row.number)) for row in rows]

    async def mark_expiry_warned(self, chat_id: int, number: int = 1) -> None:
        await self._set(chat_id, number, {"expiry_warned": True})

    async def count(self) -> int:
        """Cards logged in (lapsed ones wait for a login: not counted as connected)."""
        statement = select(func.count()).select_from(CARD).where(CARD.c.lapsed_at.is_(None))
        return int(await self._run(lambda conn: conn.execute(statement).scalar_one()))
