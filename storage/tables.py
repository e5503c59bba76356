"""The tables, each declared once as a SQLModel class; Alembic's `versions/` creates exactly
these (the run-time never calls create_all), and the store's statements use their Core tables.

Times are stored as UTC (SQLite keeps them naive, PostgreSQL as timestamptz) and always come
back timezone-aware. Secrets are stored only as ciphertext (tokens) or SHA-256 (states, codes).
Chat ids are BigInteger: Telegram's exceed 32 bits (supergroups are -100...).
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    DateTime,
    Index,
    SmallInteger,
    Table,
    Text,
    false,
    text,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator
from sqlmodel import Field, SQLModel


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware in, timezone-aware UTC out, on every backend."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime: the store only takes timezone-aware times")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class ChatRow(SQLModel, table=True):
    __tablename__ = "chat"

    chat_id: int = Field(
        primary_key=True, sa_type=BigInteger, sa_column_kwargs={"autoincrement": False}
    )
    language: str | None = Field(default=None, max_length=8)
    reminders_enabled: bool = True
    reminder_days: str | None = Field(default=None, max_length=200)
    active: bool = True
    created_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    updated_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    # Telegram's `language_code` as last seen: the language of messages nobody asked for.
    telegram_language: str | None = Field(default=None, max_length=16)
    # After /logout the next authorize URL asks the access service for a fresh login.
    fresh_login: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    # Why the chat's last card ended: "expired", "logged_out" or "rejected".
    card_ended: str | None = Field(default=None, max_length=16)
    # The notices turned on (rules.notices; None: the defaults), for every card of the chat.
    notices: str | None = Field(default=None, max_length=100)
    # The hour of the day (0-23, the bot's time zone) the chat's reminders come; None: the
    # operator's REMINDER_TIME.
    reminder_hour: int | None = Field(default=None, sa_type=SmallInteger)


class LoginStateRow(SQLModel, table=True):
    __tablename__ = "login_state"
    __table_args__ = (Index("ix_login_state_expires_at", "expires_at"),)

    state_hash: str = Field(primary_key=True, max_length=64)
    chat_id: int = Field(index=True, sa_type=BigInteger)
    expires_at: datetime = Field(sa_type=UTCDateTime, nullable=False)


class PendingLinkRow(SQLModel, table=True):
    __tablename__ = "pending_link"
    __table_args__ = (Index("ix_pending_link_expires_at", "expires_at"),)

    code_hash: str = Field(primary_key=True, max_length=64)
    chat_id: int = Field(index=True, sa_type=BigInteger)
    token: str = Field(sa_type=Text, nullable=False)
    token_expires_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # From userinfo, only these two (never anything else it may carry, such as a CPR number).
    unique_id: str | None = Field(default=None, max_length=200)
    municipality: str | None = Field(default=None, max_length=16)
    expires_at: datetime = Field(sa_type=UTCDateTime, nullable=False)


def _number() -> Any:
    """A card's number in its chat (1..MAX_CARDS), part of the key of what is per card."""
    return Field(
        default=1,
        primary_key=True,
        sa_column_kwargs={"autoincrement": False, "server_default": text("1")},
    )


