"""A chat's settings (table `chat`): language, reminders, notices, why its last card ended. They
hold for every card of the chat; what is a card's own is on its row in `card`.

A chat without a row has the defaults; the first change makes the row (an upsert).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import BigInteger, Row, bindparam, delete, exists, false, func, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.expression import Executable

from storage.database import Repository
from storage.tables import CALENDAR_FEED, CARD, CHAT

# The notices a chat can turn on (`rules.notices` says what each is), in the order /reminders
# lists them, and those on while the chat has not chosen (a NULL column).
NOTICES: tuple[str, ...] = ("refused", "queue", "fees", "pickup", "orders")
DEFAULT_NOTICES: frozenset[str] = frozenset({"refused", "fees", "pickup", "orders"})

# A chat that blocked the bot cannot send /forget: its settings go this long after, once it
# has no card left (a blocked chat's token runs out within thirty days).
BLOCKED_CHAT_RETENTION = timedelta(days=90)


@dataclass(frozen=True)
class ChatSettings:
    """A chat's preferences; the defaults apply when the chat has no row."""

    chat_id: int
    language: str | None = None
    reminders_enabled: bool = True
    reminder_days: tuple[int, ...] | None = None  # None: the operator's REMINDER_DAYS
    active: bool = True
    telegram_language: str | None = None  # Telegram's language_code, as last seen
    fresh_login: bool = False  # ask the access service for a fresh login next time
    card_ended: str | None = None  # "expired" | "logged_out" | "rejected"
    # Whether the chat has a calendar feed to keep current (read by `Chats.chat` only).
    has_calendar: bool = False
    notices: frozenset[str] = DEFAULT_NOTICES  # the notices turned on
    reminder_hour: int | None = None  # None: the operator's REMINDER_TIME
    # How many cards the chat has (read by the sweep's claim only: its digests name the cards
    # of a family).
    cards: int = 1

    def thresholds(self, operator_days: Sequence[int]) -> tuple[int, ...]:
        """The reminder thresholds in force, largest first: the chat's own, else the operator's
        `REMINDER_DAYS` (the one rule the sweep, the polling plan, /reminders and "renew all"
        share)."""
        days = self.reminder_days if self.reminder_days is not None else operator_days
        return tuple(sorted(set(days), reverse=True))

    @classmethod
    def of_row(cls, chat_id: int, row: Row[Any] | None) -> ChatSettings:
        return cls.of_values(chat_id, None if row is None else row._mapping)

    @classmethod
    def of_values(cls, chat_id: int, row: Mapping[Any, Any] | None) -> ChatSettings:
        """The settings of a chat row's values (or of the chat's part of a joined row)."""
        if row is None:
            return cls(chat_id=chat_id)
        return cls(
            chat_id=chat_id,
            language=row["language"],
            reminders_enabled=bool(row["reminders_enabled"]),
            reminder_days=_days_tuple(row["reminder_days"]),
            active=bool(row["active"]),
            telegram_language=row["telegram_language"],
            fresh_login=bool(row["fresh_login"]),
            card_ended=row["card_ended"],
            has_calendar=bool(row.get("has_calendar", False)),
            notices=parse_notices(row["notices"]),
            reminder_hour=row.get("reminder_hour"),
            cards=int(row.get("cards", 1) or 1),
        )


def parse_notices(value: str | None) -> frozenset[str]:
    """The notices turned on, from the stored text (None: the defaults)."""
    if value is None:
        return DEFAULT_NOTICES
    return frozenset(part for part in value.split(",") if part in NOTICES)


def dump_notices(enabled: Iterable[str]) -> str:
    """The stored text of the notices turned on (in `NOTICES` order; "" when none)."""
    on = set(enabled)
    return ",".join(name for name in NOTICES if name in on)


def _days_text(days: Sequence[int]) -> str | None:
    if any(day < 0 for day in days):
        raise ValueError("reminder days must not be negative")
    unique = sorted(set(days), reverse=True)
    return ",".join(str(day) for day in unique) if unique else None


def _days_tuple(value: str | None) -> tuple[int, ...] | None:
    if not value:
        return None
    return tuple(int(part) for part in value.split(",") if part)


def reminder_values(enabled: bool | None, days: Sequence[int] | None) -> dict[str, Any]:
    """The columns `Store.set_reminders` changes: only what is given."""
    values: dict[str, Any] = {}
    if enabled is not None:
        values["reminders_enabled"] = enabled
    if days is not None:
        values["reminder_days"] = _days_text(days)
    return values


def settings_of(conn: Connection, chat_ids: list[int]) -> dict[int, ChatSettings]:
    """The settings of these chats in one query (the sweep's claimed batch)."""
    found: dict[int, ChatSettings] = {chat_id: ChatSettings(chat_id) for chat_id in chat_ids}
    if chat_ids:
        cards = (
            select(func.count())
            .where(CARD.c.chat_id == CHAT.c.chat_id)
            .scalar_subquery()
            .label("cards")
        )
        query = select(CHAT, cards).where(CHAT.c.chat_id.in_(chat_ids))
        for row in conn.execute(query).all():
            found[int(row.chat_id)] = ChatSettings.of_row(int(row.chat_id), row)
    return found


