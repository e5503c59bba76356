"""Nothing secret in the database in plain text, tokens bound to their chat, key rotation."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

from sqlalchemy import text

from storage.store import Store
from tests.fixtures.database import new_key
from tests.fixtures.storage import rows

OpenStore = Callable[..., AbstractAsyncContextManager[Store]]
TOKEN = "plaintext-token-7f3a9b2c41d8"
CPR = "0101701234"


async def _everything_stored(store: Store) -> str:
    dump = []
    tables = ("chat", "login_state", "pending_link", "card", "callback_ref", "reminder_log")
    for table in (*tables, "calendar_feed"):
        dump.append(str(await rows(store, f"SELECT * FROM {table}")))  # noqa: S608
    return "\n".join(dump)


async def test_no_secret_in_plain_text(store: Store, store_url: str) -> None:
    state = await store.logins.create_login_state(1)
    code = await store.create_pending_link(1, TOKEN, None, {"uniqueId": "u", "cpr": CPR})
    await store.complete_link(1, code)
    other_code = await store.create_pending_link(2, TOKEN + "-2", None, {"cpr": CPR})
    dump = await _everything_stored(store)
    for secret in (TOKEN, state, code, other_code, CPR):
        assert secret not in dump
    if store_url.startswith("sqlite"):
        await store.close()  # checkpoint the WAL into the file, then read every byte
        database = Path(store_url.split("///", 1)[1])
        raw = b"".join(
            path.read_bytes()
            for path in database.parent.glob(database.name + "*")
            if path.is_file()
        )
        assert raw  # the file really was read
        for secret in (TOKEN, state, code, CPR):
            assert secret.encode() not in raw


async def test_ciphertext_moved_to_another_chat_does_not_open(store: Store) -> None:
    for chat_id in (1, 2):
        code = await store.create_pending_link(chat_id, f"{TOKEN}-{chat_id}", None, {})
        await store.complete_link(chat_id, code)
    swap = text(
        "UPDATE card SET token = (SELECT token FROM card WHERE chat_id = 1) WHERE chat_id = 2"
    )
    await store.database.run(lambda conn: conn.execute(swap))
    card = await store.cards.get(1)
    assert card is not None and card.token == f"{TOKEN}-1"
    assert await store.cards.get(2) is None  # treated as not connected: the patron logs in again


async def test_old_key_works_until_rotation_then_can_be_removed(
    open_store: OpenStore,
) -> None:
    old, new = new_key(), new_key()
    async with open_store([old]) as before:
        for chat_id in (1, 2, 3):
            code = await before.create_pending_link(chat_id, f"{TOKEN}-{chat_id}", None, {})
            await before.complete_link(chat_id, code)
        pending = await before.create_pending_link(4, f"{TOKEN}-4", None, {})
    async with open_store([new, old]) as during:
        card = await during.cards.get(2)
        assert card is not None and card.token == f"{TOKEN}-2"
        assert (await during.rotate_keys()).rotated == 4  # three accounts, one pending link
        assert (await during.rotate_keys()).rotated == 0
    async with open_store([new]) as after:
        for chat_id in (1, 2, 3):
            card = await after.cards.get(chat_id)
            assert card is not None and card.token == f"{TOKEN}-{chat_id}"
        linked = await after.complete_link(4, pending)
        assert linked is not None and linked.card is not None
        assert linked.card.token == f"{TOKEN}-4"
        key_ids = {row[0] for row in await rows(after, "SELECT key_id FROM card")}
        assert len(key_ids) == 1
    async with open_store([old]) as stale:
        assert await stale.cards.get(1) is None