class CardRow(SQLModel, table=True):
    """One library card connected in a chat (a family has several), with what is its own."""

    __tablename__ = "card"
    __table_args__ = (Index("ix_card_token_expires_at", "token_expires_at"),)

    chat_id: int = Field(
        primary_key=True, sa_type=BigInteger, sa_column_kwargs={"autoincrement": False}
    )
    number: int = _number()
    # The sealed token; None while the card's login has lapsed (`lapsed_at`).
    token: str | None = Field(default=None, sa_type=Text)
    key_id: str | None = Field(default=None, max_length=16)
    token_expires_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    unique_id: str | None = Field(default=None, max_length=200)
    municipality: str | None = Field(default=None, max_length=16)
    connected_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    expiry_warned: bool = False
    swept_on: date | None = None
    lease_owner: str | None = Field(default=None, max_length=200)
    lease_until: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # The polling plan (`rules.checks`): the sweep skips the card before this day; None: daily.
    next_check: date | None = None
    # The borrower's first name (from /v3/user `name`), or the patron's own name for the card.
    label: str | None = Field(default=None, max_length=32)
    # The card's library (`/v3/user` `agency`), to name it: a family's cards may be at several.
    agency: str | None = Field(default=None, max_length=16)
    pickup_branch: str | None = Field(default=None, max_length=64)
    # Whether the card's fees are known (if not, the next status's fees are recorded silently
    # rather than told), and the first day an order placed through the bot may be overdue to
    # show in /v3/user (its entries in `notice_seen`; None: no order is watched).
    fees_known: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    order_check: date | None = None
    # The calendar entries of the card's last status (sealed like tokens), kept only while the
    # chat has a calendar feed.
    feed_entries: str | None = Field(default=None, sa_type=Text)
    feed_seen_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # The card's identity, never given again (its number is, after a logout): buttons name it.
    card_id: str | None = Field(default=None, max_length=16)
    # What the sweep's last check saw, for the order of the next pass (most urgent first):
    # the first loan due date, and whether a hold was ready for pick-up.
    first_due: date | None = None
    hold_ready: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    # When the card's login lapsed (its token refused or run out): the card stays, with its
    # name, calendar entries and settings, but no token, until the same person logs in again.
    lapsed_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class CallbackRefRow(SQLModel, table=True):
    __tablename__ = "callback_ref"
    __table_args__ = (Index("ix_callback_ref_created_at", "created_at"),)

    id: str = Field(primary_key=True, max_length=32)
    chat_id: int = Field(index=True, sa_type=BigInteger)
    # The user who was shown the button: in a group, only they may press it.
    user_id: int = Field(sa_type=BigInteger)
    action: str = Field(max_length=64)
    payload: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    used_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # The last tap answered with a new message (a question, a map): a tap again within
    # seconds is the same patron's double tap, not a second question.
    tapped_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class ReminderLogRow(SQLModel, table=True):
    __tablename__ = "reminder_log"
    __table_args__ = (Index("ix_reminder_log_created_at", "created_at"),)

    chat_id: int = Field(
        primary_key=True, sa_type=BigInteger, sa_column_kwargs={"autoincrement": False}
    )
    key: str = Field(primary_key=True, max_length=300)
    state: str = Field(max_length=8)
    created_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    sent_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class RenewalRefusalRow(SQLModel, table=True):
    """A loan the library refused to renew, with its reason as sent, while the due date holds."""

    __tablename__ = "renewal_refusal"

    chat_id: int = Field(
        primary_key=True, sa_type=BigInteger, sa_column_kwargs={"autoincrement": False}
    )
    number: int = _number()
    loan_id: str = Field(primary_key=True, max_length=300)
    due: str = Field(max_length=64)
    reason: str = Field(max_length=200)
    refused_at: datetime = Field(sa_type=UTCDateTime, nullable=False)


class CalendarFeedRow(SQLModel, table=True):
    """A chat's calendar subscription: the hash of its secret address (the entries are on each
    card's row in `card`)."""

    __tablename__ = "calendar_feed"

    chat_id: int = Field(
        primary_key=True, sa_type=BigInteger, sa_column_kwargs={"autoincrement": False}
    )
    secret_hash: str = Field(max_length=64, unique=True)
    created_at: datetime = Field(sa_type=UTCDateTime, nullable=False)


class CalendarKeptRow(SQLModel, table=True):
    """A card's calendar entries kept after its login expired or was refused, so that the
    chat's feed keeps serving them (with a "log in again" entry) until the card logs in again,
    for at most `storage.calendar.KEPT_FOR`."""

    __tablename__ = "calendar_kept"
    __table_args__ = (Index("ix_calendar_kept_lost_at", "lost_at"),)

    chat_id: int = Field(
        primary_key=True, sa_type=BigInteger, sa_column_kwargs={"autoincrement": False}
    )
    number: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    # SHA-256 of the card's `uniqueId`: a login of the same person takes the entries back.
    unique_hash: str | None = Field(default=None, max_length=64)
    label: str | None = Field(default=None, max_length=32)
    entries: str | None = Field(default=None, sa_type=Text)
    seen_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    lost_at: datetime = Field(sa_type=UTCDateTime, nullable=False)


