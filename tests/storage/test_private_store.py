"""The store's side of private by design: buttons bound to their user, capped login states,
and the migration that binds the buttons earlier versions stored."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import timedelta

import sqlalchemy as sa

from storage.engine import create_engine
from storage.migrate import upgrade
from storage.store import LIVE_LOGIN_STATES, MAX_CARDS, Store
from tests.fixtures.storage import FakeClock, rows

OpenStore = Callable[..., AbstractAsyncContextManager[Store]]

GROUP, ALICE, BOB = -1001, 11, 12


async def test_a_button_belongs_to_the_user_who_was_shown_it(store: Store) -> None:
    [ref_id] = await store.callbacks.put_callbacks(GROUP, [("lang", {"lang": "en"})], user_id=ALICE)
    assert await store.callbacks.callback(ref_id, GROUP, user_id=BOB) is None
    assert await store.callbacks.claim_callback(ref_id, GROUP, user_id=BOB) is None
    assert await store.callbacks.callback_user(ref_id, GROUP) == ALICE
    ref = await store.callbacks.claim_callback(ref_id, GROUP, user_id=ALICE)
    assert ref is not None and ref.user_id == ALICE and ref.used_at is not None
    # A private chat's (and a job's) buttons belong to the chat's user, whose id is the chat id.
    [own] = await store.callbacks.put_callbacks_many([(ALICE, "renew", {})])
    assert (await store.callbacks.callback(own, ALICE)) is not None
    assert await store.callbacks.callback(own, ALICE, user_id=BOB) is None


async def test_buttons_of_a_command_are_one_statement_with_given_ids(store: Store) -> None:
    ids = await store.callbacks.put_callbacks(
        ALICE, [("order", {"pid": "p"}), ("order", {"abort": "x"})]
    )
    assert len(set(ids)) == 2
    assert [r[0] for r in await rows(store, "SELECT id FROM callback_ref ORDER BY id")] == sorted(
        ids
    )


async def test_login_states_per_chat_are_capped_newest_kept(
    open_store: OpenStore, clock: FakeClock
) -> None:
    async with open_store() as store:
        # One fake clock for all of them: equal times, and still the newest is kept.
        states = [
            await store.logins.create_login_state(ALICE) for _ in range(3 * LIVE_LOGIN_STATES)
        ]
        other = await store.logins.create_login_state(BOB)
        assert await rows(store, "SELECT count(*) FROM login_state WHERE chat_id = 11") == [
            (LIVE_LOGIN_STATES,)
        ]
        assert await store.logins.take_login_state(states[-1]) == (ALICE, False)
        assert await store.logins.take_login_state(other) == (BOB, False)
        clock.advance(timedelta(seconds=1))
        newer = [await store.logins.create_login_state(ALICE) for _ in range(LIVE_LOGIN_STATES)]
        for state in newer:
            assert await store.logins.take_login_state(state) == (ALICE, False)
        assert await store.logins.take_login_state(states[0]) is None


async def test_a_full_chat_s_login_links_stay_usable_wherever_they_were_shown(
    store: Store,
) -> None:
    """Every lapsed card of a full chat has a link in the lapsed message, in /cards and in the
    Mini App, and a /login comes on top: the message's first link still works."""
    shown = [await store.logins.create_login_state(ALICE) for _ in range(3 * MAX_CARDS + 1)]
    assert await store.logins.take_login_state(shown[0]) == (ALICE, False)


async def test_migration_binds_private_buttons_and_drops_everything_of_groups(
    tmp_path: object,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/m.db"
    await upgrade(url, "0001")
    engine = create_engine(url)
    try:
        async with engine.begin() as conn:
            for ref_id, chat_id in (("private", 7), ("group", -1007)):
                await conn.execute(
                    sa.text(
                        "INSERT INTO callback_ref (id, chat_id, action, payload, created_at) "
                        "VALUES (:id, :chat, 'renew', '{}', '2026-11-22 08:00:00')"
                    ),
                    {"id": ref_id, "chat": chat_id},
                )
                await conn.execute(
                    sa.text(
                        "INSERT INTO account (chat_id, token, key_id, attributes, connected_at, "
                        "expiry_warned) VALUES (:chat, 'sealed', 'k', '{}', "
                        "'2026-11-22 08:00:00', false)"
                    ),
                    {"chat": chat_id},
                )
        await upgrade(url, "0002")
        async with engine.connect() as conn:
            found = (
                await conn.execute(sa.text("SELECT id, chat_id, user_id FROM callback_ref"))
            ).all()
            accounts = (await conn.execute(sa.text("SELECT chat_id FROM account"))).all()
    finally:
        await engine.dispose()
    assert [tuple(row) for row in found] == [("private", 7, 7)]
    assert [tuple(row) for row in accounts] == [(7,)]  # no account in a group any more
