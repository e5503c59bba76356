"""Everything the bot keeps, behind one small async API: `Store`, a façade over one repository
per table (docs/architecture.md, "Store").

`Store` owns the database, the token cipher and the repositories, reached by name
(`store.cards.get`, `store.chats.chat`), plus the few operations that span tables in one
transaction (a login completed, a card removed, a forgotten chat, the hourly purge, key
rotation) and the revocation of every token the store drops.
Every single-use operation is one conditional statement (`DELETE ... RETURNING` or
`UPDATE ... WHERE used_at IS NULL RETURNING`), so it stays single use with several processes
on one PostgreSQL database; there is no read-then-write.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import Row, and_, bindparam, delete, select, text, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.sql import Select

from storage.calendar import CalendarFeeds
from storage.callbacks import CALLBACK_TTL, CallbackRef, Callbacks, new_callback_id
from storage.cards import CARD_COLUMNS, MAX_CARDS, Card, CardKey, Cards, RemovedCard
from storage.chats import (
    ASKED,
    BLOCKED_CHAT_RETENTION,
    NOTICES,
    SETTINGS_COLUMNS,
    SETTINGS_JOIN,
    Chats,
    ChatSettings,
    asked_settings,
    reminder_values,
)
from storage.crypto import TokenCipher, TokenDecryptError
from storage.database import Database, execute_all, is_unavailable, utc_clock
from storage.links import Dropped, Identity, PendingLinks, dropped_tokens
from storage.logins import LIVE_LOGIN_STATES, LoginStates
from storage.notices import NoticeSeen, Seen
from storage.pace import Pace
from storage.refusals import REFUSAL_TTL, Refusal, Refusals, refusal_of
from storage.reminder_log import REMINDER_HISTORY, ReminderLog
from storage.rotation import Rotation, rotate_tokens
from storage.senders import Senders
from storage.sweeps import Sweeps
from storage.tables import (
    CALENDAR_FEED,
    CALENDAR_KEPT,
    CALLBACK_REF,
    CARD,
    CHAT,
    LOGIN_STATE,
    NOTICE_SEEN,
    REMINDER_LOG,
    RENEWAL_REFUSAL,
    SHELF_WATCH,
)
from storage.turns import Turns
from storage.watches import Watches

# The read shapes and limits callers know the store by.
__all__ = [
    "BLOCKED_CHAT_RETENTION",
    "CALLBACK_TTL",
    "LIVE_LOGIN_STATES",
    "MAX_CARDS",
    "NOTICES",
    "REFUSAL_TTL",
    "REMINDER_HISTORY",
    "CallbackRef",
    "Card",
    "CardKey",
    "ChatRead",
    "ChatSettings",
    "Identity",
    "Linked",
    "Refusal",
    "RemovedCard",
    "Seen",
    "Store",
    "is_unavailable",
    "new_callback_id",
]

log = logging.getLogger(__name__)

Revoker = Callable[[str], Awaitable[bool]]
# What `forget_chat` deletes besides the two tables holding tokens (which it revokes first).
CHAT_ONLY_TABLES = (
    LOGIN_STATE,
    CALLBACK_REF,
    REMINDER_LOG,
    RENEWAL_REFUSAL,
    CALENDAR_FEED,
    CALENDAR_KEPT,
    NOTICE_SEEN,
    SHELF_WATCH,
    CHAT,
)


def same_person(card: Any, link: Any) -> bool:
    """A login (`link`) is the person of a card's row: the same `uniqueId`, and the same
    municipality where both know one (a `uniqueId` is the platform's, across libraries)."""
    if not link.unique_id or card.unique_id != link.unique_id:
        return False
    return (
        card.municipality is None
        or link.municipality is None
        or (card.municipality == link.municipality)
    )


@dataclass(frozen=True)
class Linked:
    """A completed login: a card `added` to the chat, an existing card `refreshed` (the same
    person: its new token replaces the old, what is the card's own stays), a lapsed card
    `restored` (the same person logged in again: the card is back as it was), or nothing
    stored because the chat is `full` (`card` None; the new token was revoked)."""

    outcome: Literal["added", "refreshed", "restored", "full"]
    card: Card | None


def _chat_with_cards(refusals: bool) -> Select[Any]:
    """A chat's settings and cards (and their refusals) as one statement: SQLAlchemy's execution
    of a statement costs more than SQLite's, so a command pays it once instead of three times.

    It reads from the chat asked for, as `Chats.chat` does, so one row comes back even with no
    settings row and no card; the refusals multiply a card's row (a handful at most).
    """
    joined = SETTINGS_JOIN.outerjoin(CARD, CARD.c.chat_id == ASKED.c.chat_id)
    columns = [*SETTINGS_COLUMNS, *CARD_COLUMNS]
    if refusals:
        joined = joined.outerjoin(
            RENEWAL_REFUSAL,
            and_(
                RENEWAL_REFUSAL.c.chat_id == CARD.c.chat_id,
                RENEWAL_REFUSAL.c.number == CARD.c.number,
                RENEWAL_REFUSAL.c.refused_at > bindparam("since"),
            ),
        )
        columns += RENEWAL_REFUSAL.c
    return select(*columns).select_from(joined).order_by(CARD.c.number)


# Built once, with where each table's columns start in a row of them.
_WITH_CARDS = {refusals: _chat_with_cards(refusals) for refusals in (False, True)}
_CARD_NAMES = tuple(column.key for column in CARD_COLUMNS)
_REFUSAL_NAMES = tuple(RENEWAL_REFUSAL.c.keys())
_CARD_AT = len(SETTINGS_COLUMNS)
_REFUSAL_AT = _CARD_AT + len(_CARD_NAMES)


@dataclass(frozen=True)
class ChatRead:
    """What a command reads of its chat, in one transaction (`Store.read_chat`): its settings,
    and when asked, its cards (by number) and their refused renewals (card number -> loan id
    -> refusal); None when not asked."""

    settings: ChatSettings
    cards: list[Card] | None = None
    refusals: dict[int, dict[str, Refusal]] | None = None


class Store:
    """The bot's storage. Build with `Store.open`; all times in and out are aware UTC."""

    def __init__(
        self,
        database: Database,
        cipher: TokenCipher,
        *,
        clock: Callable[[], datetime] | None = None,
        revoke: Revoker | None = None,
    ) -> None:
        self.database = database
        # Every token the store drops without handing it to its caller (a replaced card, a
        # replaced or expired pending link, a forgotten chat's link) goes here, so none is
        # left valid at the access service; the runner sets the library client's `revoke`,
        # which is best effort and never raises.
        self.revoke_dropped = revoke
        self._cipher = cipher
        self._now = now = utc_clock(clock)

        self.chats = Chats(database, now)
        self.cards = cards = Cards(database, now, cipher)
        self.links = PendingLinks(database, now, cipher)
        self.logins = LoginStates(database, now)
        self.callbacks = Callbacks(database, now)
        self.reminder_log = ReminderLog(database, now)
        self.sweeps = Sweeps(database, now, cards)
        self.renewal_refusals = Refusals(database, now)
        self.calendar = CalendarFeeds(database, now, cipher)
        self.notices = NoticeSeen(database, now)
        self.watches = Watches(database, now)
        self.senders = Senders(database, now)
        self.turns = Turns(database, now)
        self.pace = Pace(database, now)

    @classmethod
    async def open(
        cls,
        database_url: str,
        keys: list[bytes],
        *,
        clock: Callable[[], datetime] | None = None,
    ) -> Store:
        """Engine and cipher; the schema must already be migrated (`storage.migrate`)."""
        cipher = TokenCipher(keys)
        return cls(Database(database_url), cipher, clock=clock)

    async def close(self) -> None:
        await self.database.dispose()

    async def read_chat(
        self, chat_id: int, *, cards: bool = False, refusals: bool = False
    ) -> ChatRead:
        """The chat's settings, and its cards and refusals when asked, in one statement: one
        read for what a command needs (see `_chat_with_cards`)."""
        if not cards and not refusals:
            return ChatRead(await self.chats.chat(chat_id))
        values: dict[str, Any] = {"chat_id": chat_id}
        if refusals:
            values["since"] = self._now() - REFUSAL_TTL
        rows = await self.database.fetch(_WITH_CARDS[refusals], values)
        return self._chat_read(chat_id, rows, cards=cards, refusals=refusals)

    def _chat_read(
        self, chat_id: int, rows: Sequence[Sequence[Any]], *, cards: bool, refusals: bool
    ) -> ChatRead:
        settings = asked_settings(chat_id, rows[0])
        found: list[Card] = []
        refused: dict[int, dict[str, Refusal]] = {}
        number = None
        for row in rows:
            if row[_CARD_AT] is None:  # the chat has no card
                break
            values = dict(zip(_CARD_NAMES, row[_CARD_AT:_REFUSAL_AT], strict=True))
            if values["number"] != number:
                number = values["number"]
                card = self.cards.open(values)
                if card is not None:
                    found.append(card)
            if refusals and row[_REFUSAL_AT] is not None:
                refusal = refusal_of(dict(zip(_REFUSAL_NAMES, row[_REFUSAL_AT:], strict=True)))
                refused.setdefault(int(values["number"]), {})[refusal.loan_id] = refusal
        return ChatRead(settings, found if cards else None, refused if refusals else None)

    async def ping(self) -> bool:
        try:
            await self.database.run(lambda conn: conn.execute(text("SELECT 1")))
        except (SQLAlchemyError, OSError):
            return False
        return True

    async def _revoke(self, dropped: Iterable[tuple[int, str]]) -> None:
        """Open the dropped tokens and hand each to `revoke_dropped` once."""
        for chat_id, sealed in dropped:
            try:
                token = self._cipher.decrypt(sealed, chat_id)
            except TokenDecryptError as exc:
                log.warning("dropped token of chat %s cannot be opened: %s", chat_id, exc)
                continue
            if self.revoke_dropped is None:
                log.warning("a dropped token of chat %s is not revoked: no revoker set", chat_id)
                continue
            await self.revoke_dropped(token)

    def seal(self, text: str, chat_id: int) -> str:
        """`text` sealed like tokens, bound to the chat: for what a patron typed that must be
        kept a while (a search button's words), never in plain text."""
        return self._cipher.encrypt(text, chat_id)

    def unseal(self, sealed: str, chat_id: int) -> str | None:
        """What `seal` sealed, or None when it does not open (another chat's, a removed
        key)."""
        try:
            return self._cipher.decrypt(sealed, chat_id)
        except (TokenDecryptError, ValueError) as exc:
            log.info("a sealed text of chat %s does not open: %s", chat_id, type(exc).__name__)
            return None

    async def set_reminders(
        self, chat_id: int, *, enabled: bool | None = None, days: Sequence[int] | None = None
    ) -> ChatSettings:
        """Change what is given; `days=()` goes back to the operator's REMINDER_DAYS.

        New days also clear the polling plan of the chat's cards, made for the old thresholds,
        so that the next sweep checks them again (one transaction).
        """
        values = reminder_values(enabled, days)
        if not values:
            return await self.chats.chat(chat_id)
        upsert = self.chats.upsert(chat_id, values)
        replan = (
            []
            if days is None
            else [update(CARD).where(CARD.c.chat_id == chat_id).values(next_check=None)]
        )

        def work(conn: Connection) -> ChatSettings:
            row = conn.execute(upsert).first()
            execute_all(conn, replan)
            return ChatSettings.of_row(chat_id, row)

        return await self.database.run(work)

    async def create_pending_link(
        self,
        chat_id: int,
        token: str,
        token_expires_at: datetime | None,
        identity: Identity | Mapping[str, Any] | None = None,
        ttl: timedelta = timedelta(minutes=10),
    ) -> str:
        """A one-time code that connects `token` to this chat only.

        It replaces the chat's older codes, whose tokens are revoked (`revoke_dropped`).
        """
        code, dropped = await self.links.create(chat_id, token, token_expires_at, identity, ttl)
        await self._revoke(dropped)
        return code

    async def complete_link(self, chat_id: int, code: str) -> Linked | None:
        """Connect the pending token, only from the chat that asked (`Linked` says how).

        A login of the same person as a card already in the chat (its `uniqueId`, and its
        municipality where both are known) refreshes that card, whose old token is revoked, or
        brings a lapsed card back with its name, calendar and settings; any other adds a card,
        up to `MAX_CARDS` (beyond, the new token is revoked and nothing is kept). A code from
        another chat matches nothing and stays usable for the rightful chat. The chat has one
        pending link at a time, so two logins cannot race for a card number.
        """
        now = self._now()
        taken = PendingLinks.take(chat_id, code, now)
        cards = select(
            CARD.c.number,
            CARD.c.unique_id,
            CARD.c.municipality,
            CARD.c.token,
            CARD.c.lapsed_at,
        ).where(CARD.c.chat_id == chat_id)

        def work(conn: Connection) -> tuple[str, Row[Any] | None, str | None] | None:
            link = conn.execute(taken).first()
            if link is None:
                return None
            rows = conn.execute(cards).all()
            same = [row for row in rows if same_person(row, link)]
            if same:
                number, replaced = int(same[0].number), same[0].token
                outcome = "refreshed" if same[0].lapsed_at is None else "restored"
            else:
                free = sorted(set(range(1, MAX_CARDS + 1)) - {int(row.number) for row in rows})
                if not free:
                    return "full", None, link.token
                number, outcome, replaced = free[0], "added", None
            row = conn.execute(self.cards.connect(chat_id, number, link, now)).one()
            execute_all(conn, CalendarFeeds.take_back(chat_id, number, link.unique_id))
            return outcome, row, replaced

        done = await self.database.run(work)
        if done is None:
            return None
        outcome, row, dropped = done
        if dropped is not None and (row is None or dropped != row.token):
            await self._revoke([(chat_id, dropped)])
        if row is None:
            return Linked("full", None)
        card = self.cards.open(row._mapping)
        kinds: dict[str, Literal["added", "refreshed", "restored"]] = {
            "refreshed": "refreshed",
            "restored": "restored",
        }
        return Linked(kinds.get(outcome, "added"), card)

    async def lapse_card(self, card: Card) -> Card | None:
        """The card's login lapsed (its token refused, or run out): keep the card with its
        name, calendar entries and settings, drop its token (revoked, best effort) and mark it
        lapsed. Only while it still holds the token that lapsed, so who lapses a card has it
        (once): the card as it is now, else None (a login since has replaced the token, or
        the card is lapsed or gone already)."""
        if not card.sealed:
            return None
        statement = Cards.lapse(card.chat_id, card.number, card.sealed, self._now())
        row = await self.database.run(lambda conn: conn.execute(statement).first())
        if row is None:
            return None
        await self._revoke([(card.chat_id, card.sealed)])
        return self.cards.open(row._mapping)

    async def remove_card(
        self,
        chat_id: int,
        number: int = 1,
        *,
        logout: bool = False,
        holding: Card | None = None,
        hand_over: bool = False,
    ) -> RemovedCard | None:
        """A card and everything of it, in one transaction: its row (with its calendar
        entries), its refusals and what its notices saw. Who removes a card, has it (once):
        None when it was already gone.

        `logout` (the patron's own `/logout`): the card's calendar entries go with it, and with
        the chat's last card its pending login and its calendar feed too. A card that expired
        or was refused keeps them: the patron is asked to log in again, and their calendar
        keeps its address and the card's last entries (`CalendarFeeds.keep`). A pending
        login's token is revoked here (`revoke_dropped`); the card's is returned, or None in it
        when it can no longer be decrypted (a key removed too early): the row goes all the
        same, and the caller says so. The card's token is revoked here too (`revoke_dropped`),
        unless the caller takes it to revoke itself (`hand_over`: a logout tells the patron
        what the access service answered).

        `holding` (a card whose token was refused): remove it only while it still holds that
        token. A login since has replaced it, and the fresh card stays (None is returned).
        """
        take = Cards.take(chat_id, number, holding=None if holding is None else holding.sealed)
        per_card = [
            delete(table).where(table.c.chat_id == chat_id, table.c.number == number)
            for table in (NOTICE_SEEN, RENEWAL_REFUSAL, SHELF_WATCH)
        ]
        links = PendingLinks.of_chat(chat_id)
        left = select(CARD.c.number).where(CARD.c.chat_id == chat_id).limit(1)
        feed = CalendarFeeds.of_chat(chat_id)

        now = self._now()

        def work(conn: Connection) -> tuple[Row[Any] | None, Dropped]:
            row = conn.execute(take).first()
            if row is None:
                return None, []  # gone already (with what was its), or holding a new token
            execute_all(conn, per_card)
            if not logout:
                CalendarFeeds.keep(conn, row, now)
            if not logout or conn.execute(left).first() is not None:
                return row, []
            execute_all(conn, feed)
            return row, dropped_tokens(conn, links)

        row, dropped = await self.database.run(work)
        if row is not None and row.token is not None and not hand_over:
            dropped = [*dropped, (chat_id, row.token)]
        if logout and row is not None:
            await self._truncate_log()  # the patron's own removal: gone from the files too
        await self._revoke(dropped)
        if row is None:
            return None
        opened = self.cards.open(row._mapping)
        return RemovedCard(
            chat_id=chat_id,
            token=None if opened is None else opened.token,
            token_expires_at=row.token_expires_at,
            number=number,
            label=row.label,
            was=opened,
        )

    async def forget_chat(self, chat_id: int) -> None:
        """Everything about the chat: tokens, states, links, settings, buttons, reminders.

        Tokens still stored (its cards, a pending link) are revoked (`revoke_dropped`). On
        SQLite the write-ahead log is truncated after, so the deleted rows are gone from the
        files too (SECURITY.md, data remanence).
        """
        tokens = (Cards.take(chat_id, None), PendingLinks.of_chat(chat_id))
        rest = [delete(table).where(table.c.chat_id == chat_id) for table in CHAT_ONLY_TABLES]

        def work(conn: Connection) -> Dropped:
            dropped = [token for statement in tokens for token in dropped_tokens(conn, statement)]
            execute_all(conn, rest)
            return dropped

        dropped = await self.database.run(work)
        await self._truncate_log()
        await self._revoke(dropped)

    async def _truncate_log(self) -> None:
        try:
            if not await self.database.truncate_log():
                log.info("the SQLite log was not truncated: a reader was busy (retried hourly)")
        except SQLAlchemyError as exc:
            log.warning("the SQLite log could not be truncated: %s", type(exc).__name__)

    async def purge_expired(self) -> int:
        """Delete what has outlived its table's retention: expired login states and pending
        links (revoking their tokens), buttons older than `CALLBACK_TTL`, reminder history
        older than `REMINDER_HISTORY`, renewal claims of days gone by, calendar entries kept
        `KEPT_FOR` after their login was lost (and the feeds left empty by them), and the
        settings of chats that blocked the bot `BLOCKED_CHAT_RETENTION` ago; how many rows."""
        now = self._now()
        links = PendingLinks.expired(now)
        statements = (
            LoginStates.expired(now),
            Callbacks.expired(now),
            ReminderLog.expired(now),
            NoticeSeen.expired(now),
            Chats.expired(now),
            *CalendarFeeds.expired(now),
        )

        def work(conn: Connection) -> tuple[Dropped, int]:
            dropped = dropped_tokens(conn, links)
            return dropped, sum(execute_all(conn, statements))

        dropped, removed = await self.database.run(work)
        await self._truncate_log()  # expired buttons' payloads leave the log too
        await self._revoke(dropped)
        return removed + len(dropped)

    async def rotate_keys(self) -> Rotation:
        """Re-encrypt every stored token under the newest key, in batches. Calendar entries
        are re-sealed too (not counted: they are not tokens)."""
        rotation = await rotate_tokens(self.database, self._cipher)
        await self.calendar.rotate()
        return rotation