# A chat's settings, read from the chat asked for: one row even when the chat has no settings
# row (the defaults, and whether it has a feed all the same), in one statement. `Store` joins
# a chat's cards onto it (`SETTINGS_JOIN`, `SETTINGS_COLUMNS`); built once, as every command
# reads it.
ASKED = select(bindparam("chat_id", type_=BigInteger).label("chat_id")).subquery("asked")
SETTINGS_JOIN = ASKED.outerjoin(CHAT, CHAT.c.chat_id == ASKED.c.chat_id)
# What `ChatSettings` is made of (not when the row was made or changed).
_SETTINGS_OF = tuple(column for column in CHAT.c if column.key not in ("created_at", "updated_at"))
SETTINGS_COLUMNS = (
    *_SETTINGS_OF,
    exists().where(CALENDAR_FEED.c.chat_id == ASKED.c.chat_id).label("has_calendar"),
)
_SETTINGS_NAMES = (*(column.key for column in _SETTINGS_OF), "has_calendar")
_SETTINGS_READ = select(*SETTINGS_COLUMNS).select_from(SETTINGS_JOIN)


def asked_settings(chat_id: int, row: Sequence[Any]) -> ChatSettings:
    """The settings in a row that starts with `SETTINGS_COLUMNS`."""
    chat = dict(zip(_SETTINGS_NAMES, row[: len(_SETTINGS_NAMES)], strict=True))
    if chat["chat_id"] is None:  # no settings saved
        return ChatSettings(chat_id, has_calendar=bool(chat["has_calendar"]))
    return ChatSettings.of_values(chat_id, chat)


class Chats(Repository):
    async def chat(self, chat_id: int) -> ChatSettings:
        """The chat's settings, and whether it has a calendar feed (in the same read)."""
        [row] = await self._fetch(_SETTINGS_READ, {"chat_id": chat_id})
        return asked_settings(chat_id, row)

    def upsert(self, chat_id: int, values: dict[str, Any]) -> Executable:
        """Set `values`, making the row if the chat has none; returns the whole row."""
        now = self._now()
        return (
            self._insert(CHAT)
            .values(chat_id=chat_id, created_at=now, updated_at=now, **values)
            .on_conflict_do_update(index_elements=["chat_id"], set_={**values, "updated_at": now})
            .returning(*CHAT.c)
        )

    async def _update(self, chat_id: int, values: dict[str, Any]) -> None:
        statement = self.upsert(chat_id, values)
        # Fetched: SQLite cannot commit while a RETURNING statement still has rows to give.
        await self._run(lambda conn: conn.execute(statement).first())

    async def set_language(self, chat_id: int, language: str | None) -> None:
        await self._update(chat_id, {"language": language})

    async def set_active(self, chat_id: int, active: bool) -> None:
        await self._update(chat_id, {"active": active})

    async def set_telegram_language(self, chat_id: int, code: str | None) -> None:
        """Remember Telegram's `language_code` (cut to 16 characters) for unasked messages."""
        await self._update(chat_id, {"telegram_language": (code or None) and code[:16]})

    async def set_fresh_login(self, chat_id: int, fresh: bool) -> None:
        await self._update(chat_id, {"fresh_login": fresh})

    async def set_card_ended(self, chat_id: int, reason: str | None) -> None:
        """Why the chat's last card ended (None once a card is connected)."""
        await self._update(chat_id, {"card_ended": reason})

    async def set_connected(self, chat_id: int) -> None:
        """A card is connected: no reason for an absence, no fresh login to ask."""
        await self._update(chat_id, {"card_ended": None, "fresh_login": False})

    async def set_reminder_hour(self, chat_id: int, hour: int | None) -> ChatSettings:
        """The hour of the day (0-23) the chat's reminders come; None: the operator's."""
        statement = self.upsert(chat_id, {"reminder_hour": hour})
        return await self._run(
            lambda conn: ChatSettings.of_row(chat_id, conn.execute(statement).first())
        )

    async def set_notices(self, chat_id: int, enabled: frozenset[str]) -> ChatSettings:
        """Turn notices on or off; turning fees off forgets that every card's fees were known,
        so turning them on again records the fees of that day silently."""
        statement = self.upsert(chat_id, {"notices": dump_notices(enabled)})
        forget = (
            update(CARD).where(CARD.c.chat_id == chat_id).values(fees_known=False)
            if "fees" not in enabled
            else None
        )

        def work(conn: Connection) -> ChatSettings:
            row = conn.execute(statement).first()
            if forget is not None:
                conn.execute(forget)
            return ChatSettings.of_row(chat_id, row)

        return await self._run(work)

    @staticmethod
    def expired(now: datetime) -> Executable:
        """The settings of chats that blocked the bot long enough ago and have no card."""
        return delete(CHAT).where(
            CHAT.c.active == false(),
            CHAT.c.updated_at <= now - BLOCKED_CHAT_RETENTION,
            ~exists().where(CARD.c.chat_id == CHAT.c.chat_id),
        )
