"""Everything the bot keeps, behind one small async API (docs/architecture.md, "Store").

Tokens are decrypted only here. Every single-use operation is one conditional statement
(`DELETE ... RETURNING` or `UPDATE ... WHERE used_at IS NULL RETURNING`), so it stays single
use with several processes on one PostgreSQL database; there is no read-then-write.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import partial
from typing import Any, TypeVar

from sqlalchemy import (
    Row,
    Table,
    and_,
    bindparam,
    delete,
    false,
    func,
    insert,
    not_,
    or_,
    select,
    text,
    true,
    tuple_,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.sql.expression import Executable

from storage.crypto import (
    TokenCipher,
    TokenDecryptError,
    envelope_key_id,
    hash_secret,
    new_code,
    new_state,
    normalize_code,
)
from storage.database import Database
from storage.tables import (
    AccountRow,
    CallbackRefRow,
    ChatRow,
    LoginStateRow,
    PendingLinkRow,
    ReminderLogRow,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

CALLBACK_TTL = timedelta(days=1)
ROTATE_BATCH = 200
IN_CHUNK = 500
# Attribute names that must never be stored, whatever the caller passes.
FORBIDDEN_ATTRIBUTES = frozenset({"cpr", "cprnumber", "cpr_number"})


def _table(model: type[Any]) -> Table:
    table = model.__table__
    assert isinstance(table, Table)
    return table


CHAT = _table(ChatRow)
LOGIN_STATE = _table(LoginStateRow)
PENDING_LINK = _table(PendingLinkRow)
ACCOUNT = _table(AccountRow)
CALLBACK_REF = _table(CallbackRefRow)
REMINDER_LOG = _table(ReminderLogRow)
CHAT_TABLES = (ACCOUNT, LOGIN_STATE, PENDING_LINK, CALLBACK_REF, REMINDER_LOG, CHAT)

# The statement the sweep runs once per message it delivers, built once so that each run only
# binds values: building and keying it anew cost more CPU than the transaction's own work.
_MARK_SENT = (
    update(REMINDER_LOG)
    .where(
        REMINDER_LOG.c.chat_id == bindparam("chat"),
        REMINDER_LOG.c.key.in_(bindparam("keys", expanding=True)),
    )
    .values(state="sent", sent_at=bindparam("now"))
)


@dataclass(frozen=True)
class ChatSettings:
    """A chat's preferences; the defaults apply when the chat has no row."""

    chat_id: int
    language: str | None = None
    reminders_enabled: bool = True
    reminder_days: tuple[int, ...] | None = None  # None: the operator's REMINDER_DAYS
    pickup_branch: str | None = None
    active: bool = True


@dataclass(frozen=True)
class Account:
    chat_id: int
    token: str
    token_expires_at: datetime | None
    unique_id: str | None
    municipality: str | None
    attributes: dict[str, Any]
    connected_at: datetime
    expiry_warned: bool

    def __repr__(self) -> str:  # keep the token out of logs and tracebacks
        return f"Account(chat_id={self.chat_id}, unique_id={self.unique_id!r}, token=<hidden>)"


@dataclass(frozen=True)
class CallbackRef:
    id: str
    chat_id: int
    action: str
    payload: dict[str, Any]
    created_at: datetime
    used_at: datetime | None


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _days_text(days: Sequence[int]) -> str | None:
    if any(day < 0 for day in days):
        raise ValueError("reminder days must not be negative")
    unique = sorted(set(days), reverse=True)
    return ",".join(str(day) for day in unique) if unique else None


def _days_tuple(value: str | None) -> tuple[int, ...] | None:
    if not value:
        return None
    return tuple(int(part) for part in value.split(",") if part)


def _settings(chat_id: int, row: Row[Any] | None) -> ChatSettings:
    if row is None:
        return ChatSettings(chat_id=chat_id)
    return ChatSettings(
        chat_id=chat_id,
        language=row.language,
        reminders_enabled=bool(row.reminders_enabled),
        reminder_days=_days_tuple(row.reminder_days),
        pickup_branch=row.pickup_branch,
        active=bool(row.active),
    )


def _clean_attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    """Drop the civil registration number at any depth: it must never reach the database."""
    cleaned: dict[str, Any] = {}
    for name, value in attributes.items():
        if name.lower() in FORBIDDEN_ATTRIBUTES:
            continue
        cleaned[name] = _clean_attributes(value) if isinstance(value, dict) else value
    return cleaned


