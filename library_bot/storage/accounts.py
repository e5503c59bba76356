"""Connected accounts (table `account`): a chat's sealed token and the two things kept from
userinfo. A token leaves the store only as `Account.token`, opened by `Accounts.open`."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import Row, delete, false, func, select, update
from sqlalchemy.sql.expression import Executable

from library_bot.storage.crypto import TokenCipher, TokenDecryptError, envelope_key_id
from library_bot.storage.database import Database, Repository
from library_bot.storage.tables import ACCOUNT

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Account:
    chat_id: int
    token: str
    token_expires_at: datetime | None
    unique_id: str | None
    municipality: str | None
    connected_at: datetime
    expiry_warned: bool
    next_check: date | None = None  # the polling plan (rules/polling.py)

    def __repr__(self) -> str:  # keep the token out of logs and tracebacks
        return f"Account(chat_id={self.chat_id}, unique_id={self.unique_id!r}, token=<hidden>)"


@dataclass(frozen=True)
class RemovedAccount:
    """What `/logout` needs: the token to revoke (None: it can no longer be decrypted)."""

    chat_id: int
    token: str | None
    token_expires_at: datetime | None

    def __repr__(self) -> str:
        return f"RemovedAccount(chat_id={self.chat_id}, token=<hidden>)"


class Accounts(Repository):
    def __init__(
        self, database: Database, now: Callable[[], datetime], cipher: TokenCipher
    ) -> None:
        super().__init__(database, now)
        self._cipher = cipher

    def open(self, row: Row[Any]) -> Account | None:
        """The account of a row, its token decrypted; None if the token does not open."""
        try:
            token = self._cipher.decrypt(row.token, int(row.chat_id))
        except TokenDecryptError as exc:
            # Treated as not connected: the patron is asked to /login again.
            log.warning("stored token of chat %s cannot be opened: %s", row.chat_id, exc)
            return None
        return Account(
            chat_id=int(row.chat_id),
            token=token,
            token_expires_at=row.token_expires_at,
            unique_id=row.unique_id,
            municipality=row.municipality,
            connected_at=row.connected_at,
            expiry_warned=bool(row.expiry_warned),
            next_check=row.next_check,
        )

    async def account(self, chat_id: int) -> Account | None:
        statement = select(ACCOUNT).where(ACCOUNT.c.chat_id == chat_id)
        row = await self._run(lambda conn: conn.execute(statement).first())
        return None if row is None else self.open(row)

    @staticmethod
    def take(chat_id: int) -> Executable:
        """Delete the chat's account, returning its row: who deletes it, has it (once)."""
        return delete(ACCOUNT).where(ACCOUNT.c.chat_id == chat_id).returning(*ACCOUNT.c)

    def connect(self, chat_id: int, link: Row[Any], now: datetime) -> Executable:
        """Make (or replace) the chat's account from a taken pending link; returns the row."""
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
        }
        # An upsert all the same: a concurrent completion must not fail on the key.
        return (
            self._insert(ACCOUNT)
            .values(chat_id=chat_id, **values)
            .on_conflict_do_update(index_elements=["chat_id"], set_=values)
            .returning(*ACCOUNT.c)
        )

    async def delete_account(self, chat_id: int) -> Account | None:
        """Remove the connection; returns it (with its token, to revoke) if there was one."""
        statement = self.take(chat_id)
        row = await self._run(lambda conn: conn.execute(statement).first())
        return None if row is None else self.open(row)

    async def accounts_expiring(self, before: datetime) -> list[Account]:
        """Accounts whose token expires before `before` and that were not yet warned."""
        statement = (
            select(ACCOUNT)
            .where(
                ACCOUNT.c.token_expires_at.is_not(None),
                ACCOUNT.c.token_expires_at < before,
                ACCOUNT.c.expiry_warned == false(),
            )
            .order_by(ACCOUNT.c.chat_id)
        )
        rows = await self._run(lambda conn: conn.execute(statement).all())
        return [account for row in rows if (account := self.open(row)) is not None]

    async def expired_accounts(self, now: datetime) -> list[int]:
        """Chats whose token has run out, warned or not: the daily job forgets them."""
        statement = (
            select(ACCOUNT.c.chat_id)
            .where(ACCOUNT.c.token_expires_at.is_not(None), ACCOUNT.c.token_expires_at <= now)
            .order_by(ACCOUNT.c.chat_id)
        )
        chat_ids = await self._run(lambda conn: conn.execute(statement).scalars().all())
        return [int(chat_id) for chat_id in chat_ids]

    async def mark_expiry_warned(self, chat_id: int) -> None:
        statement = update(ACCOUNT).where(ACCOUNT.c.chat_id == chat_id).values(expiry_warned=True)
        await self._run(lambda conn: conn.execute(statement))

    async def count_accounts(self) -> int:
        statement = select(func.count()).select_from(ACCOUNT)
        return int(await self._run(lambda conn: conn.execute(statement).scalar_one()))
