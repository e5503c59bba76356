"""Key rotation: every stored token (cards and pending links) re-sealed under the newest key,
in batches, so that an older key can then be removed from `TOKEN_KEYS`."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy import Row, Table, literal, not_, select, tuple_, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.expression import Executable

from storage.crypto import TokenCipher, TokenDecryptError
from storage.database import Database, execute_all
from storage.tables import CARD, PENDING_LINK

log = logging.getLogger(__name__)
ROTATE_BATCH = 200
# Each table holding sealed tokens, by the key its batches are ordered by.
SEALED = ((CARD, ("chat_id", "number")), (PENDING_LINK, ("code_hash",)))


def _all_rows(query: Executable, conn: Connection) -> list[Row[Any]]:
    return list(conn.execute(query).all())


@dataclass
class Rotation:
    """What a rotation did: tokens re-sealed, and tokens left as they were because no key of
    `TOKEN_KEYS` opens them (their key was removed before the rotation)."""

    rotated: int = 0
    unreadable: int = 0


async def rotate_tokens(database: Database, cipher: TokenCipher) -> Rotation:
    """Re-encrypt every token not sealed under the newest key."""
    done = Rotation()
    for table, key in SEALED:
        await _rotate_table(database, cipher, table, key, done)
    return done


async def _rotate_table(
    database: Database, cipher: TokenCipher, table: Table, key: tuple[str, ...], done: Rotation
) -> None:
    columns = [table.c[name] for name in key]
    pk = tuple_(*columns)
    last: Any = None
    while True:
        query = (
            select(*columns, table.c.token)
            .where(not_(table.c.token.startswith(cipher.current_prefix)))
            .order_by(*columns)
            .limit(ROTATE_BATCH)
        )
        if "chat_id" not in key:
            query = query.add_columns(table.c.chat_id)
        if last is not None:
            query = query.where(pk > tuple_(*(literal(value) for value in last)))
        rows = await database.run(partial(_all_rows, query))
        if not rows:
            return
        updates = []
        for row in rows:
            try:
                plain = cipher.decrypt(row.token, int(row.chat_id))
            except TokenDecryptError as exc:
                log.warning("cannot rotate the token of chat %s: %s", row.chat_id, exc)
                done.unreadable += 1
                continue
            values: dict[str, Any] = {"token": cipher.encrypt(plain, int(row.chat_id))}
            if "key_id" in table.c:
                values["key_id"] = cipher.current_key_id
            # Only if unchanged meanwhile: a concurrent re-login must not be undone.
            mine = [column == row._mapping[column.name] for column in columns]
            updates.append(update(table).where(*mine, table.c.token == row.token).values(**values))
        done.rotated += sum(await database.run(partial(execute_all, statements=updates)))
        last = tuple(rows[-1]._mapping[column.name] for column in columns)
