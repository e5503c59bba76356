"""Calendar feeds: one secret address per chat, and the entries of the last status seen.

Only a hash of the secret is stored, so a copy of the database does not open anyone's feed;
the entries are sealed with the token keys, bound to the chat. Entries are written only for
chats that have a feed: nothing is kept for patrons who never asked for one.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Delete, bindparam, delete, insert, select, update
from sqlalchemy.engine import Connection

from library_bot.storage.crypto import TokenCipher, TokenDecryptError
from library_bot.storage.database import Database, Repository
from library_bot.storage.tables import CALENDAR_FEED as FEED

log = logging.getLogger(__name__)


# A feed address's secret: 192 random bits, 32 URL-safe characters.
SECRET_BYTES = 24
SECRET_CHARS = 32


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class Feed:
    """What the feed's address opens: whose it is, and the entries last seen (JSON)."""

    chat_id: int
    entries: str | None
    seen_at: datetime | None


# One compiled statement for a sweep's whole batch (executemany).
_REMEMBER = (
    update(FEED)
    .where(FEED.c.chat_id == bindparam("chat"))
    .values(entries=bindparam("sealed"), seen_at=bindparam("now"))
)


class CalendarFeeds(Repository):
    def __init__(
        self, database: Database, now: Callable[[], datetime], cipher: TokenCipher
    ) -> None:
        super().__init__(database, now)
        self._cipher = cipher

    @staticmethod
    def of_chat(chat_id: int) -> Delete:
        """Closing the chat's feed, for `Store` to run with other tables' statements."""
        return delete(FEED).where(FEED.c.chat_id == chat_id)

    async def create(self, chat_id: int, entries: str | None) -> str:
        """A new secret address for the chat (an older one stops working); the raw secret."""
        secret = secrets.token_urlsafe(SECRET_BYTES)
        now = self._now()
        row: dict[str, Any] = {
            "chat_id": chat_id,
            "secret_hash": secret_hash(secret),
            "entries": None if entries is None else self._cipher.encrypt(entries, chat_id),
            "seen_at": None if entries is None else now,
            "created_at": now,
        }

        def work(conn: Connection) -> None:
            conn.execute(delete(FEED).where(FEED.c.chat_id == chat_id))
            conn.execute(insert(FEED).values(**row))

        await self._run(work)
        return secret

    async def drop(self, chat_id: int) -> bool:
        """Close the chat's address; False when it had none."""

        def work(conn: Connection) -> bool:
            return bool(conn.execute(delete(FEED).where(FEED.c.chat_id == chat_id)).rowcount)

        return await self._run(work)

    async def open(self, secret: str) -> Feed | None:
        """The feed behind a secret address, or None for a wrong or closed one."""
        query = select(FEED.c.chat_id, FEED.c.entries, FEED.c.seen_at).where(
            FEED.c.secret_hash == secret_hash(secret)
        )
        row = await self._run(lambda conn: conn.execute(query).first())
        if row is None:
            return None
        chat_id = int(row.chat_id)
        entries = None
        if row.entries is not None:
            try:
                entries = self._cipher.decrypt(row.entries, chat_id)
            except TokenDecryptError as exc:
                log.warning("calendar entries of chat %s do not open: %s", chat_id, exc)
        return Feed(chat_id, entries, row.seen_at)

    async def entries_of(self, chat_id: int) -> str | None:
        """The chat's feed entries (JSON), or None when it has no feed or none were seen."""
        query = select(FEED.c.entries).where(FEED.c.chat_id == chat_id)
        sealed = await self._run(lambda conn: conn.execute(query).scalar())
        if sealed is None:
            return None
        try:
            return self._cipher.decrypt(sealed, chat_id)
        except TokenDecryptError as exc:
            log.warning("calendar entries of chat %s do not open: %s", chat_id, exc)
            return None

    async def with_feeds(self, chat_ids: Iterable[int]) -> set[int]:
        """Which of these chats have a feed (one query for a sweep's batch)."""
        wanted = list(chat_ids)
        if not wanted:
            return set()
        query = select(FEED.c.chat_id).where(FEED.c.chat_id.in_(wanted))
        return {int(chat) for chat in await self._run(lambda c: c.execute(query).scalars().all())}

    async def remember(self, entries: Mapping[int, str]) -> None:
        """The entries just seen, for chats that have a feed (others are left alone)."""
        if not entries:
            return
        now = self._now()
        rows = [
            {"chat": chat_id, "sealed": self._cipher.encrypt(text, chat_id), "now": now}
            for chat_id, text in entries.items()
        ]
        await self._run(lambda conn: conn.execute(_REMEMBER, rows))

    async def rotate(self) -> int:
        """Re-seal every feed's entries under the newest key; how many were."""
        query = select(FEED.c.chat_id, FEED.c.entries).where(FEED.c.entries.is_not(None))
        rows = await self._run(lambda conn: conn.execute(query).all())
        statements = []
        for row in rows:
            if not self._cipher.needs_rotation(row.entries):
                continue
            try:
                plain = self._cipher.decrypt(row.entries, int(row.chat_id))
            except TokenDecryptError as exc:
                log.warning("cannot rotate the calendar of chat %s: %s", row.chat_id, exc)
                continue
            statements.append(
                update(FEED)
                .where(FEED.c.chat_id == row.chat_id, FEED.c.entries == row.entries)
                .values(entries=self._cipher.encrypt(plain, int(row.chat_id)))
            )

        def work(conn: Connection) -> int:
            return sum(conn.execute(statement).rowcount for statement in statements)

        return await self._run(work)
