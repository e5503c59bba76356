"""Calendar feeds: one secret address per chat, and each card's entries of its last status.

Only a hash of the secret is stored, so a copy of the database does not open anyone's feed;
the entries are sealed with the token keys, bound to the chat, on each card's row.
Entries are written only for chats that have a feed: nothing is kept for patrons who never
asked for one, and closing the feed clears them.

A card whose login lapsed (expired or refused) stays, lapsed, with its entries on its row: the
feed keeps serving them (saying that the login must be renewed) until the same person logs in
again. Entries of cards removed before lapsed cards were kept (migration 0015) are in
`calendar_kept`, served for at most `KEPT_FOR`; a feed left with neither cards nor kept
entries is closed.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Delete, Row, Update, and_, bindparam, delete, exists, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.expression import Executable

from storage.cards import CardKey
from storage.crypto import TokenCipher, TokenDecryptError
from storage.database import Database, Repository
from storage.tables import CALENDAR_FEED as FEED
from storage.tables import CALENDAR_KEPT as KEPT
from storage.tables import CARD

log = logging.getLogger(__name__)


# A feed address's secret: 192 random bits, 32 URL-safe characters.
SECRET_BYTES = 24
SECRET_CHARS = 32
# How long a feed serves a card's entries after its login was lost.
KEPT_FOR = timedelta(days=30)


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def unique_hash(unique_id: str | None) -> str | None:
    return None if not unique_id else hashlib.sha256(unique_id.encode()).hexdigest()


@dataclass(frozen=True)
class CardEntries:
    """One card's part of a feed: its number, label and entries last seen (JSON)."""

    number: int
    label: str | None
    entries: str | None
    # When the card's login was lost (its entries are the last known); None: a live card.
    lost_at: datetime | None = None


@dataclass(frozen=True)
class Feed:
    """What the feed's address opens: whose it is, each card's entries, and when the newest
    were seen."""

    chat_id: int
    cards: list[CardEntries]
    seen_at: datetime | None


# One compiled statement for a sweep's whole batch (executemany); only cards of chats with a
# feed are written. The number's bind is `number_`: an UPDATE keeps `number` for its SET.
_REMEMBER = (
    update(CARD)
    .where(
        CARD.c.chat_id == bindparam("chat"),
        CARD.c.number == bindparam("number_"),
        exists().where(FEED.c.chat_id == CARD.c.chat_id),
    )
    .values(feed_entries=bindparam("sealed"), feed_seen_at=bindparam("now"))
)


