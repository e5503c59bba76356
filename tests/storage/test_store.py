"""Every Store method, on SQLite and on PostgreSQL."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text

from storage.crypto import CODE_ALPHABET
from storage.database import Repository
from storage.notices import Seen
from storage.store import MAX_CARDS, ChatSettings, Linked, Store
from storage.tables import metadata
from tests.fixtures.storage import (
    ATTRIBUTES,
    START,
    TOKEN,
    FakeClock,
    connect,
    reminder_states,
    rows,
)

OpenStore = Callable[..., AbstractAsyncContextManager[Store]]


async def test_chat_settings_defaults_and_changes(store: Store) -> None:
    assert await store.chats.chat(1) == ChatSettings(chat_id=1)
    await store.chats.set_language(1, "en")
    changed = await store.set_reminders(1, enabled=False, days=[1, 3, 3, 0])
    assert changed == ChatSettings(1, "en", False, (3, 1, 0), True)
    assert await store.chats.chat(1) == changed
    assert (await store.set_reminders(1, enabled=True)).reminder_days == (3, 1, 0)
    assert (await store.set_reminders(1, days=())).reminder_days is None
    await store.chats.set_active(1, False)
    await store.chats.set_language(1, None)
    settings = await store.chats.chat(1)
    assert (settings.active, settings.language, settings.reminders_enabled) == (False, None, True)
    with pytest.raises(ValueError):
        await store.set_reminders(1, days=[-1])
    # Telegram supergroup ids do not fit in 32 bits.
    await store.chats.set_language(-1001234567890, "da")
    assert (await store.chats.chat(-1001234567890)).language == "da"


async def test_login_state_single_use_and_hashed(store: Store) -> None:
    state = await store.logins.create_login_state(5)
    assert len(state) >= 43  # 256 bits, URL-safe
    stored = await rows(store, "SELECT state_hash FROM login_state")
    assert state not in str(stored)
    assert await store.logins.take_login_state(state) == (5, False)
    assert await store.logins.take_login_state(state) is None
    assert await store.logins.take_login_state("never-issued") is None


async def test_login_state_expires(open_store: OpenStore, clock: FakeClock) -> None:
    async with open_store() as store:
        state = await store.logins.create_login_state(5, ttl=timedelta(minutes=10))
        clock.advance(timedelta(minutes=10, seconds=1))
        # Taken all the same, naming its chat for the "expired" page.
        assert await store.logins.take_login_state(state) == (5, True)
        assert await store.logins.take_login_state(state) is None
        assert await rows(store, "SELECT * FROM login_state") == []


async def test_link_connects_only_the_chat_that_asked(store: Store) -> None:
    expires = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    code = await store.create_pending_link(10, TOKEN, expires, dict(ATTRIBUTES))
    assert len(code) == 8 and set(code) <= set(CODE_ALPHABET)
    # Someone else typing the code gets nothing, and the code stays usable.
    assert await store.complete_link(99, code) is None
    assert await store.cards.get(99) is None
    linked = await store.complete_link(10, code.lower())
    assert linked is not None and linked.outcome == "added"
    card = linked.card
    assert card is not None and card.number == 1
    assert (card.chat_id, card.token, card.token_expires_at) == (10, TOKEN, expires)
    assert (card.unique_id, card.municipality) == ("u-123", "101")
    assert card.connected_at.tzinfo is not None and not card.expiry_warned
    assert TOKEN not in repr(card)
    assert await store.complete_link(10, code) is None
    assert await store.cards.get(10) == card
    assert await store.cards.count() == 1


async def test_new_link_replaces_older_code_and_refreshes_the_same_card(store: Store) -> None:
    await connect(store, 10, "first-token")
    await store.cards.set_label(10, 1, "Karen")
    await store.cards.set_pickup_branch(10, "DK-710104")
    stale = await store.create_pending_link(10, "second-token", None, {})
    fresh = await store.create_pending_link(10, "third-token", None, {"uniqueId": "u-123"})
    assert await store.complete_link(10, stale) is None
    linked = await store.complete_link(10, fresh)
    assert linked is not None and linked.outcome == "refreshed"
    card = linked.card
    assert card is not None and card.token == "third-token" and card.number == 1
    # What is the card's own stays with it.
    assert (card.label, card.pickup_branch) == ("Karen", "DK-710104")
    assert (await store.cards.get(10)) == card and card.token_expires_at is None
    assert await store.cards.count() == 1


async def test_a_family_adds_cards_up_to_the_limit(store: Store) -> None:
    revoked: list[str] = []

    async def revoke(token: str) -> bool:
        revoked.append(token)
        return True

    store.revoke_dropped = revoke
    for number in range(1, MAX_CARDS + 1):
        code = await store.create_pending_link(
            10, f"token-{number}", None, {"uniqueId": f"u{number}"}
        )
        linked = await store.complete_link(10, code)
        assert linked is not None and linked.outcome == "added"
        assert linked.card is not None and linked.card.number == number
    code = await store.create_pending_link(10, "one-too-many", None, {"uniqueId": "u99"})
    assert await store.complete_link(10, code) == Linked("full", None)
    assert revoked == ["one-too-many"]
    assert [card.number for card in await store.cards.of_chat(10)] == list(range(1, MAX_CARDS + 1))
    # Logging out card 2 frees its number for the next card; the others keep theirs.
    removed = await store.remove_card(10, 2, logout=True)
    assert removed is not None and removed.token == "token-2" and removed.number == 2
    code = await store.create_pending_link(10, "token-new", None, {"uniqueId": "u-new"})
    linked = await store.complete_link(10, code)
    assert linked is not None and linked.card is not None and linked.card.number == 2
    assert (await store.cards.get(10, 3)) is not None
    assert (await store.cards.get(10, 3)).token == "token-3"  # type: ignore[union-attr]


async def test_link_code_expires(open_store: OpenStore, clock: FakeClock) -> None:
    async with open_store() as store:
        code = await store.create_pending_link(10, TOKEN, None, {})
        clock.advance(timedelta(minutes=11))
        assert await store.complete_link(10, code) is None
        assert await store.purge_expired() == 1
        assert await rows(store, "SELECT * FROM pending_link") == []


async def test_delete_account_returns_the_token_to_revoke(store: Store) -> None:
    assert await store.remove_card(10) is None
    await connect(store, 10)
    deleted = await store.remove_card(10)
    assert deleted is not None and deleted.token == TOKEN
    assert await store.cards.get(10) is None and await store.cards.count() == 0


async def test_accounts_expiring_until_warned(store: Store) -> None:
    await connect(store, 1, expires=START + timedelta(days=2))
    await connect(store, 2, expires=START + timedelta(days=20))
    await connect(store, 3, expires=None)
    expiring = await store.cards.expiring(START + timedelta(days=3))
    assert [card.chat_id for card in expiring] == [1]
    await store.cards.mark_expiry_warned(1)
    assert await store.cards.expiring(START + timedelta(days=3)) == []
    card = await store.cards.get(1)
    assert card is not None and card.expiry_warned


async def test_callbacks_belong_to_their_chat_and_are_claimed_once(store: Store) -> None:
    payload: dict[str, Any] = {"loanId": "L1", "pids": ["870970-basis:1"]}
    [callback_id] = await store.callbacks.put_callbacks(7, [("renew", payload)])
    assert len(f"renew:{callback_id}".encode()) <= 64
    assert await store.callbacks.callback(callback_id, 8) is None
    assert await store.callbacks.claim_callback(callback_id, 8) is None
    ref = await store.callbacks.callback(callback_id, 7)
    assert ref is not None and (ref.action, ref.payload, ref.used_at) == ("renew", payload, None)
    claimed = await store.callbacks.claim_callback(callback_id, 7)
    assert claimed is not None and claimed.used_at is not None and claimed.payload == payload
    assert await store.callbacks.claim_callback(callback_id, 7) is None
    again = await store.callbacks.callback(callback_id, 7)
    assert again is not None and again.used_at == claimed.used_at


async def test_callbacks_expire_after_a_day(open_store: OpenStore, clock: FakeClock) -> None:
    async with open_store() as store:
        [old] = await store.callbacks.put_callbacks(7, [("order", {})])
        clock.advance(timedelta(hours=23))
        [young] = await store.callbacks.put_callbacks(7, [("order", {})])
        clock.advance(timedelta(hours=2))
        assert await store.callbacks.claim_callback(old, 7) is None
        assert await store.purge_expired() == 1
        assert await store.callbacks.claim_callback(young, 7) is not None


async def test_a_tap_again_within_the_window_is_a_double_tap(
    open_store: OpenStore, clock: FakeClock
) -> None:
    window = timedelta(seconds=5)
    async with open_store() as store:
        [asks] = await store.callbacks.put_callbacks(7, [("cancel", {})])
        assert await store.callbacks.note_tap(asks, 7, window)
        clock.advance(timedelta(seconds=4))
        assert not await store.callbacks.note_tap(asks, 7, window)  # the second of a double tap
        assert not await store.callbacks.note_tap(asks, 8, window)  # another chat's: no button
        clock.advance(timedelta(seconds=5))
        assert await store.callbacks.note_tap(asks, 7, window)  # tapped again later: asks again
        ref = await store.callbacks.callback(asks, 7)
        assert ref is not None and ref.used_at is None  # noting a tap does not use the button
        await store.callbacks.end_taps(7)  # another button tapped since: a new tap
        assert await store.callbacks.note_tap(asks, 7, window)


async def test_kept_callbacks_are_stored_once_and_retired_together(
    open_store: OpenStore, clock: FakeClock
) -> None:
    loan = {"cid": "c1", "loan_id": "L1", "due": "2026-01-20"}
    async with open_store() as store:
        kept = [("pageid-a", "apprenew", loan), ("pageid-b", "apprenew", {**loan, "loan_id": "L2"})]
        assert await store.callbacks.keep_callbacks(7, kept) == {
            "pageid-a": False,
            "pageid-b": False,
        }
        for _ in range(3):  # the same page again: the same rows, nothing added
            assert await store.callbacks.keep_callbacks(7, kept) == {
                "pageid-a": False,
                "pageid-b": False,
            }
        older = ("pageid-old", "apprenew", {**loan, "due": "2026-01-10"})
        await store.callbacks.keep_callbacks(7, [older])
        assert await store.callbacks.claim_callback("pageid-a", 7, action="apprenew") is not None
        assert await store.callbacks.keep_callbacks(7, kept[:1]) == {"pageid-a": True}
        # The loan's answer: every id of loan L1 is spent, L2's is not.
        assert (
            await store.callbacks.retire_callbacks(7, "apprenew", {"cid": "c1", "loan_id": "L1"})
            == 1
        )
        assert await store.callbacks.claim_callback("pageid-old", 7) is None
        assert await store.callbacks.claim_callback("pageid-b", 7) is not None
        await store.callbacks.release_callback("pageid-b", 7)
        assert await store.callbacks.claim_callback("pageid-b", 7) is not None
        # A day later the id is a new, unused button again, stored in the same row.
        clock.advance(timedelta(days=1, minutes=1))
        assert await store.callbacks.keep_callbacks(7, kept[:1]) == {"pageid-a": False}
        assert await store.callbacks.claim_callback("pageid-a", 7) is not None
        count = await store.database.run(
            lambda conn: conn.execute(text("SELECT count(*) FROM callback_ref")).scalar()
        )
        assert count == 3


async def test_sweep_batches_skip_finished_leased_inactive_and_muted(
    open_store: OpenStore, clock: FakeClock
) -> None:
    today = date(2026, 1, 20)
    async with open_store() as store:
        for chat_id in range(1, 8):
            await connect(store, chat_id)
        await store.chats.set_active(3, False)
        await store.set_reminders(4, enabled=False)
        await store.set_reminders(5, days=[2])
        await store.chats.set_language(5, "en")
        first = await store.sweeps.claim_sweep_batch(today, "w1", 2, timedelta(minutes=5))
        assert [card.chat_id for card, _ in first] == [1, 2]
        assert first[0][0].token == TOKEN and first[0][1] == ChatSettings(1, cards=1)
        second = await store.sweeps.claim_sweep_batch(today, "w1", 10, timedelta(minutes=5))
        assert [card.chat_id for card, _ in second] == [5, 6, 7]
        assert second[0][1].reminder_days == (2,) and second[0][1].language == "en"
        for chat_id in (1, 5, 6, 7):
            await store.sweeps.finish_sweeps([(chat_id, 1)], today)
        # Chat 2 is still leased: nobody gets it until the lease runs out.
        assert await store.sweeps.claim_sweep_batch(today, "w2", 10, timedelta(minutes=5)) == []
        clock.advance(timedelta(minutes=6))
        retried = await store.sweeps.claim_sweep_batch(today, "w2", 10, timedelta(minutes=5))
        assert [card.chat_id for card, _ in retried] == [2]
        await store.sweeps.finish_sweeps([(2, 1)], today)
        tomorrow = await store.sweeps.claim_sweep_batch(
            today + timedelta(days=1), "w1", 10, timedelta(minutes=5)
        )
        assert [card.chat_id for card, _ in tomorrow] == [1, 2, 5, 6, 7]


async def test_reminder_ledger(store: Store) -> None:
    keys = ["loan:L1:2026-01-23:3", "loan:L2:2026-01-21:1"]
    assert await store.reminder_log.begin_reminders_many({1: keys}) == {}
    assert await reminder_states(store, 1) == dict.fromkeys(keys, "intent")
    await store.reminder_log.mark_sent(1, keys[:1])
    # Existing keys untouched; the states before are returned.
    assert await store.reminder_log.begin_reminders_many({1: [*keys, "hold:H1:ready"]}) == {
        1: {keys[0]: "sent", keys[1]: "intent"}
    }
    assert await reminder_states(store, 1) == {
        keys[0]: "sent",
        keys[1]: "intent",
        "hold:H1:ready": "intent",
    }
    await store.reminder_log.mark_sent(1, ["loan:L3:2026-01-20:0"])  # sent without an intent first
    assert (await reminder_states(store, 1))["loan:L3:2026-01-20:0"] == "sent"
    assert await reminder_states(store, 2) == {}
    assert await store.reminder_log.begin_reminders_many({1: []}) == {}
    await store.reminder_log.mark_sent(1, [])


async def test_forget_chat_leaves_nothing(store: Store) -> None:
    for chat_id in (1, 2):
        await connect(store, chat_id)
        code = await store.create_pending_link(chat_id, "second", None, {"uniqueId": "other"})
        await store.complete_link(chat_id, code)
        await store.calendar.create(chat_id, {1: "[]"})
        await store.remove_card(chat_id, 2)  # its login lost: its calendar entries are kept
        await store.chats.set_language(chat_id, "da")
        await store.logins.create_login_state(chat_id)
        await store.create_pending_link(chat_id, "pending", None, {})
        await store.callbacks.put_callbacks(chat_id, [("order", {"pid": "x"})])
        await store.reminder_log.begin_reminders_many({chat_id: ["loan:L1:2026-01-23:3"]})
        await store.renewal_refusals.record_refusal(
            chat_id, "L1", "2026-01-23", "Maximum Renewals Exceeded"
        )
        await store.notices.keep({(chat_id, 1): Seen(fees={"f1"})})
        await store.watches.add(chat_id, 1, "870970-basis:1", "Branch", "DK-710100", "Title")
    await store.forget_chat(1)
    # Every table that keeps something per chat, including any a later revision adds; but
    # `chat_turn`, an update at work (its chat and number, gone once it is handled): the
    # /forget being handled holds its chat's turn until it has answered.
    tables = sorted(
        name
        for name, table in metadata.tables.items()
        if "chat_id" in table.c and name != "chat_turn"
    )
    assert len(tables) == 11
    for table in tables:
        assert await rows(store, f"SELECT * FROM {table} WHERE chat_id = 1") == [], table  # noqa: S608
        assert len(await rows(store, f"SELECT * FROM {table} WHERE chat_id = 2")) == 1, table  # noqa: S608
    assert await store.chats.chat(1) == ChatSettings(1)


async def test_ping(store: Store) -> None:
    assert await store.ping()
    await store.close()
    broken = await Store.open("postgresql://nobody@127.0.0.1:1/none", [b"k" * 32])
    assert not await broken.ping()
    await broken.close()


async def test_times_come_back_aware_utc(store: Store) -> None:
    copenhagen = datetime.fromisoformat("2026-03-01T13:00:00+01:00")
    await connect(store, 1, expires=copenhagen)
    card = await store.cards.get(1)
    assert card is not None and card.token_expires_at == copenhagen
    assert card.token_expires_at is not None and card.token_expires_at.utcoffset() == timedelta(0)


async def test_the_repositories_are_reached_by_name(store: Store) -> None:
    """`store.cards.get`, `store.chats.chat`: a repository's method is reached through its
    repository, never as a flattened name on the façade."""
    repositories = [value for value in vars(store).values() if isinstance(value, Repository)]
    flattened = [name for name, value in vars(store).items() if inspect.ismethod(value)]
    assert len(repositories) == 14
    assert flattened == []


async def _card_two(store: Store) -> None:
    """Chat 10 with two cards, a refusal and notice memory each, a feed and a pending login."""
    for number in (1, 2):
        code = await store.create_pending_link(
            10, f"token-{number}", None, {"uniqueId": f"u{number}"}
        )
        assert await store.complete_link(10, code) is not None
        await store.renewal_refusals.record_refusal(
            10, "L1", "2026-01-23", "Renewal Not Allowed", number=number
        )
        await store.notices.keep({(10, number): Seen(fees={"f1"}, fees_known=True)})
    await store.calendar.create(10, {1: "[]", 2: "[]"})


PER_CARD = ("card", "renewal_refusal", "notice_seen")


@pytest.mark.parametrize("spelling", ["remove_card"])
async def test_removing_a_card_takes_everything_of_it(store: Store, spelling: str) -> None:
    """A card that expired or was refused goes with its refusals and what its notices saw
    (the old `delete_account` left those behind); the other card keeps its own."""
    await _card_two(store)
    removed = await getattr(store, spelling)(10, 2)
    assert removed is not None and removed.token == "token-2"
    for table in PER_CARD:
        cards = await rows(store, f"SELECT number FROM {table} WHERE chat_id = 10")  # noqa: S608
        assert sorted(row[0] for row in cards) == [1], table
    assert await getattr(store, spelling)(10, 2) is None  # who removes a card, has it once


async def test_the_last_card_removed_keeps_the_feed_but_a_logout_closes_it(store: Store) -> None:
    """Without a card the feed is empty but keeps its address, so a patron whose card expired
    logs in again under the same calendar; their own /logout of the last card closes it and
    drops a login in progress."""
    await _card_two(store)
    await store.create_pending_link(10, "pending", None, {})
    await store.remove_card(10, 1)
    await store.remove_card(10, 2)
    assert len(await rows(store, "SELECT * FROM calendar_feed WHERE chat_id = 10")) == 1
    assert len(await rows(store, "SELECT * FROM pending_link WHERE chat_id = 10")) == 1
    await _card_two(store)
    await store.create_pending_link(10, "pending", None, {})
    await store.remove_card(10, 1, logout=True)
    assert len(await rows(store, "SELECT * FROM calendar_feed WHERE chat_id = 10")) == 1
    removed = await store.remove_card(10, 2, logout=True)
    assert removed is not None and removed.number == 2 and removed.label is None
    for table in ("calendar_feed", "pending_link", *PER_CARD):
        assert await rows(store, f"SELECT * FROM {table} WHERE chat_id = 10") == [], table  # noqa: S608


async def test_forget_chat_revokes_every_card(store: Store) -> None:
    revoked: list[str] = []

    async def revoke(token: str) -> bool:
        revoked.append(token)
        return True

    store.revoke_dropped = revoke
    for number in (1, 2, 3):
        code = await store.create_pending_link(
            5, f"card-{number}", None, {"uniqueId": f"u{number}"}
        )
        await store.complete_link(5, code)
    await store.forget_chat(5)
    assert sorted(revoked) == ["card-1", "card-2", "card-3"]
    assert await store.cards.of_chat(5) == []


async def test_a_removal_revokes_the_token_it_drops(store: Store) -> None:
    """An expired or refused card's token is revoked by the removal; a logout hands it over."""
    revoked: list[str] = []

    async def revoke(token: str) -> bool:
        revoked.append(token)
        return True

    store.revoke_dropped = revoke
    await connect(store, 10, "refused")
    assert await store.remove_card(10) is not None
    assert revoked == ["refused"]
    await connect(store, 10, "logged-out")
    removed = await store.remove_card(10, logout=True, hand_over=True)
    assert removed is not None and removed.token == "logged-out"
    assert revoked == ["refused"]  # the logout revokes it itself, to say what the service said