def _text_attribute(attributes: dict[str, Any], *names: str) -> str | None:
    for name in names:
        value = attributes.get(name)
        if value is not None and value != "":
            return str(value)
    return None


def _execute_all(conn: Connection, statements: Iterable[Executable]) -> list[int]:
    """Run the statements in order; the rows each one changed."""
    return [max(conn.execute(statement).rowcount, 0) for statement in statements]


def _all_rows(query: Executable, conn: Connection) -> list[Row[Any]]:
    return list(conn.execute(query).all())


def _settings_of(conn: Connection, chat_ids: list[int]) -> dict[int, ChatSettings]:
    found: dict[int, ChatSettings] = {chat_id: ChatSettings(chat_id) for chat_id in chat_ids}
    if chat_ids:
        for row in conn.execute(select(CHAT).where(CHAT.c.chat_id.in_(chat_ids))).all():
            found[int(row.chat_id)] = _settings(int(row.chat_id), row)
    return found


def _reminder_states(
    conn: Connection, pairs: Sequence[tuple[int, str]]
) -> dict[int, dict[str, str]]:
    """Chat id -> key -> "intent" | "sent", for the (chat id, key) pairs that have an entry."""
    found: dict[int, dict[str, str]] = {}
    for chunk in _chunks(pairs):
        rows = conn.execute(
            select(REMINDER_LOG.c.chat_id, REMINDER_LOG.c.key, REMINDER_LOG.c.state).where(
                tuple_(REMINDER_LOG.c.chat_id, REMINDER_LOG.c.key).in_(chunk)
            )
        )
        for row in rows:
            found.setdefault(int(row.chat_id), {})[row.key] = row.state
    return found


def _plan_statements(chat_ids: Sequence[int], plans: Mapping[int, date | None]) -> list[Executable]:
    """UPDATEs setting `next_check`, grouped by day: a few days cover a whole batch."""
    by_day: dict[date | None, list[int]] = {}
    for chat_id in chat_ids:
        if chat_id in plans:
            by_day.setdefault(plans[chat_id], []).append(chat_id)
    return [
        update(ACCOUNT).where(ACCOUNT.c.chat_id.in_(chunk)).values(next_check=day)
        for day, ids in sorted(by_day.items(), key=lambda item: item[0] or date.min)
        for chunk in _chunks(ids)
    ]


def _chunks(items: Sequence[T]) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), IN_CHUNK):
        yield items[start : start + IN_CHUNK]


