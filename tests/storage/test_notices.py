"""What the notices keep (table `notice_seen` per card, the chat's toggles): only digests,
positions and pids; replaced per kind; gone with /logout (of the card) and /forget."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import date

from storage.chats import DEFAULT_NOTICES, dump_notices, parse_notices
from storage.store import Card, Seen, Store
from tests.fixtures.storage import FakeClock, connect, rows

OpenStore = Callable[..., AbstractAsyncContextManager[Store]]


async def _card(store: Store, chat_id: int) -> Card:
    card = await store.cards.get(chat_id)
    assert card is not None
    return card


async def test_toggles_and_what_was_seen_are_kept_per_kind(store: Store) -> None:
    for chat_id in (1, 2):
        await connect(store, chat_id)
    chat = await store.chats.chat(1)
    assert chat.notices == frozenset({"refused", "fees", "pickup", "orders"})
    card = await _card(store, 1)
    assert not card.fees_known and card.order_check is None
    await store.notices.keep(
        {(1, 1): Seen(fees={"aa11"}, fees_known=True), (2, 1): Seen(queue={"O1": 4})}
    )
    assert (await _card(store, 1)).fees_known and not (await _card(store, 2)).fees_known
    assert await store.notices.seen(1) == {"fee:aa11": None}
    assert await store.notices.seen(2) == {"queue:O1": "4"}

    await store.notices.watch_order(1, "870970-basis:1", "202611221015", date(2026, 11, 23))
    await store.notices.watch_order(1, "870970-basis:2", "202611221115", date(2026, 11, 24))
    assert (await _card(store, 1)).order_check == date(2026, 11, 23)  # the earliest
    # Each kind given replaces that kind only.
    await store.notices.keep({(1, 1): Seen(fees={"bb22"}), (2, 1): Seen(queue={"O1": 2, "O2": 7})})
    assert await store.notices.seen(1) == {
        "fee:bb22": None,
        "order:870970-basis:1": "202611221015",
        "order:870970-basis:2": "202611221115",
    }
    assert await store.notices.seen(2) == {"queue:O1": "2", "queue:O2": "7"}
    await store.notices.keep({(1, 1): Seen(orders={}, order_check=None)})
    assert await store.notices.seen(1) == {"fee:bb22": None}
    assert (await _card(store, 1)).order_check is None

    # Turning fees off forgets that they were known: turned on, they are recorded again.
    off = await store.chats.set_notices(1, frozenset({"queue"}))
    assert off.notices == frozenset({"queue"}) and not (await _card(store, 1)).fees_known
    assert (await store.chats.set_notices(1, frozenset())).notices == frozenset()


async def test_logout_and_forget_remove_what_the_notices_saw(store: Store) -> None:
    for chat_id in (1, 2, 3):
        await connect(store, chat_id)
        await store.notices.keep({(chat_id, 1): Seen(fees={"aa11"}, queue={"O1": 3})})
    await store.remove_card(1, logout=True)
    await store.forget_chat(2)
    for chat_id, left in ((1, 0), (2, 0), (3, 2)):
        found = await rows(store, "SELECT item FROM notice_seen WHERE chat_id = :c", c=chat_id)
        assert len(found) == left, chat_id


def test_toggles_round_trip_and_defaults() -> None:
    assert parse_notices(None) == DEFAULT_NOTICES and "queue" not in DEFAULT_NOTICES
    assert parse_notices(dump_notices({"queue", "fees", "bogus"})) == {"queue", "fees"}
    assert parse_notices("") == frozenset()


async def test_a_title_is_claimed_for_one_order_per_card(store: Store) -> None:
    """The claim `/order` makes before sending: the first caller wins, racing ones lose; a
    refusal lets it go; letting go an older claim never drops a newer one."""
    await connect(store, 5)
    won = await asyncio.gather(
        *(store.notices.claim_order(5, "22677608", "202611241200") for _ in range(4))
    )
    assert sorted(won) == [False, False, False, True]
    assert await store.notices.ordered(5, "22677608") == "202611241200"
    assert await store.notices.ordered(5, "22677608", number=2) is None  # per card
    await store.notices.release_order(5, "22677608", placed="202611231200")  # not this claim
    assert not await store.notices.claim_order(5, "22677608", "202611241300")
    await store.notices.release_order(5, "22677608", placed="202611241200")
    assert await store.notices.claim_order(5, "22677608", "202611241300")
    await store.remove_card(5, logout=True)
    assert await rows(store, "SELECT item FROM notice_seen WHERE chat_id = 5") == []


async def test_a_loan_is_claimed_for_one_renewal_a_day(store: Store) -> None:
    """The claim a renewal makes before sending: one caller a day wins, racing ones lose; the
    next day's claim takes the row over; a renewal not made lets it go."""
    await connect(store, 6)
    today, tomorrow = dt.date(2026, 11, 28), dt.date(2026, 11, 29)
    won = await asyncio.gather(
        *(store.notices.claim_renewal(6, "4940377131", today) for _ in range(4))
    )
    assert sorted(won) == [False, False, False, True]
    assert await store.notices.claim_renewal(6, "4940377131", today, number=2)  # per card
    assert await store.notices.claim_renewal(6, "4940377131", tomorrow)
    assert not await store.notices.claim_renewal(6, "4940377131", tomorrow)
    await store.notices.release_renewals(6, ["4940377131"], today)  # not that day's claim
    assert not await store.notices.claim_renewal(6, "4940377131", tomorrow)
    await store.notices.release_renewals(6, ["4940377131"], tomorrow)
    assert await store.notices.claim_renewal(6, "4940377131", tomorrow)


async def test_a_renewal_without_an_answer_keeps_its_claim_until_it_is_surely_undone(
    open_store: OpenStore, clock: FakeClock
) -> None:
    """A claim whose renewal got no answer is kept, with the due date it was sent at and when:
    only a claim naming that due date (read afresh) at least `settled` later takes it over
    (the renewal did not happen), and only that day."""
    today, due, moved = dt.date(2026, 11, 28), dt.date(2026, 11, 30), dt.date(2026, 12, 28)
    settled = dt.timedelta(minutes=10)
    async with open_store() as store:
        await connect(store, 6)
        assert await store.notices.claim_renewal(6, "L1", today)
        await store.notices.hold_unanswered(6, {"L1": due}, today)
        [(loan, lost)] = (await store.notices.renewed(6, today)).items()
        assert loan == "L1" and lost is not None
        assert (lost.due, lost.at) == (due, clock.now.replace(second=0, microsecond=0))
        assert not await store.notices.claim_renewal(6, "L1", today)
        # Too soon: the library may still be at work on it.
        assert not await store.notices.claim_renewal(6, "L1", today, due=due, settled=settled)
        clock.advance(settled + dt.timedelta(minutes=1))
        assert not await store.notices.claim_renewal(6, "L1", today, due=moved, settled=settled)
        assert await store.notices.claim_renewal(6, "L1", today, due=due, settled=settled)
        assert await store.notices.renewed(6, today) == {"L1": None}
        assert not await store.notices.claim_renewal(6, "L1", today, due=due, settled=settled)
        await store.notices.hold_unanswered(6, {"L1": due}, today)
        assert await store.notices.claim_renewal(6, "L1", today + dt.timedelta(days=1))