async def test_a_refusal_after_a_new_login_keeps_the_fresh_card(store: Store) -> None:
    """The login race: a call made with the old token is refused after the card logged in
    again; removing the card `holding` the old token removes nothing and revokes nothing."""
    revoked: list[str] = []

    async def revoke(token: str) -> bool:
        revoked.append(token)
        return True

    store.revoke_dropped = revoke
    await connect(store, 10, "old")
    old = await store.cards.get(10)
    assert old is not None
    await connect(store, 10, "new")  # the same uniqueId: a refresh, the old token revoked
    assert revoked == ["old"]
    assert await store.remove_card(10, old.number, holding=old) is None
    fresh = await store.cards.get(10)
    assert fresh is not None and fresh.token == "new" and revoked == ["old"]
    assert fresh.card_id == old.card_id  # the same card, refreshed: its buttons still work
    assert await store.remove_card(10, fresh.number, holding=fresh) is not None
    assert revoked == ["old", "new"]


async def test_a_number_reused_gets_a_new_identity(store: Store) -> None:
    await connect(store, 10, "ole")
    ole = await store.cards.get(10)
    assert ole is not None and ole.card_id
    await store.remove_card(10, logout=True)
    code = await store.create_pending_link(10, "mette", None, {"uniqueId": "mette"})
    linked = await store.complete_link(10, code)
    assert linked is not None and linked.card is not None
    assert linked.card.number == ole.number and linked.card.card_id != ole.card_id


