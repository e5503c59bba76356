"""Pending links (table `pending_link`): a token waiting for the one-time code that connects it
to the chat that asked. The code is stored only as its SHA-256, the token only sealed."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import delete, insert
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.expression import Executable

from storage.crypto import TokenCipher, hash_secret, new_code, normalize_code
from storage.database import Database, Repository
from storage.tables import PENDING_LINK

# The most a userinfo value is allowed to take in the database (the columns' sizes).
UNIQUE_ID_MAX = 200
MUNICIPALITY_MAX = 16
CODE_ATTEMPTS = 5

Dropped = list[tuple[int, str]]
"""(chat id, sealed token) of rows deleted with their token: the tokens `Store` revokes."""


class Identity(Protocol):
    """All that is kept about a patron from userinfo (`bot.library.models.Userinfo` is
    one)."""

    @property
    def unique_id(self) -> str | None: ...

    @property
    def municipality(self) -> str | None: ...


def _short_text(value: object, limit: int) -> str | None:
    return value if isinstance(value, str) and 0 < len(value) <= limit else None


def patron_identity(
    identity: Identity | Mapping[str, Any] | None,
) -> tuple[str | None, str | None]:
    """(`uniqueId`, `municipality`) only: nothing else from userinfo is ever stored.

    A mapping (userinfo's wire names) is accepted and reduced to the two at once.
    """
    if identity is None:
        return None, None
    if isinstance(identity, Mapping):
        unique_id, municipality = identity.get("uniqueId"), identity.get("municipality")
    else:
        unique_id, municipality = identity.unique_id, identity.municipality
    return _short_text(unique_id, UNIQUE_ID_MAX), _short_text(municipality, MUNICIPALITY_MAX)


def dropped_tokens(conn: Connection, delete_returning: Executable) -> Dropped:
    """The tokens a `DELETE ... RETURNING chat_id, token` removed (a lapsed card had none)."""
    return [
        (int(row.chat_id), row.token)
        for row in conn.execute(delete_returning)
        if row.token is not None
    ]


class PendingLinks(Repository):
    def __init__(
        self, database: Database, now: Callable[[], datetime], cipher: TokenCipher
    ) -> None:
        super().__init__(database, now)
        self._cipher = cipher

    async def create(
        self,
        chat_id: int,
        token: str,
        token_expires_at: datetime | None,
        identity: Identity | Mapping[str, Any] | None,
        ttl: timedelta,
    ) -> tuple[str, Dropped]:
        """A new code for the chat, replacing its older ones; the code and the tokens dropped."""
        sealed = self._cipher.encrypt(token, chat_id)
        expires_at = self._now() + ttl
        unique_id, municipality = patron_identity(identity)
        replaced = self.of_chat(chat_id)
        for attempt in range(CODE_ATTEMPTS):
            code = new_code()
            add = insert(PENDING_LINK).values(
                code_hash=hash_secret(code),
                chat_id=chat_id,
                token=sealed,
                token_expires_at=token_expires_at,
                unique_id=unique_id,
                municipality=municipality,
                expires_at=expires_at,
            )

            def work(conn: Connection, add: Executable = add) -> Dropped:
                dropped = dropped_tokens(conn, replaced)
                conn.execute(add)
                return dropped

            try:
                return code, await self._run(work)
            except IntegrityError:
                # A code collision (about 1 in 10^12); draw again.
                if attempt == CODE_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    @staticmethod
    def take(chat_id: int, code: str, now: datetime) -> Executable:
        """Delete the live link of this code and chat, returning what the card needs.

        A code from another chat matches nothing and stays usable for the rightful chat.
        """
        return (
            delete(PENDING_LINK)
            .where(
                PENDING_LINK.c.code_hash == hash_secret(normalize_code(code)),
                PENDING_LINK.c.chat_id == chat_id,
                PENDING_LINK.c.expires_at > now,
            )
            .returning(
                PENDING_LINK.c.token,
                PENDING_LINK.c.token_expires_at,
                PENDING_LINK.c.unique_id,
                PENDING_LINK.c.municipality,
            )
        )

    @staticmethod
    def of_chat(chat_id: int) -> Executable:
        """Delete the chat's links, returning their tokens (for `dropped_tokens`)."""
        return (
            delete(PENDING_LINK)
            .where(PENDING_LINK.c.chat_id == chat_id)
            .returning(PENDING_LINK.c.chat_id, PENDING_LINK.c.token)
        )

    @staticmethod
    def expired(now: datetime) -> Executable:
        """Delete the links whose code ran out, returning their tokens (`dropped_tokens`)."""
        return (
            delete(PENDING_LINK)
            .where(PENDING_LINK.c.expires_at <= now)
            .returning(PENDING_LINK.c.chat_id, PENDING_LINK.c.token)
        )
