"""Everything the bot keeps, behind one small async API (docs/architecture.md, "Store").

Tokens are decrypted only here. Every single-use operation is one conditional statement
(`DELETE ... RETURNING` or `UPDATE ... WHERE used_at IS NULL RETURNING`), so it stays single
use with several processes on one PostgreSQL database; there is no read-then-write.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import partial
from typing import Any, Protocol, TypeVar

from sqlalchemy import (
    Row,
    Table,
    and_,
    bindparam,
    delete,
    exists,
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

from library_bot.storage.calendar import FEED, CalendarFeeds
from library_bot.storage.crypto import (
    TokenCipher,
    TokenDecryptError,
    envelope_key_id,
    hash_secret,
    new_code,
    new_state,
    normalize_code,
)
from library_bot.storage.database import Database
from library_bot.storage.tables import (
    AccountRow,
    CallbackRefRow,
    ChatRow,
    LoginStateRow,
    PendingLinkRow,
    ReminderLogRow,
    RenewalRefusalRow,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

CALLBACK_TTL = timedelta(days=1)
# Login links a chat keeps usable at once (each a login_state row for 10 minutes); a newer
# /login drops the oldest.
LIVE_LOGIN_STATES = 5
# Reminder history: long enough that a loan or hold is not reminded twice for the same due
# date or pick-up; a loan still overdue after this gets its overdue reminder once more.
REMINDER_HISTORY = timedelta(days=90)
# A chat that blocked the bot cannot send /forget: its settings go this long after, once it
# has no account left (a blocked chat's token runs out within thirty days).
BLOCKED_CHAT_RETENTION = timedelta(days=90)
ROTATE_BATCH = 200
IN_CHUNK = 500
# The most a userinfo value is allowed to take in the database (the columns' sizes).
UNIQUE_ID_MAX = 200
MUNICIPALITY_MAX = 16


class Identity(Protocol):
    """All that is kept about a patron from userinfo (`library_bot.library.models.Userinfo` is
    one)."""

    @property
    def unique_id(self) -> str | None: ...

    @property
    def municipality(self) -> str | None: ...


@dataclass(frozen=True)
class PatronIdentity:
    unique_id: str | None = None
    municipality: str | None = None


@dataclass(frozen=True)
class RemovedAccount:
    """What `/logout` needs: the token to revoke (None: it can no longer be decrypted)."""

    chat_id: int
    token: str | None
    token_expires_at: datetime | None

    def __repr__(self) -> str:
        return f"RemovedAccount(chat_id={self.chat_id}, token=<hidden>)"


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
RENEWAL_REFUSAL = _table(RenewalRefusalRow)
CHAT_TABLES = (
    FEED,
    ACCOUNT,
    LOGIN_STATE,
    PENDING_LINK,
    CALLBACK_REF,
    REMINDER_LOG,
    RENEWAL_REFUSAL,
    CHAT,
)
# How long a refused renewal is remembered (while the due date stays the same): after that
# the bot offers the loan again, as a reservation may have been cancelled meanwhile.
REFUSAL_TTL = timedelta(days=7)

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
    telegram_language: str | None = None  # Telegram's language_code, as last seen
    fresh_login: bool = False  # ask the access service for a fresh login next time
    account_ended: str | None = None  # "expired" | "logged_out" | "rejected"
    # Whether the chat has a calendar feed to keep current (read by `Store.chat` only).
    has_calendar: bool = False

    def thresholds(self, operator_days: Sequence[int]) -> tuple[int, ...]:
        """The reminder thresholds in force, largest first: the chat's own, else the operator's
        `REMINDER_DAYS` (the one rule the sweep, the polling plan, /reminders and "renew all"
        share)."""
        days = self.reminder_days if self.reminder_days is not None else operator_days
        return tuple(sorted(set(days), reverse=True))


@dataclass(frozen=True)
class Refusal:
    """A renewal the library refused: the reason as sent, for the loan's due date then."""

    loan_id: str
    due: str
    reason: str
    refused_at: datetime