class Store:
    """The bot's storage. Build with `Store.open`; all times in and out are aware UTC."""

    def __init__(
        self,
        database: Database,
        cipher: TokenCipher,
        *,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.database = database
        self._run = database.run
        self._cipher = cipher
        self._clock = clock or _utcnow
        self._postgres = database.dialect == "postgresql"

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

    async def ping(self) -> bool:
        try:
            await self._run(lambda conn: conn.execute(text("SELECT 1")))
        except (SQLAlchemyError, OSError):
            return False
        return True

    def _now(self) -> datetime:
        now = self._clock()
        if now.tzinfo is None:
            raise ValueError("the store's clock must return timezone-aware datetimes")
        return now.astimezone(UTC)

    def _insert(self, table: Table) -> Any:
        # The dialect's own INSERT, for ON CONFLICT (both spell it the same way).
        return pg_insert(table) if self._postgres else sqlite_insert(table)

    # --- chat settings -----------------------------------------------------------------------

    async def chat(self, chat_id: int) -> ChatSettings:
        statement = select(CHAT).where(CHAT.c.chat_id == chat_id)
        row = await self._run(lambda conn: conn.execute(statement).first())
        return _settings(chat_id, row)

    async def _update_chat(self, chat_id: int, values: dict[str, Any]) -> ChatSettings:
        now = self._now()
        statement = (
            self._insert(CHAT)
            .values(chat_id=chat_id, created_at=now, updated_at=now, **values)
            .on_conflict_do_update(index_elements=["chat_id"], set_={**values, "updated_at": now})
            .returning(*CHAT.c)
        )
        row = await self._run(lambda conn: conn.execute(statement).first())
        return _settings(chat_id, row)

    async def set_language(self, chat_id: int, language: str | None) -> None:
        await self._update_chat(chat_id, {"language": language})

    async def set_reminders(
        self, chat_id: int, *, enabled: bool | None = None, days: Sequence[int] | None = None
    ) -> ChatSettings:
        """Change what is given; `days=()` goes back to the operator's REMINDER_DAYS."""
        values: dict[str, Any] = {}
        if enabled is not None:
            values["reminders_enabled"] = enabled
        if days is not None:
            values["reminder_days"] = _days_text(days)
        if not values:
            return await self.chat(chat_id)
        chat = await self._update_chat(chat_id, values)
        if days is not None:
            # The plan was made for the old thresholds: the next sweep checks the card again.
            await self.set_next_checks({chat_id: None})
        return chat

    async def set_pickup_branch(self, chat_id: int, branch: str | None) -> None:
        await self._update_chat(chat_id, {"pickup_branch": branch})

    async def set_active(self, chat_id: int, active: bool) -> None:
        await self._update_chat(chat_id, {"active": active})

    # --- the login handshake -----------------------------------------------------------------

    async def create_login_state(self, chat_id: int, ttl: timedelta = timedelta(minutes=10)) -> str:
        state = new_state()
        statement = insert(LOGIN_STATE).values(
            state_hash=hash_secret(state), chat_id=chat_id, expires_at=self._now() + ttl
        )
        await self._run(lambda conn: conn.execute(statement))
        return state

    async def consume_login_state(self, state: str) -> int | None:
        """The chat that asked, once; None for unknown, used and expired states alike."""
        statement = (
            delete(LOGIN_STATE)
            .where(LOGIN_STATE.c.state_hash == hash_secret(state))
            .returning(LOGIN_STATE.c.chat_id, LOGIN_STATE.c.expires_at)
        )
        row = await self._run(lambda conn: conn.execute(statement).first())
        if row is None or row.expires_at <= self._now():
            return None
        return int(row.chat_id)

    async def create_pending_link(
        self,
        chat_id: int,
        token: str,
        token_expires_at: datetime | None,
        attributes: dict[str, Any],
        ttl: timedelta = timedelta(minutes=10),
    ) -> str:
        """A one-time code that connects `token` to this chat only; replaces older codes."""
        sealed = self._cipher.encrypt(token, chat_id)
        expires_at = self._now() + ttl
        cleaned = _clean_attributes(attributes)
        for attempt in range(5):
            code = new_code()
            replace = (
                delete(PENDING_LINK).where(PENDING_LINK.c.chat_id == chat_id),
                insert(PENDING_LINK).values(
                    code_hash=hash_secret(code),
                    chat_id=chat_id,
                    token=sealed,
                    token_expires_at=token_expires_at,
                    attributes=cleaned,
                    expires_at=expires_at,
                ),
            )
            try:
                await self._run(partial(_execute_all, statements=replace))
            except IntegrityError:
                # A code collision (about 1 in 10^12); draw again.
                if attempt == 4:
                    raise
                continue
            return code
        raise AssertionError("unreachable")

    async def complete_link(self, chat_id: int, code: str) -> Account | None:
        """Connect the pending token, only from the chat that asked; replaces an older account.

        A code from another chat matches nothing and stays usable for the rightful chat.
        """
        now = self._now()
        taken = (
            delete(PENDING_LINK)
            .where(
                PENDING_LINK.c.code_hash == hash_secret(normalize_code(code)),
                PENDING_LINK.c.chat_id == chat_id,
                PENDING_LINK.c.expires_at > now,
            )
            .returning(
                PENDING_LINK.c.token, PENDING_LINK.c.token_expires_at, PENDING_LINK.c.attributes
            )
        )

        def work(conn: Connection) -> Row[Any] | None:
            link = conn.execute(taken).first()
            if link is None:
                return None
            attributes: dict[str, Any] = dict(link.attributes or {})
            # The associated data is the chat id, the same in both tables: no re-encryption.
            values: dict[str, Any] = {
                "token": link.token,
                "key_id": envelope_key_id(link.token),
                "token_expires_at": link.token_expires_at,
                "unique_id": _text_attribute(attributes, "uniqueId", "unique_id"),
                "municipality": _text_attribute(attributes, "municipality"),
                "attributes": attributes,
                "connected_at": now,
                "expiry_warned": False,
                "swept_on": None,
                "lease_owner": None,
                "lease_until": None,
                "next_check": None,  # a new login: checked by the next sweep
            }
            return conn.execute(
                self._insert(ACCOUNT)
                .values(chat_id=chat_id, **values)
                .on_conflict_do_update(index_elements=["chat_id"], set_=values)
                .returning(*ACCOUNT.c)
            ).one()

        row = await self._run(work)
        return None if row is None else self._account(row)

    def _account(self, row: Row[Any]) -> Account | None:
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
            attributes=dict(row.attributes or {}),
            connected_at=row.connected_at,
            expiry_warned=bool(row.expiry_warned),
        )

    async def account(self, chat_id: int) -> Account | None:
        statement = select(ACCOUNT).where(ACCOUNT.c.chat_id == chat_id)
        row = await self._run(lambda conn: conn.execute(statement).first())
        return None if row is None else self._account(row)

    async def delete_account(self, chat_id: int) -> Account | None:
        """Remove the connection; returns it (with its token, to revoke) if there was one."""
        statement = delete(ACCOUNT).where(ACCOUNT.c.chat_id == chat_id).returning(*ACCOUNT.c)
        row = await self._run(lambda conn: conn.execute(statement).first())
        return None if row is None else self._account(row)

    async def forget_chat(self, chat_id: int) -> None:
        """Everything about the chat: token, states, links, settings, buttons, reminders."""
        statements = [delete(table).where(table.c.chat_id == chat_id) for table in CHAT_TABLES]
        await self._run(lambda conn: _execute_all(conn, statements))

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
        return [account for row in rows if (account := self._account(row)) is not None]

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

    # --- buttons -----------------------------------------------------------------------------

    async def put_callback(self, chat_id: int, action: str, payload: dict[str, Any]) -> str:
        """A short id (16 characters) for callback_data "<prefix>:<id>" within 64 bytes."""
        [callback_id] = await self.put_callbacks_many([(chat_id, action, payload)])
        return callback_id

    async def put_callbacks(
        self, chat_id: int, buttons: Sequence[tuple[str, dict[str, Any]]]
    ) -> list[str]:
        """`put_callback` for several (action, payload) pairs in one statement, ids in order."""
        return await self.put_callbacks_many(
            [(chat_id, action, payload) for action, payload in buttons]
        )

    async def put_callbacks_many(
        self, buttons: Sequence[tuple[int, str, dict[str, Any]]]
    ) -> list[str]:
        """Buttons of several chats, (chat id, action, payload) each, in one statement."""
        if not buttons:
            return []
        ids = [secrets.token_urlsafe(12) for _ in buttons]
        now = self._now()
        rows = [
            {
                "id": callback_id,
                "chat_id": chat_id,
                "action": action,
                "payload": payload,
                "created_at": now,
            }
            for callback_id, (chat_id, action, payload) in zip(ids, buttons, strict=True)
        ]
        await self._run(lambda conn: conn.execute(insert(CALLBACK_REF), rows))
        return ids

    async def callback(self, callback_id: str, chat_id: int) -> CallbackRef | None:
        """The button's data, if it belongs to this chat and is less than a day old."""
        statement = select(CALLBACK_REF).where(
            CALLBACK_REF.c.id == callback_id,
            CALLBACK_REF.c.chat_id == chat_id,
            CALLBACK_REF.c.created_at > self._now() - CALLBACK_TTL,
        )
        row = await self._run(lambda conn: conn.execute(statement).first())
        return None if row is None else _callback(row)

    async def claim_callback(self, callback_id: str, chat_id: int) -> CallbackRef | None:
        """Mark the button used; only the first claim gets it back."""
        now = self._now()
        statement = (
            update(CALLBACK_REF)
            .where(
                CALLBACK_REF.c.id == callback_id,
                CALLBACK_REF.c.chat_id == chat_id,
                CALLBACK_REF.c.used_at.is_(None),
                CALLBACK_REF.c.created_at > now - CALLBACK_TTL,
            )
            .values(used_at=now)
            .returning(*CALLBACK_REF.c)
        )
        row = await self._run(lambda conn: conn.execute(statement).first())
        return None if row is None else _callback(row)

    # --- reminders ---------------------------------------------------------------------------

    async def claim_sweep_batch(
        self,
        day: date,
        worker: str,
        limit: int,
        lease: timedelta,
        *,
        after: int | None = None,
    ) -> list[tuple[Account, ChatSettings]]:
        """Lease up to `limit` patrons due for `day`'s sweep, in chat id order.

        Leased rows (also this worker's own) are skipped until `finish_sweep` or until the
        lease runs out, so a patron that fails is retried after its lease, not in a loop.
        `after` (the last chat id of the previous batch) starts the scan there, so a sweep
        reads each row once instead of passing over every finished one again per batch.
        """
        now = self._now()
        candidates = (
            select(ACCOUNT.c.chat_id)
            .select_from(ACCOUNT.outerjoin(CHAT, CHAT.c.chat_id == ACCOUNT.c.chat_id))
            .where(
                ACCOUNT.c.chat_id > after if after is not None else true(),
                or_(ACCOUNT.c.swept_on.is_(None), ACCOUNT.c.swept_on != day),
                or_(ACCOUNT.c.lease_until.is_(None), ACCOUNT.c.lease_until <= now),
                # The polling plan: cards planned for a later day are left alone today.
                or_(ACCOUNT.c.next_check.is_(None), ACCOUNT.c.next_check <= day),
                or_(
                    CHAT.c.chat_id.is_(None),
                    and_(CHAT.c.active == true(), CHAT.c.reminders_enabled == true()),
                ),
            )
            .order_by(ACCOUNT.c.chat_id)
            .limit(limit)
        )
        if self._postgres:
            # Rows another sweeper is claiming right now are skipped, not waited for.
            candidates = candidates.with_for_update(of=ACCOUNT, skip_locked=True)
        claim = (
            update(ACCOUNT)
            .where(ACCOUNT.c.chat_id.in_(candidates.scalar_subquery()))
            .values(lease_owner=worker, lease_until=now + lease)
            .returning(*ACCOUNT.c)
        )

        def work(conn: Connection) -> tuple[list[Row[Any]], dict[int, ChatSettings]]:
            rows = sorted(conn.execute(claim).all(), key=lambda row: int(row.chat_id))
            return rows, _settings_of(conn, [int(row.chat_id) for row in rows])

        rows, settings = await self._run(work)
        batch: list[tuple[Account, ChatSettings]] = []
        for row in rows:
            account = self._account(row)
            if account is not None:
                batch.append((account, settings[account.chat_id]))
        return batch

    async def finish_sweep(self, chat_id: int, day: date) -> None:
        await self.finish_sweeps([chat_id], day)

    async def finish_sweeps(
        self,
        chat_ids: Sequence[int],
        day: date,
        next_checks: Mapping[int, date] | None = None,
    ) -> None:
        """`finish_sweep` for many patrons in one transaction (the sweep flushes in batches).

        `next_checks` (chat id -> day) writes each card's polling plan in the same transaction,
        one UPDATE per planned day; a card without one keeps the plan it had.
        """
        unique = list(dict.fromkeys(chat_ids))
        if not unique:
            return
        statements: list[Executable] = [
            update(ACCOUNT)
            .where(ACCOUNT.c.chat_id.in_(chunk))
            .values(swept_on=day, lease_owner=None, lease_until=None)
            for chunk in _chunks(unique)
        ]
        statements.extend(_plan_statements(unique, next_checks or {}))
        await self._run(lambda conn: _execute_all(conn, statements))

    async def set_next_checks(self, next_checks: Mapping[int, date | None]) -> None:
        """Replace the polling plan of these cards (None: the next sweep checks them)."""
        statements = _plan_statements(list(next_checks), next_checks)
        if statements:
            await self._run(lambda conn: _execute_all(conn, statements))

    async def begin_reminders(self, chat_id: int, keys: Sequence[str]) -> dict[str, str]:
        """`reminder_states` and then `record_intents` for the keys not yet sent, in one
        transaction; returns the states as they were before (key -> "intent" | "sent")."""
        return (await self.begin_reminders_many({chat_id: keys})).get(chat_id, {})

    async def begin_reminders_many(
        self, keys: Mapping[int, Sequence[str]]
    ) -> dict[int, dict[str, str]]:
        """`begin_reminders` for several chats in one transaction (chat id -> states)."""
        wanted = {chat_id: list(dict.fromkeys(chat_keys)) for chat_id, chat_keys in keys.items()}
        pairs = [(chat_id, key) for chat_id, chat_keys in wanted.items() for key in chat_keys]
        if not pairs:
            return {}

        def work(conn: Connection) -> dict[int, dict[str, str]]:
            found = _reminder_states(conn, pairs)
            pending = [
                (chat_id, key)
                for chat_id, key in pairs
                if found.get(chat_id, {}).get(key) != "sent"
            ]
            self._record_intents(conn, pending)
            return found

        return await self._run(work)

    async def reminder_states(self, chat_id: int, keys: Sequence[str]) -> dict[str, str]:
        """Key -> "intent" | "sent", for the keys that have an entry."""
        pairs = [(chat_id, key) for key in dict.fromkeys(keys)]
        found = await self._run(lambda conn: _reminder_states(conn, pairs))
        return found.get(chat_id, {})

    async def record_intents(self, chat_id: int, keys: Sequence[str]) -> None:
        """Note that these reminders are about to be sent; existing entries are untouched."""
        pairs = [(chat_id, key) for key in dict.fromkeys(keys)]
        await self._run(lambda conn: self._record_intents(conn, pairs))

    def _record_intents(self, conn: Connection, pairs: Sequence[tuple[int, str]]) -> None:
        now = self._now()
        for chunk in _chunks(pairs):
            rows = [
                {"chat_id": chat_id, "key": key, "state": "intent", "created_at": now}
                for chat_id, key in chunk
            ]
            conn.execute(
                self._insert(REMINDER_LOG)
                .values(rows)
                .on_conflict_do_nothing(index_elements=["chat_id", "key"])
            )

    async def mark_sent(self, chat_id: int, keys: Sequence[str]) -> None:
        unique = list(dict.fromkeys(keys))
        if not unique:
            return
        now = self._now()

        def work(conn: Connection) -> None:
            for chunk in _chunks(unique):
                # The intents are there (the sweep records them first), so this is an UPDATE;
                # a key sent without an intent is inserted afterwards.
                matched = conn.execute(
                    _MARK_SENT, {"chat": chat_id, "keys": list(chunk), "now": now}
                ).rowcount
                if matched < len(chunk):
                    conn.execute(
                        self._insert(REMINDER_LOG)
                        .values(
                            [
                                {
                                    "chat_id": chat_id,
                                    "key": key,
                                    "state": "sent",
                                    "created_at": now,
                                    "sent_at": now,
                                }
                                for key in chunk
                            ]
                        )
                        .on_conflict_do_nothing(index_elements=["chat_id", "key"])
                    )

        await self._run(work)

    # --- housekeeping ------------------------------------------------------------------------

    async def purge_expired(self) -> int:
        """Delete expired login states and pending links, and buttons older than a day."""
        now = self._now()
        statements = (
            delete(LOGIN_STATE).where(LOGIN_STATE.c.expires_at <= now),
            delete(PENDING_LINK).where(PENDING_LINK.c.expires_at <= now),
            delete(CALLBACK_REF).where(CALLBACK_REF.c.created_at <= now - CALLBACK_TTL),
        )
        return sum(await self._run(lambda conn: _execute_all(conn, statements)))

    async def rotate_keys(self) -> int:
        """Re-encrypt every stored token under the newest key, in batches; how many were."""
        rotated = 0
        for table, key_column in ((ACCOUNT, "chat_id"), (PENDING_LINK, "code_hash")):
            rotated += await self._rotate_table(table, key_column)
        return rotated

    async def _rotate_table(self, table: Table, key_column: str) -> int:
        rotated = 0
        pk = table.c[key_column]
        last: Any = None
        while True:
            query = (
                select(pk.label("pk"), table.c.chat_id, table.c.token)
                .where(not_(table.c.token.startswith(self._cipher.current_prefix)))
                .order_by(pk)
                .limit(ROTATE_BATCH)
            )
            if last is not None:
                query = query.where(pk > last)
            rows = await self._run(partial(_all_rows, query))
            if not rows:
                return rotated
            updates = []
            for row in rows:
                try:
                    plain = self._cipher.decrypt(row.token, int(row.chat_id))
                except TokenDecryptError as exc:
                    log.warning("cannot rotate the token of chat %s: %s", row.chat_id, exc)
                    continue
                sealed = self._cipher.encrypt(plain, int(row.chat_id))
                values: dict[str, Any] = {"token": sealed}
                if "key_id" in table.c:
                    values["key_id"] = self._cipher.current_key_id
                # Only if unchanged meanwhile: a concurrent re-login must not be undone.
                updates.append(
                    update(table).where(pk == row.pk, table.c.token == row.token).values(**values)
                )
            rotated += sum(await self._run(partial(_execute_all, statements=updates)))
            last = rows[-1].pk


def _callback(row: Row[Any]) -> CallbackRef:
    return CallbackRef(
        id=row.id,
        chat_id=int(row.chat_id),
        action=row.action,
        payload=dict(row.payload or {}),
        created_at=row.created_at,
        used_at=row.used_at,
    )