async def test_a_watch_fires_once_and_dies_with_its_card(store: Store) -> None:
    """Two checks claim a watch: one wins; a failed send releases it; a card's removal ends its
    watches and no other card's."""
    await _card_two(store)
    for card in (1, 2):
        assert await store.watches.add(10, card, "870970-basis:1", "B", "DK-710100", "T") == "added"
    assert await store.watches.add(10, 1, "870970-basis:1", "B", "DK-710100", "T") == "exists"
    first, second = await store.watches.to_check()
    assert await store.watches.claim(first)
    assert not await store.watches.claim(first)  # another check has it
    assert [w.number for w in await store.watches.to_check()] == [second.number]
    await store.watches.release(first)
    assert len(await store.watches.to_check()) == 2
    assert await store.watches.claim(first)
    await store.watches.done(first)
    assert not await store.watches.claim(first)  # gone
    await store.remove_card(10, 2)
    assert await store.watches.of_chat(10) == []


async def test_the_ids_of_several_loans_are_retired_at_once(open_store: OpenStore) -> None:
    """ "Renew all"'s answers retire the ids of every answered loan in one call (a frozenset
    matches any of its members), and no other card's or loan's."""
    async with open_store() as store:
        rows = [
            ("renew", {"cid": "c1", "loan_id": "L1"}),
            ("renew", {"cid": "c1", "loan_id": "L2"}),
            ("renew", {"cid": "c1", "loan_id": "L3"}),
            ("renew", {"cid": "c2", "loan_id": "L1"}),
            ("renew", {"cid": "c1", "loan_id": ["L1"]}),  # not a loan id: matches nothing
        ]
        ids = await store.callbacks.put_callbacks(7, rows)
        match = {"cid": "c1", "loan_id": frozenset({"L1", "L2"})}
        assert await store.callbacks.retire_callbacks(7, "renew", match) == 2
        claimed = [await store.callbacks.claim_callback(ref, 7) is not None for ref in ids]
        assert claimed == [False, False, True, True, True]