@dataclass(frozen=True)
class Account:
    chat_id: int
    token: str
    token_expires_at: datetime | None
    unique_id: str | None
    municipality: str | None
    connected_at: datetime
    expiry_warned: bool
    next_check: date | None = None  # the polling plan (bot/polling.py)

    def __repr__(self) -> str:  # keep the token out of logs and tracebacks
        return f"Account(chat_id={self.chat_id}, unique_id={self.unique_id!r}, token=<hidden>)"


def new_callback_id() -> str:
    """A button's stored id: 96 random bits, 16 characters of callback data."""
    return secrets.token_urlsafe(12)


@dataclass(frozen=True)
class CallbackRef:
    id: str
    chat_id: int
    user_id: int
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
        telegram_language=row.telegram_language,
        fresh_login=bool(row.fresh_login),
        account_ended=row.account_ended,
        has_calendar=bool(row._mapping.get("has_calendar", False)),
    )


def _short_text(value: object, limit: int) -> str | None:
    return value if isinstance(value, str) and 0 < len(value) <= limit else None


def _identity(identity: Identity | Mapping[str, Any] | None) -> PatronIdentity:
    """`uniqueId` and `municipality` only: nothing else from userinfo is ever stored.

    A mapping (userinfo's wire names) is accepted and reduced to the two at once.
    """
    if identity is None:
        return PatronIdentity()
    if isinstance(identity, Mapping):
        unique_id, municipality = identity.get("uniqueId"), identity.get("municipality")
    else:
        unique_id, municipality = identity.unique_id, identity.municipality
    return PatronIdentity(
        _short_text(unique_id, UNIQUE_ID_MAX), _short_text(municipality, MUNICIPALITY_MAX)
    )


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


