"""A lapsed login is a state of the card, not its end (issue 34, part 3): the card keeps its
name, calendar and settings without its token, until the same person logs in again or the
patron ends it with /logout or /forget. On SQLite and on PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import text

from storage.engine import create_engine
from storage.migrate import downgrade, upgrade
from storage.store import Store
from tests.fixtures.storage import ATTRIBUTES, START, rows


async def _family(store: Store) -> None:
    """Karen (card 1) and Jonas (card 2, named "Lillebror", with a pick-up branch)."""
    for token, unique_id in (("karen-token", "u-karen"), ("jonas-token", "u-jonas")):
        code = await store.create_pending_link(
            7, token, None, {**ATTRIBUTES, "uniqueId": unique_id}
        )
        assert await store.complete_link(7, code) is not None
    await store.cards.set_label(7, 2, "Lillebror")
    await store.cards.set_pickup_branch(7, "DK-710104", number=2)


async def test_a_lapsed_card_keeps_all_but_its_token(store: Store) -> None:
    revoked: list[str] = []

    async def revoke(token: str) -> bool:
        revoked.append(token)
        return True

    store.revoke_dropped = revoke
    await _family(store)
    jonas = await store.cards.get(7, 2)
    assert jonas is not None
    lapsed = await store.lapse_card(jonas)
    assert lapsed is not None and lapsed.is_lapsed and lapsed.lapsed_at is not None
    assert (lapsed.label, lapsed.pickup_branch, lapsed.card_id) == (
        "Lillebror",
        "DK-710104",
        jonas.card_id,
    )
    assert lapsed.token == "" and revoked == ["jonas-token"]
    # Nothing of the token is stored: the least.
    [(token, key_id)] = await rows(store, "SELECT token, key_id FROM card WHERE number = 2")
    assert (token, key_id) == (None, None)
    # Once: the same card lapsed again (another task, the same refusal) is nobody's.
    assert await store.lapse_card(jonas) is None
    # Reads hand no lapsed card to the library unless asked.
    assert [card.number for card in await store.cards.of_chat(7)] == [1]
    assert [card.number for card in await store.cards.of_chat(7, lapsed=True)] == [1, 2]
    assert await store.cards.get(7, 2) is None
    read = await store.read_chat(7, cards=True)
    assert [(card.number, card.is_lapsed) for card in read.cards or []] == [(1, False), (2, True)]
    # The expiry jobs and the sweep leave it alone.
    assert await store.cards.expired(START + timedelta(days=400)) == []
    assert await store.cards.expiring(START + timedelta(days=400)) == []
    claimed = await store.sweeps.claim_sweep_batch(START.date(), "w", 10, timedelta(minutes=1))
    assert [card.number for card, _ in claimed] == [1]


async def test_a_login_that_raced_the_refusal_keeps_its_fresh_card(store: Store) -> None:
    await _family(store)
    refused = await store.cards.get(7, 2)
    assert refused is not None
    code = await store.create_pending_link(
        7, "new-token", None, {**ATTRIBUTES, "uniqueId": "u-jonas"}
    )
    assert await store.complete_link(7, code) is not None
    assert await store.lapse_card(refused) is None
    fresh = await store.cards.get(7, 2)
    assert fresh is not None and fresh.token == "new-token" and not fresh.is_lapsed


async def test_the_same_person_logging_in_again_brings_the_card_back(store: Store) -> None:
    await _family(store)
    jonas = await store.cards.get(7, 2)
    assert jonas is not None and await store.lapse_card(jonas) is not None
    code = await store.create_pending_link(
        7, "back-token", None, {**ATTRIBUTES, "uniqueId": "u-jonas"}
    )
    linked = await store.complete_link(7, code)
    assert linked is not None and linked.outcome == "restored"
    back = linked.card
    assert back is not None and not back.is_lapsed and back.token == "back-token"
    assert (back.number, back.label, back.pickup_branch, back.card_id) == (
        2,
        "Lillebror",
        "DK-710104",
        jonas.card_id,
    )
    assert [card.number for card in await store.cards.of_chat(7)] == [1, 2]


async def test_the_same_unique_id_at_another_municipality_is_another_card(store: Store) -> None:
    await _family(store)
    jonas = await store.cards.get(7, 2)
    assert jonas is not None and await store.lapse_card(jonas) is not None
    other = {**ATTRIBUTES, "uniqueId": "u-jonas", "municipality": "751"}
    code = await store.create_pending_link(7, "other-token", None, other)
    linked = await store.complete_link(7, code)
    assert linked is not None and linked.outcome == "added" and linked.card is not None
    assert linked.card.number == 3
    kept = await store.cards.get(7, 2, lapsed=True)
    assert kept is not None and kept.is_lapsed and kept.label == "Lillebror"


async def test_logout_ends_a_lapsed_card(store: Store) -> None:
    await _family(store)
    jonas = await store.cards.get(7, 2)
    assert jonas is not None and await store.lapse_card(jonas) is not None
    removed = await store.remove_card(7, 2, logout=True, hand_over=True)
    assert removed is not None and removed.token == "" and removed.label == "Lillebror"
    assert [card.number for card in await store.cards.of_chat(7, lapsed=True)] == [1]
    await store.forget_chat(7)
    assert await store.cards.of_chat(7, lapsed=True) == []


async def test_a_lapsed_card_keeps_its_calendar_entries(store: Store) -> None:
    await _family(store)
    await store.calendar.create(7, {1: "[]", 2: '[{"k": "jonas"}]'})
    secret = await store.calendar.create(7, {1: "[]", 2: '[{"k": "jonas"}]'})
    jonas = await store.cards.get(7, 2)
    assert jonas is not None and await store.lapse_card(jonas) is not None
    feed = await store.calendar.open(secret)
    assert feed is not None
    assert [(c.number, c.entries, c.lost_at is not None) for c in feed.cards] == [
        (1, "[]", False),
        (2, '[{"k": "jonas"}]', True),  # served with "log in again"
    ]


async def test_0015_keeps_cards_and_its_downgrade_drops_only_lapsed_ones(store_url: str) -> None:
    await downgrade(store_url, "0014")
    engine = create_engine(store_url)
    at = datetime(2026, 11, 1, tzinfo=UTC)
    try:
        async with engine.begin() as conn:
            await conn.execute(
                text(
                    "INSERT INTO account (chat_id, card, token, key_id, connected_at, "
                    "expiry_warned, label) VALUES (1, 1, 'sealed', 'k', :at, false, 'Karen')"
                ),
                {"at": at},
            )
        await upgrade(store_url)
        async with engine.begin() as conn:
            found = (await conn.execute(text("SELECT label, token, lapsed_at FROM card"))).all()
            assert [tuple(row) for row in found] == [("Karen", "sealed", None)]
            await conn.execute(
                text(
                    "INSERT INTO card (chat_id, number, connected_at, expiry_warned, label, "
                    "lapsed_at) VALUES (1, 2, :at, false, 'Jonas', :at)"
                ),
                {"at": at},
            )
        await downgrade(store_url, "0014")
        async with engine.connect() as conn:
            left = (await conn.execute(text("SELECT card, label FROM account"))).all()
        assert [tuple(row) for row in left] == [(1, "Karen")]
        await upgrade(store_url)
    finally:
        await engine.dispose()
