"""Buttons (table `callback_ref`): what an inline button does, kept here so that its callback
data is a short random id within Telegram's 64 bytes.

A button belongs to a chat and to the user who was shown it. `user_id=None` means the chat's
own user: in a private chat (and so in every job) the chat id is the user id.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Row, delete, insert, or_, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.expression import ColumnElement, Executable

from storage.database import Repository, chunks
from storage.tables import CALLBACK_REF

CALLBACK_TTL = timedelta(days=1)


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

    @classmethod
    def of_row(cls, row: Row[Any]) -> CallbackRef:
        return cls(
            id=row.id,
            chat_id=int(row.chat_id),
            user_id=int(row.user_id),
            action=row.action,
            payload=dict(row.payload or {}),
            created_at=row.created_at,
            used_at=row.used_at,
        )


def _of_action(action: str | None) -> tuple[ColumnElement[bool], ...]:
    """The condition that a button was stored for `action` (none when `action` is None): a
    stored id sent under another action's prefix, or to another endpoint, names no button."""
    return () if action is None else (CALLBACK_REF.c.action == action,)


class Callbacks(Repository):
    async def put_callbacks(
        self,
        chat_id: int,
        buttons: Sequence[tuple[str, dict[str, Any]]],
        *,
        user_id: int | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[str]:
        """A command's buttons, (action, payload) each, in one statement; ids in order.

        Each id is 16 characters, for callback data "<prefix>:<id>" within 64 bytes. `ids`
        (from `new_callback_id`) lets one button's payload name another of the batch.
        """
        return await self._put(
            [(chat_id, action, payload) for action, payload in buttons],
            user_id=user_id,
            ids=ids,
        )

    async def put_callbacks_many(
        self, buttons: Sequence[tuple[int, str, dict[str, Any]]]
    ) -> list[str]:
        """Buttons for the private chats of several patrons, (chat id, action, payload) each,
        in one statement (the reminder sweep)."""
        return await self._put(buttons)

    async def _put(
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

    async def keep_callbacks(
        self, chat_id: int, buttons: Sequence[tuple[str, str, dict[str, Any]]]
    ) -> dict[str, bool]:
        """Buttons whose ids the caller derives from what they act on, (id, action, payload)
        each, stored once: a live row of an id is kept as it is, an expired one starts afresh,
        a missing one is added. Each id -> whether its button was used already.

        A page shown again and again names the same things, so it adds no rows."""
        if not buttons:
            return {}
        ids = [callback_id for callback_id, _, _ in buttons]

        def work(conn: Connection) -> dict[str, bool]:
            now = self._now()
            since = now - CALLBACK_TTL
            found: dict[str, Row[Any, Any, Any]] = {}
            for chunk in chunks(ids):
                rows = conn.execute(
                    select(
                        CALLBACK_REF.c.id, CALLBACK_REF.c.created_at, CALLBACK_REF.c.used_at
                    ).where(CALLBACK_REF.c.id.in_(chunk), CALLBACK_REF.c.chat_id == chat_id)
                )
                found.update((row.id, row) for row in rows)
            used: dict[str, bool] = {}
            fresh = []
            for callback_id, action, payload in buttons:
                row = found.get(callback_id)
                if row is not None and row.created_at > since:
                    used[callback_id] = row.used_at is not None
                    continue
                used[callback_id] = False
                if row is not None:  # expired, not yet swept: a new button of the same id
                    conn.execute(
                        update(CALLBACK_REF)
                        .where(CALLBACK_REF.c.id == callback_id, CALLBACK_REF.c.created_at <= since)
                        .values(action=action, payload=payload, created_at=now, used_at=None)
                    )
                    continue
                fresh.append(
                    {
                        "id": callback_id,
                        "chat_id": chat_id,
                        "user_id": chat_id,
                        "action": action,
                        "payload": payload,
                        "created_at": now,
                    }
                )
            if fresh:
                conn.execute(insert(CALLBACK_REF), fresh)
            return used

        try:
            return await self._run(work)
        except IntegrityError:
            # Another view of the same page stored the same ids just now: theirs are ours.
            return await self._run(work)

    async def retire_callbacks(self, chat_id: int, action: str, match: dict[str, Any]) -> int:
        """Mark used every live, unused button of the chat stored for `action` whose payload
        has `match`'s values (all the ids one thing was given under); how many. A value given
        as a frozenset matches any of its members (the ids of several things at once)."""

        def work(conn: Connection) -> int:
            now = self._now()
            rows = conn.execute(
                select(CALLBACK_REF.c.id, CALLBACK_REF.c.payload).where(
                    CALLBACK_REF.c.chat_id == chat_id,
                    CALLBACK_REF.c.action == action,
                    CALLBACK_REF.c.used_at.is_(None),
                    CALLBACK_REF.c.created_at > now - CALLBACK_TTL,
                )
            )
            ids = [
                row.id
                for row in rows
                if all(
                    _matches((row.payload or {}).get(key), value) for key, value in match.items()
                )
            ]
            for chunk in chunks(ids):
                conn.execute(
                    update(CALLBACK_REF)
                    .where(CALLBACK_REF.c.id.in_(chunk), CALLBACK_REF.c.used_at.is_(None))
                    .values(used_at=now)
                )
            return len(ids)

        return await self._run(work)

    async def release_callback(self, callback_id: str, chat_id: int) -> None:
        """Make a claimed button usable again: what it asked for was surely not done (the
        library turned the request away unread), so the patron may ask once more."""
        statement = (
            update(CALLBACK_REF)
            .where(CALLBACK_REF.c.id == callback_id, CALLBACK_REF.c.chat_id == chat_id)
            .values(used_at=None)
        )
        await self._run(lambda conn: conn.execute(statement))

    async def callback(
        self,
        callback_id: str,
        chat_id: int,
        *,
        user_id: int | None = None,
        action: str | None = None,
    ) -> CallbackRef | None:
        """The button's data, if it belongs to this chat and user, is less than a day old, and
        was stored for `action` (when given)."""
        statement = select(CALLBACK_REF).where(
            CALLBACK_REF.c.id == callback_id,
            CALLBACK_REF.c.chat_id == chat_id,
            CALLBACK_REF.c.user_id == (chat_id if user_id is None else user_id),
            CALLBACK_REF.c.created_at > self._now() - CALLBACK_TTL,
            *_of_action(action),
        )
        row = await self._run(lambda conn: conn.execute(statement).first())
        return None if row is None else CallbackRef.of_row(row)

    async def callbacks_many(self, callback_ids: Sequence[str], chat_id: int) -> list[CallbackRef]:
        """`callback` for several buttons of one chat in one query (the buttons of a message)."""
        unique = list(dict.fromkeys(callback_ids))
        if not unique:
            return []
        since = self._now() - CALLBACK_TTL

        def work(conn: Connection) -> list[CallbackRef]:
            found: list[CallbackRef] = []
            for chunk in chunks(unique):
                rows = conn.execute(
                    select(CALLBACK_REF).where(
                        CALLBACK_REF.c.id.in_(chunk),
                        CALLBACK_REF.c.chat_id == chat_id,
                        CALLBACK_REF.c.created_at > since,
                    )
                )
                found.extend(CallbackRef.of_row(row) for row in rows)
            return found

        return await self._run(work)

    async def callback_user(
        self, callback_id: str, chat_id: int, *, action: str | None = None
    ) -> int | None:
        """Who was shown the button (a live one of this chat, stored for `action` when given),
        to refuse anyone else politely."""
        statement = select(CALLBACK_REF.c.user_id).where(
            CALLBACK_REF.c.id == callback_id,
            CALLBACK_REF.c.chat_id == chat_id,
            CALLBACK_REF.c.created_at > self._now() - CALLBACK_TTL,
            *_of_action(action),
        )
        found = await self._run(lambda conn: conn.execute(statement).scalar())
        return None if found is None else int(found)

    async def claim_callback(
        self,
        callback_id: str,
        chat_id: int,
        *,
        user_id: int | None = None,
        action: str | None = None,
    ) -> CallbackRef | None:
        """Mark the button used; only the first claim (by its own user, for the action it was
        stored for when `action` is given) gets it back. A claim for another action leaves the
        button as it was."""
        now = self._now()
        statement = (
            update(CALLBACK_REF)
            .where(
                CALLBACK_REF.c.id == callback_id,
                CALLBACK_REF.c.chat_id == chat_id,
                CALLBACK_REF.c.user_id == (chat_id if user_id is None else user_id),
                CALLBACK_REF.c.used_at.is_(None),
                CALLBACK_REF.c.created_at > now - CALLBACK_TTL,
                *_of_action(action),
            )
            .values(used_at=now)
            .returning(*CALLBACK_REF.c)
        )
        row = await self._run(lambda conn: conn.execute(statement).first())
        return None if row is None else CallbackRef.of_row(row)

    async def note_tap(self, callback_id: str, chat_id: int, within: timedelta) -> bool:
        """Note a tap of the chat's button now: False when it was tapped `within` ago already
        (a double tap, which the first tap answers), or names no button of the chat."""
        now = self._now()
        statement = (
            update(CALLBACK_REF)
            .where(
                CALLBACK_REF.c.id == callback_id,
                CALLBACK_REF.c.chat_id == chat_id,
                or_(CALLBACK_REF.c.tapped_at.is_(None), CALLBACK_REF.c.tapped_at <= now - within),
            )
            .values(tapped_at=now)
        )
        return bool(await self._run(lambda conn: conn.execute(statement).rowcount == 1))

    async def end_taps(self, chat_id: int) -> None:
        """Forget the chat's noted taps (`note_tap`): another button was tapped since, so a
        tap of one of them again is a new tap (the patron answered "no" and asks again)."""
        statement = (
            update(CALLBACK_REF)
            .where(CALLBACK_REF.c.chat_id == chat_id, CALLBACK_REF.c.tapped_at.is_not(None))
            .values(tapped_at=None)
        )
        await self._run(lambda conn: conn.execute(statement))

    @staticmethod
    def expired(now: datetime) -> Executable:
        return delete(CALLBACK_REF).where(CALLBACK_REF.c.created_at <= now - CALLBACK_TTL)


def _matches(found: Any, wanted: Any) -> bool:
    if isinstance(wanted, frozenset):
        return isinstance(found, str | int) and found in wanted
    return bool(found == wanted)
