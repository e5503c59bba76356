"""Login states (table `login_state`): the OAuth `state` of a login link, stored as its SHA-256,
naming the chat that asked until the access service sends the patron back."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import and_, delete, insert, select
from sqlalchemy.sql.expression import Executable

from storage.cards import MAX_CARDS
from storage.crypto import hash_secret, new_state
from storage.database import Repository, execute_all
from storage.tables import LOGIN_STATE

# Login links a chat keeps usable at once (each a login_state row for 10 minutes); a newer
# one drops the oldest. Every lapsed card gets a link of its own wherever it is shown (the
# lapsed message, /cards, the Mini App), so a full chat's links in all three, and a few
# /login, stay usable: with 5, a family's /cards killed the buttons of the message before it.
LIVE_LOGIN_STATES = 4 * MAX_CARDS


class LoginStates(Repository):
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
        await self._run(lambda conn: execute_all(conn, statements))
        return state

    async def take_login_state(self, state: str) -> tuple[int, bool] | None:
        """The chat that asked, once: (chat id, expired); None for unknown and used states.

        An expired state still names its chat, so the page that says "expired" can speak the
        chat's language.
        """
        statement = (
            delete(LOGIN_STATE)
            .where(LOGIN_STATE.c.state_hash == hash_secret(state))
            .returning(LOGIN_STATE.c.chat_id, LOGIN_STATE.c.expires_at)
        )
        row = await self._run(lambda conn: conn.execute(statement).first())
        if row is None:
            return None
        return int(row.chat_id), row.expires_at <= self._now()

    @staticmethod
    def expired(now: datetime) -> Executable:
        return delete(LOGIN_STATE).where(LOGIN_STATE.c.expires_at <= now)
