"""Calendar feeds: one secret address per chat, and each card's entries of its last status.

Only a hash of the secret is stored, so a copy of the database does not open anyone's feed;
the entries are sealed with the token keys, bound to the chat, on each card's account row.
Entries are written only for chats that have a feed: nothing is kept for patrons who never
asked for one, and closing the feed clears them.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Delete, Update, bindparam, delete, exists, insert, select, update
from sqlalchemy.engine import Connection

from storage.accounts import CardKey
from storage.crypto import TokenCipher, TokenDecryptError
from storage.database import Database, Repository
from storage.tables import ACCOUNT
from storage.tables import CALENDAR_FEED as FEED

log = logging.getLogger(__name__)


# A feed address's secret: 192 random bits, 32 URL-safe characters.
SECRET_BYTES = 24
SECRET_CHARS = 32


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class CardEntries:
    """One card's part of a feed: its number, label and entries last seen (JSON)."""

    card: int
    label: str | None
    entries: str | None


@dataclass(frozen=True)
class Feed:
    """What the feed's address opens: whose it is, each card's entries, and when the newest
    were seen."""

    chat_id: int
    cards: list[CardEntries]
    seen_at: datetime | None


# One compiled statement for a sweep's whole batch (executemany); only cards of chats with a
# feed are written.
_REMEMBER = (
    update(ACCOUNT)
    .where(
        ACCOUNT.c.chat_id == bindparam("chat"),
        ACCOUNT.c.card == bindparam("card_"),
        exists().where(FEED.c.chat_id == ACCOUNT.c.chat_id),
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
    def of_chat(chat_id: int) -> tuple[Delete, Update]:
        """Closing the chat's feed and clearing its cards' entries, for `Store` to run with
        other tables' statements."""
        clear = (
            update(ACCOUNT)
            .where(ACCOUNT.c.chat_id == chat_id)
            .values(feed_entries=None, feed_seen_at=None)
        )
        return delete(FEED).where(FEED.c.chat_id == chat_id), clear

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
        drop, clear = self.of_chat(chat_id)
        cards = self._sealed({(chat_id, card): text for card, text in entries.items()}, now)

        def work(conn: Connection) -> None:
            conn.execute(drop)
            conn.execute(clear)
            conn.execute(insert(FEED).values(**row))
            if cards:
                conn.execute(_REMEMBER, cards)

        await self._run(work)
        return secret

    async def drop(self, chat_id: int) -> bool:
        """Close the chat's address; False when it had none."""
        drop, clear = self.of_chat(chat_id)

        def work(conn: Connection) -> bool:
            conn.execute(clear)
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
        """The feed behind a secret address, or None for a wrong or closed one."""
        query = select(FEED.c.chat_id).where(FEED.c.secret_hash == secret_hash(secret))
        cards = select(
            ACCOUNT.c.card, ACCOUNT.c.label, ACCOUNT.c.feed_entries, ACCOUNT.c.feed_seen_at
        ).order_by(ACCOUNT.c.card)

        def work(conn: Connection) -> Feed | None:
            chat_id = conn.execute(query).scalar()
            if chat_id is None:
                return None
            rows = conn.execute(cards.where(ACCOUNT.c.chat_id == chat_id)).all()
            seen = [row.feed_seen_at for row in rows if row.feed_seen_at is not None]
            found = [
                CardEntries(int(row.card), row.label, self._open(int(chat_id), row.feed_entries))
                for row in rows
            ]
            return Feed(int(chat_id), found, max(seen) if seen else None)

        return await self._run(work)

    async def entries_of(self, chat_id: int, card: int = 1) -> str | None:
        """The card's feed entries (JSON), or None when the chat has no feed or none were
        seen."""
        query = select(ACCOUNT.c.feed_entries).where(
            ACCOUNT.c.chat_id == chat_id,
            ACCOUNT.c.card == card,
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
                "card_": card,
                "sealed": self._cipher.encrypt(text, chat_id),
                "now": now,
            }
            for (chat_id, card), text in entries.items()
        ]

    async def remember(self, entries: Mapping[CardKey, str]) -> None:
        """The entries just seen, for cards of chats that have a feed (others are left
        alone)."""
        if not entries:
            return
        rows = self._sealed(entries, self._now())
        await self._run(lambda conn: conn.execute(_REMEMBER, rows))

    async def rotate(self) -> int:
        """Re-seal every card's entries under the newest key; how many were."""
        query = select(ACCOUNT.c.chat_id, ACCOUNT.c.card, ACCOUNT.c.feed_entries).where(
            ACCOUNT.c.feed_entries.is_not(None)
        )
        rows = await self._run(lambda conn: conn.execute(query).all())
        statements = []
        for row in rows:
            if not self._cipher.needs_rotation(row.feed_entries):
                continue
            plain = self._open(int(row.chat_id), row.feed_entries)
            if plain is None:
                continue
            statements.append(
                update(ACCOUNT)
                .where(
                    ACCOUNT.c.chat_id == row.chat_id,
                    ACCOUNT.c.card == row.card,
                    ACCOUNT.c.feed_entries == row.feed_entries,
                )
                .values(feed_entries=self._cipher.encrypt(plain, int(row.chat_id)))
            )

        def work(conn: Connection) -> int:
            return sum(conn.execute(statement).rowcount for statement in statements)

        return await self._run(work)