def _dropped_tokens(conn: Connection, delete_returning: Executable) -> list[tuple[int, str]]:
    """(chat id, sealed token) of the rows a DELETE ... RETURNING chat_id, token removed: the
    tokens the store hands to `Store._revoke`."""
    return [(int(row.chat_id), row.token) for row in conn.execute(delete_returning)]


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
        revoke: Callable[[str], Awaitable[object]] | None = None,
    ) -> None:
        self.database = database
        # Every token the store drops without handing it to its caller (a replaced account, a
        # replaced or expired pending link, a forgotten chat's link) goes here, so none is
        # left valid at the access service; the runner sets the library client's `revoke`.
        self.revoke_dropped = revoke
        self._run = database.run
        self._cipher = cipher
        self._clock = clock or _utcnow
        self._postgres = database.dialect == "postgresql"
        self.calendar = CalendarFeeds(database, cipher, self._clock)

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

    async def _revoke(self, chat_tokens: Iterable[tuple[int, str]]) -> None:
        """Decrypt and hand dropped tokens to `revoke_dropped`: best effort, once each."""
        for chat_id, sealed in chat_tokens:
            try:
                token = self._cipher.decrypt(sealed, chat_id)
            except TokenDecryptError as exc:
                log.warning("dropped token of chat %s cannot be opened: %s", chat_id, exc)
                continue
            if self.revoke_dropped is None:
                log.warning("a dropped token of chat %s is not revoked: no revoker set", chat_id)
                continue
            try:
                await self.revoke_dropped(token)
            except Exception as exc:  # best effort: a failed revocation must not fail the caller
                log.info("revoking a dropped token failed: %s", type(exc).__name__)

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
        has_calendar = exists().where(FEED.c.chat_id == CHAT.c.chat_id).label("has_calendar")
        statement = select(CHAT, has_calendar).where(CHAT.c.chat_id == chat_id)
        feed_only = select(exists().where(FEED.c.chat_id == chat_id))

        def work(conn: Connection) -> ChatSettings:
            row = conn.execute(statement).first()
            if row is None:  # no settings saved: defaults, and whether a feed exists all the same
                return ChatSettings(chat_id, has_calendar=bool(conn.execute(feed_only).scalar()))
            return _settings(chat_id, row)

        return await self._run(work)

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

    async def set_telegram_language(self, chat_id: int, code: str | None) -> None:
        """Remember Telegram's `language_code` (cut to 16 characters) for unasked messages."""
        await self._update_chat(chat_id, {"telegram_language": (code or None) and code[:16]})

    async def set_fresh_login(self, chat_id: int, fresh: bool) -> None:
        await self._update_chat(chat_id, {"fresh_login": fresh})

    async def set_account_ended(self, chat_id: int, reason: str | None) -> None:
        """Why the chat has no account any more (None once a new one is connected)."""
        await self._update_chat(chat_id, {"account_ended": reason})

    async def set_connected(self, chat_id: int) -> None:
        """A new account is connected: no reason for its absence, no fresh login to ask."""
        await self._update_chat(chat_id, {"account_ended": None, "fresh_login": False})

    # --- refused renewals --------------------------------------------------------------------

    async def record_refusal(self, chat_id: int, loan_id: str, due: str, reason: str) -> None:
        """Remember that the library refused to renew `loan_id` (due `due`), and why."""
        values = {"due": due[:64], "reason": reason[:200], "refused_at": self._now()}
        statement = (
            self._insert(RENEWAL_REFUSAL)
            .values(chat_id=chat_id, loan_id=loan_id[:300], **values)
            .on_conflict_do_update(index_elements=["chat_id", "loan_id"], set_=values)
        )
        await self._run(lambda conn: conn.execute(statement))

    async def refusals(self, chat_id: int) -> dict[str, Refusal]:
        """Loan id -> the refusal still remembered (younger than `REFUSAL_TTL`)."""
        return (await self.refusals_many([chat_id])).get(chat_id, {})

    async def refusals_many(self, chat_ids: Sequence[int]) -> dict[int, dict[str, Refusal]]:
        """`refusals` for several chats in one query (the sweep's groups)."""
        found: dict[int, dict[str, Refusal]] = {}
        unique = list(dict.fromkeys(chat_ids))
        if not unique:
            return found
        since = self._now() - REFUSAL_TTL

        def work(conn: Connection) -> None:
            for chunk in _chunks(unique):
                rows = conn.execute(
                    select(RENEWAL_REFUSAL).where(
                        RENEWAL_REFUSAL.c.chat_id.in_(chunk),
                        RENEWAL_REFUSAL.c.refused_at > since,
                    )
                )
                for row in rows:
                    found.setdefault(int(row.chat_id), {})[row.loan_id] = Refusal(
                        row.loan_id, row.due, row.reason, row.refused_at
                    )

        await self._run(work)
        return found

    async def clear_refusal(self, chat_id: int, loan_id: str) -> None:
        statement = delete(RENEWAL_REFUSAL).where(
            RENEWAL_REFUSAL.c.chat_id == chat_id, RENEWAL_REFUSAL.c.loan_id == loan_id
        )
        await self._run(lambda conn: conn.execute(statement))

    # --- the login handshake -----------------------------------------------------------------

    async def create_login_state(
        self,
        chat_id: int,
        ttl: timedelta = timedelta(minutes=10),
        *,
        keep: int = LIVE_LOGIN_STATES,
    ) -> str:
        """A new state for the chat; only the chat's `keep` newest states stay usable.

        Every login prompt works, and `/login` spam keeps at most `keep` rows per chat: the new
        row and the deletion of the oldest are one transaction.
        """
        state = new_state()
        state_hash = hash_secret(state)
        others = and_(LOGIN_STATE.c.chat_id == chat_id, LOGIN_STATE.c.state_hash != state_hash)
        newest = (
            select(LOGIN_STATE.c.state_hash)
            .where(others)
            .order_by(LOGIN_STATE.c.expires_at.desc(), LOGIN_STATE.c.state_hash)
            .limit(keep - 1)
            .subquery()
        )
        statements = (
            insert(LOGIN_STATE).values(
                state_hash=state_hash, chat_id=chat_id, expires_at=self._now() + ttl
            ),
            delete(LOGIN_STATE).where(
                others, LOGIN_STATE.c.state_hash.not_in(select(newest.c.state_hash))
            ),
        )
        await self._run(lambda conn: _execute_all(conn, statements))
        return state

    async def consume_login_state(self, state: str) -> int | None:
        """The chat that asked, once; None for unknown, used and expired states alike."""
        taken = await self.take_login_state(state)
        return None if taken is None or taken[1] else taken[0]

    async def take_login_state(self, state: str) -> tuple[int, bool] | None:
        """Like `consume_login_state`, but an expired state still names its chat: (chat id,
        expired), so the page that says "expired" can speak the chat's language."""
        statement = (
            delete(LOGIN_STATE)
            .where(LOGIN_STATE.c.state_hash == hash_secret(state))
            .returning(LOGIN_STATE.c.chat_id, LOGIN_STATE.c.expires_at)
        )
        row = await self._run(lambda conn: conn.execute(statement).first())
        if row is None:
            return None
        return int(row.chat_id), row.expires_at <= self._now()

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
        sealed = self._cipher.encrypt(token, chat_id)
        expires_at = self._now() + ttl
        patron = _identity(identity)
        replaced = (
            delete(PENDING_LINK)
            .where(PENDING_LINK.c.chat_id == chat_id)
            .returning(PENDING_LINK.c.chat_id, PENDING_LINK.c.token)
        )
        for attempt in range(5):
            code = new_code()
            add = insert(PENDING_LINK).values(
                code_hash=hash_secret(code),
                chat_id=chat_id,
                token=sealed,
                token_expires_at=token_expires_at,
                unique_id=patron.unique_id,
                municipality=patron.municipality,
                expires_at=expires_at,
            )

            def work(conn: Connection, add: Executable = add) -> list[tuple[int, str]]:
                dropped = _dropped_tokens(conn, replaced)
                conn.execute(add)
                return dropped

            try:
                dropped = await self._run(work)
            except IntegrityError:
                # A code collision (about 1 in 10^12); draw again.
                if attempt == 4:
                    raise
                continue
            await self._revoke(dropped)
            return code
        raise AssertionError("unreachable")

    async def complete_link(self, chat_id: int, code: str) -> Account | None:
        """Connect the pending token, only from the chat that asked; replaces an older account,
        whose token is revoked (`revoke_dropped`).

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
                PENDING_LINK.c.token,
                PENDING_LINK.c.token_expires_at,
                PENDING_LINK.c.unique_id,
                PENDING_LINK.c.municipality,
            )
        )
        old = delete(ACCOUNT).where(ACCOUNT.c.chat_id == chat_id).returning(ACCOUNT.c.token)

        def work(conn: Connection) -> tuple[Row[Any], str | None] | None:
            link = conn.execute(taken).first()
            if link is None:
                return None
            replaced = conn.execute(old).scalar()
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
            row = conn.execute(
                self._insert(ACCOUNT)
                .values(chat_id=chat_id, **values)
                .on_conflict_do_update(index_elements=["chat_id"], set_=values)
                .returning(*ACCOUNT.c)
            ).one()
            return row, replaced

        done = await self._run(work)
        if done is None:
            return None
        row, replaced = done
        if replaced is not None and replaced != row.token:
            await self._revoke([(chat_id, replaced)])
        return self._account(row)

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
            connected_at=row.connected_at,
            expiry_warned=bool(row.expiry_warned),
            next_check=row.next_check,
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

    async def remove_account(self, chat_id: int) -> RemovedAccount | None:
        """`/logout`: remove the account, the chat's pending link and its calendar feed (whose
        entries would only go stale) in one transaction.

        The account's token is returned to be revoked, or None in it when it can no longer be
        decrypted (a key removed too early): the row goes all the same, and the caller says
        so. The pending link's token is revoked here (`revoke_dropped`).
        """
        account = delete(ACCOUNT).where(ACCOUNT.c.chat_id == chat_id).returning(*ACCOUNT.c)
        links = (
            delete(PENDING_LINK)
            .where(PENDING_LINK.c.chat_id == chat_id)
            .returning(PENDING_LINK.c.chat_id, PENDING_LINK.c.token)
        )

        def work(conn: Connection) -> tuple[Row[Any] | None, list[tuple[int, str]]]:
            row = conn.execute(account).first()
            conn.execute(delete(FEED).where(FEED.c.chat_id == chat_id))
            return row, _dropped_tokens(conn, links)

        row, dropped = await self._run(work)
        await self._revoke(dropped)
        if row is None:
            return None
        opened = self._account(row)
        return RemovedAccount(
            chat_id=chat_id,
            token=None if opened is None else opened.token,
            token_expires_at=row.token_expires_at,
        )

    async def forget_chat(self, chat_id: int) -> None:
        """Everything about the chat: token, states, links, settings, buttons, reminders.

        Tokens still stored (an account, a pending link) are revoked (`revoke_dropped`).
        """
        tokens = [
            delete(table)
            .where(table.c.chat_id == chat_id)
            .returning(table.c.chat_id, table.c.token)
            for table in (ACCOUNT, PENDING_LINK)
        ]
        rest = [
            delete(table).where(table.c.chat_id == chat_id)
            for table in CHAT_TABLES
            if table not in (ACCOUNT, PENDING_LINK)
        ]

        def work(conn: Connection) -> list[tuple[int, str]]:
            dropped = [dropped for q in tokens for dropped in _dropped_tokens(conn, q)]
            _execute_all(conn, rest)
            return dropped

        await self._revoke(await self._run(work))

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
    # A button belongs to a chat and to the user who was shown it. `user_id=None` means the
    # chat's own user: in a private chat (and so in every job) the chat id is the user id.

    async def put_callback(
        self, chat_id: int, action: str, payload: dict[str, Any], *, user_id: int | None = None
    ) -> str:
        """A short id (16 characters) for callback_data "<prefix>:<id>" within 64 bytes."""
        [callback_id] = await self.put_callbacks(chat_id, [(action, payload)], user_id=user_id)
        return callback_id

    async def put_callbacks(
        self,
        chat_id: int,
        buttons: Sequence[tuple[str, dict[str, Any]]],
        *,
        user_id: int | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[str]:
        """A command's buttons, (action, payload) each, in one statement; ids in order.

        `ids` (from `new_callback_id`) lets one button's payload name another of the batch.
        """
        return await self._put_callbacks(
            [(chat_id, action, payload) for action, payload in buttons],
            user_id=user_id,
            ids=ids,
        )

    async def put_callbacks_many(
        self, buttons: Sequence[tuple[int, str, dict[str, Any]]]
    ) -> list[str]:
        """Buttons for the private chats of several patrons, (chat id, action, payload) each,
        in one statement (the reminder sweep)."""
        return await self._put_callbacks(buttons)

    async def _put_callbacks(
        self,
        buttons: Sequence[tuple[int, str, dict[str, Any]]],
        *,
        user_id: int | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[str]:
        if not buttons:
            return []
        ids = list(ids) if ids is not None else [new_callback_id() for _ in buttons]
        if len(ids) != len(buttons):
            raise ValueError("one id per button")
        now = self._now()
        rows = [
            {
                "id": callback_id,
                "chat_id": chat_id,
                "user_id": chat_id if user_id is None else user_id,
                "action": action,
                "payload": payload,
                "created_at": now,
            }
            for callback_id, (chat_id, action, payload) in zip(ids, buttons, strict=True)
        ]
        await self._run(lambda conn: conn.execute(insert(CALLBACK_REF), rows))
        return ids

    async def callback(
        self, callback_id: str, chat_id: int, *, user_id: int | None = None
    ) -> CallbackRef | None:
        """The button's data, if it belongs to this chat and user and is less than a day old."""
        statement = select(CALLBACK_REF).where(
            CALLBACK_REF.c.id == callback_id,
            CALLBACK_REF.c.chat_id == chat_id,
            CALLBACK_REF.c.user_id == (chat_id if user_id is None else user_id),
            CALLBACK_REF.c.created_at > self._now() - CALLBACK_TTL,
        )
        row = await self._run(lambda conn: conn.execute(statement).first())
        return None if row is None else _callback(row)

    async def callbacks_many(self, callback_ids: Sequence[str], chat_id: int) -> list[CallbackRef]:
        """`callback` for several buttons of one chat in one query (the buttons of a message)."""
        unique = list(dict.fromkeys(callback_ids))
        if not unique:
            return []
        since = self._now() - CALLBACK_TTL

        def work(conn: Connection) -> list[CallbackRef]:
            found: list[CallbackRef] = []
            for chunk in _chunks(unique):
                rows = conn.execute(
                    select(CALLBACK_REF).where(
                        CALLBACK_REF.c.id.in_(chunk),
                        CALLBACK_REF.c.chat_id == chat_id,
                        CALLBACK_REF.c.created_at > since,
                    )
                )
                found.extend(_callback(row) for row in rows)
            return found

        return await self._run(work)

    async def callback_user(self, callback_id: str, chat_id: int) -> int | None:
        """Who was shown the button (a live one of this chat), to refuse anyone else politely."""
        statement = select(CALLBACK_REF.c.user_id).where(
            CALLBACK_REF.c.id == callback_id,
            CALLBACK_REF.c.chat_id == chat_id,
            CALLBACK_REF.c.created_at > self._now() - CALLBACK_TTL,
        )
        found = await self._run(lambda conn: conn.execute(statement).scalar())
        return None if found is None else int(found)

    async def claim_callback(
        self, callback_id: str, chat_id: int, *, user_id: int | None = None
    ) -> CallbackRef | None:
        """Mark the button used; only the first claim (by its own user) gets it back."""
        now = self._now()
        statement = (
            update(CALLBACK_REF)
            .where(
                CALLBACK_REF.c.id == callback_id,
                CALLBACK_REF.c.chat_id == chat_id,
                CALLBACK_REF.c.user_id == (chat_id if user_id is None else user_id),
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
        """Delete expired login states and pending links (revoking their tokens), buttons
        older than a day, reminder history older than `REMINDER_HISTORY` and the settings of
        chats that blocked the bot `BLOCKED_CHAT_RETENTION` ago; how many rows."""
        now = self._now()
        links = (
            delete(PENDING_LINK)
            .where(PENDING_LINK.c.expires_at <= now)
            .returning(PENDING_LINK.c.chat_id, PENDING_LINK.c.token)
        )
        statements = (
            delete(LOGIN_STATE).where(LOGIN_STATE.c.expires_at <= now),
            delete(CALLBACK_REF).where(CALLBACK_REF.c.created_at <= now - CALLBACK_TTL),
            delete(REMINDER_LOG).where(REMINDER_LOG.c.created_at <= now - REMINDER_HISTORY),
            delete(CHAT).where(
                CHAT.c.active == false(),
                CHAT.c.updated_at <= now - BLOCKED_CHAT_RETENTION,
                ~exists().where(ACCOUNT.c.chat_id == CHAT.c.chat_id),
            ),
        )

        def work(conn: Connection) -> tuple[list[tuple[int, str]], int]:
            dropped = _dropped_tokens(conn, links)
            return dropped, sum(_execute_all(conn, statements))

        dropped, removed = await self._run(work)
        await self._revoke(dropped)
        return removed + len(dropped)

    async def rotate_keys(self) -> int:
        """Re-encrypt every stored token under the newest key, in batches; how many were."""
        rotated = 0
        for table, key_column in ((ACCOUNT, "chat_id"), (PENDING_LINK, "code_hash")):
            rotated += await self._rotate_table(table, key_column)
        await self.calendar.rotate()
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
        user_id=int(row.user_id),
        action=row.action,
        payload=dict(row.payload or {}),
        created_at=row.created_at,
        used_at=row.used_at,
    )