class NoticeSeenRow(SQLModel, table=True):
    """What the notices compare against: `queue:<order id>` -> the position last seen,
    `fee:<fee id>` (a digest, rules.notices.fee_id) for each fee known, `order:<pid>` -> when
    an order placed through the bot was placed (UTC, `%Y%m%d%H%M`) until it shows up."""

    __tablename__ = "notice_seen"

    chat_id: int = Field(
        primary_key=True, sa_type=BigInteger, sa_column_kwargs={"autoincrement": False}
    )
    number: int = _number()
    item: str = Field(primary_key=True, max_length=300)
    value: str | None = Field(default=None, max_length=32)


class ShelfWatchRow(SQLModel, table=True):
    """A card's wish to hear when a title is on the shelf at a branch of its library (known by
    its name, as `/v3/holdingsitems` names it). `claimed_at`: a check is sending its ping."""

    __tablename__ = "shelf_watch"

    chat_id: int = Field(
        primary_key=True, sa_type=BigInteger, sa_column_kwargs={"autoincrement": False}
    )
    number: int = _number()
    pid: str = Field(primary_key=True, max_length=100)
    branch: str = Field(primary_key=True, max_length=200)
    agency: str = Field(max_length=16)
    title: str = Field(max_length=200)
    created_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    claimed_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class SenderRow(SQLModel, table=True):
    """A process sending for the bot (`storage.senders`): its last beat and its demand."""

    __tablename__ = "sender"

    worker: str = Field(primary_key=True, max_length=200)
    seen_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    demand: int = 0
    # Of its demand, the replies to chats, in messages a second: served before the sweep's.
    urgent: float = Field(default=0.0, sa_column_kwargs={"server_default": text("0")})
    # The most urgent of the sweep's digests it holds (`storage.sweeps.urgency`, 0 the most):
    # the budget beyond replies goes to the most urgent first. None: no digest.
    rank: int | None = Field(default=None, sa_type=SmallInteger)


class SendPaceRow(SQLModel, table=True):
    """A chat's (or group's) turn to be sent to, shared by the processes (`storage.pace`):
    GCRA's theoretical arrival time, in seconds since the epoch. The row `*` is the bot's:
    until when Telegram asked every process to wait."""

    __tablename__ = "send_pace"

    key: str = Field(primary_key=True, max_length=100)
    tat: float = Field(nullable=False)


class ChatTurnRow(SQLModel, table=True):
    """An update of a chat taken by a process (`storage.turns`), until it has been handled:
    the chat's next update waits for it. `held_until`: renewed while the process lives."""

    __tablename__ = "chat_turn"

    chat_id: int = Field(
        primary_key=True, sa_type=BigInteger, sa_column_kwargs={"autoincrement": False}
    )
    update_id: int = Field(
        primary_key=True, sa_type=BigInteger, sa_column_kwargs={"autoincrement": False}
    )
    worker: str = Field(index=True, max_length=200)
    held_until: datetime = Field(sa_type=UTCDateTime, nullable=False)


metadata = SQLModel.metadata


def _core(model: type[SQLModel]) -> Table:
    table = getattr(model, "__table__", None)
    assert isinstance(table, Table)
    return table


# The Core tables the statements use: the ones SQLModel built from the classes above, so each
# table is declared once. Rows are read and written through Core, never as ORM objects: the
# sweep's hot path cannot afford an identity map and attribute instrumentation per row.
CHAT = _core(ChatRow)
LOGIN_STATE = _core(LoginStateRow)
PENDING_LINK = _core(PendingLinkRow)
CARD = _core(CardRow)
CALLBACK_REF = _core(CallbackRefRow)
REMINDER_LOG = _core(ReminderLogRow)
RENEWAL_REFUSAL = _core(RenewalRefusalRow)
CALENDAR_FEED = _core(CalendarFeedRow)
NOTICE_SEEN = _core(NoticeSeenRow)
SENDER = _core(SenderRow)
SEND_PACE = _core(SendPaceRow)
CALENDAR_KEPT = _core(CalendarKeptRow)
SHELF_WATCH = _core(ShelfWatchRow)
CHAT_TURN = _core(ChatTurnRow)