class CalendarFeeds(Repository):
    def __init__(
        self, database: Database, now: Callable[[], datetime], cipher: TokenCipher
    ) -> None:
        super().__init__(database, now)
        self._cipher = cipher

    @staticmethod
    def of_chat(chat_id: int) -> tuple[Delete, Update, Delete]:
        """Closing the chat's feed and clearing its cards' entries, live and kept, for `Store`
        to run with other tables' statements."""
        clear = (
            update(CARD)
            .where(CARD.c.chat_id == chat_id)
            .values(feed_entries=None, feed_seen_at=None)
        )
        kept = delete(KEPT).where(KEPT.c.chat_id == chat_id)
        return delete(FEED).where(FEED.c.chat_id == chat_id), clear, kept

    @staticmethod
    def keep(conn: Connection, row: Row[Any], now: datetime) -> None:
        """In `Store.remove_card`'s transaction: the entries of a card whose login was lost
        (its deleted row), kept when the chat has a feed."""
        chat_id = int(row.chat_id)
        if conn.execute(select(FEED.c.chat_id).where(FEED.c.chat_id == chat_id)).first() is None:
            return
        conn.execute(delete(KEPT).where(KEPT.c.chat_id == chat_id, KEPT.c.number == row.number))
        conn.execute(
            insert(KEPT).values(
                chat_id=chat_id,
                number=row.number,
                unique_hash=unique_hash(row.unique_id),
                label=row.label,
                entries=row.feed_entries,
                seen_at=row.feed_seen_at,
                lost_at=now,
            )
        )

    @staticmethod
    def take_back(chat_id: int, number: int, unique_id: str | None) -> list[Executable]:
        """In `Store.complete_link`'s transaction: a card logged in again takes back the
        entries kept for the same person, so the feed goes on without a gap."""
        digest = unique_hash(unique_id)
        if digest is None:
            return []
        mine = and_(KEPT.c.chat_id == chat_id, KEPT.c.unique_hash == digest)
        latest = select(KEPT).where(mine).order_by(KEPT.c.lost_at.desc()).limit(1)
        move = (
            update(CARD)
            .where(
                CARD.c.chat_id == chat_id,
                CARD.c.number == number,
                CARD.c.feed_entries.is_(None),
                exists().where(mine, KEPT.c.entries.is_not(None)),
            )
            .values(
                feed_entries=latest.with_only_columns(KEPT.c.entries).scalar_subquery(),
                feed_seen_at=latest.with_only_columns(KEPT.c.seen_at).scalar_subquery(),
            )
        )
        return [move, delete(KEPT).where(mine)]

    @staticmethod
    def expired(now: datetime) -> list[Executable]:
        """For the hourly purge: kept entries `KEPT_FOR` after their login was lost, and the
        feeds then left with neither a card nor kept entries (30 days without a login)."""
        cards = exists().where(CARD.c.chat_id == FEED.c.chat_id)
        kept = exists().where(KEPT.c.chat_id == FEED.c.chat_id)
        return [
            delete(KEPT).where(KEPT.c.lost_at <= now - KEPT_FOR),
            delete(FEED).where(~cards, ~kept),
        ]

    async def create(self, chat_id: int, entries: Mapping[int, str]) -> str:
        """A new secret address for the chat (an older one stops working), with each card's
        entries (card -> JSON) just seen; the raw secret."""
        secret = secrets.token_urlsafe(SECRET_BYTES)
        now = self._now()
        row: dict[str, Any] = {
            "chat_id": chat_id,
            "secret_hash": secret_hash(secret),
            "created_at": now,
        }
        # A new address keeps the entries of cards waiting for a login: they are still the
        # patron's.
        drop, clear, _ = self.of_chat(chat_id)
        cards = self._sealed({(chat_id, number): text for number, text in entries.items()}, now)

        def work(conn: Connection) -> None:
            conn.execute(drop)
            conn.execute(clear)
            conn.execute(insert(FEED).values(**row))
            if cards:
                conn.execute(_REMEMBER, cards)

        await self._run(work)
        return secret

    async def drop(self, chat_id: int) -> bool:
        """Close the chat's address (and forget every entry kept for it); False when it had
        none."""
        drop, clear, kept = self.of_chat(chat_id)

        def work(conn: Connection) -> bool:
            conn.execute(clear)
            conn.execute(kept)
            return bool(conn.execute(drop).rowcount)

        return await self._run(work)

    def _open(self, chat_id: int, sealed: str | None) -> str | None:
        if sealed is None:
            return None
        try:
            return self._cipher.decrypt(sealed, chat_id)
        except TokenDecryptError as exc:
            log.warning("calendar entries of chat %s do not open: %s", chat_id, exc)
            return None

    async def open(self, secret: str) -> Feed | None:
        """The feed behind a secret address, or None for a wrong or closed one (also one left
        `KEPT_FOR` without a login, before the purge deletes it)."""
        query = select(FEED.c.chat_id).where(FEED.c.secret_hash == secret_hash(secret))
        cards = select(
            CARD.c.number,
            CARD.c.label,
            CARD.c.feed_entries,
            CARD.c.feed_seen_at,
            CARD.c.lapsed_at,
        ).order_by(CARD.c.number)
        kept = select(KEPT).where(KEPT.c.lost_at > self._now() - KEPT_FOR).order_by(KEPT.c.number)

        def work(conn: Connection) -> Feed | None:
            chat_id = conn.execute(query).scalar()
            if chat_id is None:
                return None
            chat = int(chat_id)
            rows = conn.execute(cards.where(CARD.c.chat_id == chat)).all()
            lost = conn.execute(kept.where(KEPT.c.chat_id == chat)).all()
            if not rows and not lost:
                return None
            seen = [row.feed_seen_at for row in rows if row.feed_seen_at is not None]
            seen += [row.seen_at for row in lost if row.seen_at is not None]
            found = [
                CardEntries(
                    int(row.number), row.label, self._open(chat, row.feed_entries), row.lapsed_at
                )
                for row in rows
            ]
            found += [
                CardEntries(int(row.number), row.label, self._open(chat, row.entries), row.lost_at)
                for row in lost
            ]
            return Feed(chat, found, max(seen) if seen else None)

        return await self._run(work)

    async def entries_of(self, chat_id: int, number: int = 1) -> str | None:
        """The card's feed entries (JSON), or None when the chat has no feed or none were
        seen."""
        query = select(CARD.c.feed_entries).where(
            CARD.c.chat_id == chat_id,
            CARD.c.number == number,
            exists().where(FEED.c.chat_id == chat_id),
        )
        return self._open(chat_id, await self._run(lambda conn: conn.execute(query).scalar()))

    async def with_feeds(self, chat_ids: Iterable[int]) -> set[int]:
        """Which of these chats have a feed (one query for a sweep's batch)."""
        wanted = list(dict.fromkeys(chat_ids))
        if not wanted:
            return set()
        query = select(FEED.c.chat_id).where(FEED.c.chat_id.in_(wanted))
        return {int(chat) for chat in await self._run(lambda c: c.execute(query).scalars().all())}

    def _sealed(self, entries: Mapping[CardKey, str], now: datetime) -> list[dict[str, Any]]:
        return [
            {
                "chat": chat_id,
                "number_": number,
                "sealed": self._cipher.encrypt(text, chat_id),
                "now": now,
            }
            for (chat_id, number), text in entries.items()
        ]

    async def remember(self, entries: Mapping[CardKey, str]) -> None:
        """The entries just seen, for cards of chats that have a feed (others are left
        alone)."""
        if not entries:
            return
        rows = self._sealed(entries, self._now())
        await self._run(lambda conn: conn.execute(_REMEMBER, rows))

    async def rotate(self) -> int:
        """Re-seal every card's entries (live and kept) under the newest key; how many were."""
        live = select(CARD.c.chat_id, CARD.c.number, CARD.c.feed_entries.label("sealed")).where(
            CARD.c.feed_entries.is_not(None)
        )
        kept = select(KEPT.c.chat_id, KEPT.c.number, KEPT.c.entries.label("sealed")).where(
            KEPT.c.entries.is_not(None)
        )

        def read(conn: Connection) -> tuple[Any, Any]:
            return conn.execute(live).all(), conn.execute(kept).all()

        live_rows, kept_rows = await self._run(read)
        statements = [
            update(table)
            .where(
                table.c.chat_id == row.chat_id, table.c.number == row.number, column == row.sealed
            )
            .values({column.name: self._cipher.encrypt(plain, int(row.chat_id))})
            for table, column, rows in (
                (CARD, CARD.c.feed_entries, live_rows),
                (KEPT, KEPT.c.entries, kept_rows),
            )
            for row in rows
            if self._cipher.needs_rotation(row.sealed)
            and (plain := self._open(int(row.chat_id), row.sealed)) is not None
        ]

        def work(conn: Connection) -> int:
            return sum(conn.execute(statement).rowcount for statement in statements)

        return await self._run(work)
