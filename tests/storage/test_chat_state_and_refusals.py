"""What the store keeps for issue 15: Telegram's language, why an account ended, a fresh login
after logout, refused renewals, expired login states that still name their chat."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import UTC, date, timedelta

import pytest
from sqlalchemy import bindparam, column, select, table, update
from sqlalchemy.exc import DBAPIError

from storage.store import Store
from storage.tables import CARD
from tests.fixtures.storage import FakeClock, rows

OpenStore = Callable[..., AbstractAsyncContextManager[Store]]
NCIP = "NCIPMDAxOXwwMDAwMDMyNDg0fFJvc2VuLCBNaWNoYWVsfFNtdXR8fHw="


async def test_chat_remembers_language_reason_and_fresh_login(store: Store) -> None:
    await store.chats.set_telegram_language(1, "en-GB-oxendict-and-much-more")
    await store.chats.set_card_ended(1, "logged_out")
    await store.chats.set_fresh_login(1, True)
    chat = await store.chats.chat(1)
    assert chat.telegram_language == "en-GB-oxendict-a"  # cut to the column
    assert chat.language is None
    assert (chat.card_ended, chat.fresh_login) == ("logged_out", True)
    await store.chats.set_connected(1)
    chat = await store.chats.chat(1)
    assert (chat.card_ended, chat.fresh_login) == (None, False)
    assert chat.telegram_language == "en-GB-oxendict-a"
    assert (await store.chats.chat(2)).fresh_login is False  # the defaults of a chat with no row


async def test_refusals_per_chat_and_loan(open_store: OpenStore, clock: FakeClock) -> None:
    async with open_store() as store:
        await store.renewal_refusals.record_refusal(
            1, NCIP, "2026-01-23", "Maximum Renewals Exceeded"
        )
        await store.renewal_refusals.record_refusal(1, "L2", "2026-01-24", "x" * 500)
        await store.renewal_refusals.record_refusal(
            2, NCIP, "2026-01-25", "Agency authentication failed"
        )
        found = await store.renewal_refusals.refusals(1)
        assert set(found) == {NCIP, "L2"}
        assert found[NCIP].due == "2026-01-23" and len(found["L2"].reason) == 200
        # A later refusal of the same loan replaces the earlier one.
        await store.renewal_refusals.record_refusal(1, NCIP, "2026-02-22", "Renewal Not Allowed")
        assert (await store.renewal_refusals.refusals(1))[NCIP].due == "2026-02-22"
        await store.renewal_refusals.record_refusal(
            1, "L9", "2026-01-25", "Renewal Not Allowed", number=2
        )
        assert set(await store.renewal_refusals.refusals(1)) == {NCIP, "L2"}  # card 2's are its own
        assert set(await store.renewal_refusals.refusals(1, 2)) == {"L9"}
        many = await store.renewal_refusals.refusals_many([(1, 1), (2, 1), (3, 1)])
        assert set(many) == {(1, 1), (2, 1)} and set(many[(2, 1)]) == {NCIP}
        await store.renewal_refusals.clear_refusal(1, "L2")
        assert set(await store.renewal_refusals.refusals(1)) == {NCIP}
        clock.advance(timedelta(days=8))  # remembered for a week at most
        assert await store.renewal_refusals.refusals(1) == {}
        assert await store.renewal_refusals.refusals_many([(1, 1), (2, 1)]) == {}


async def test_an_expired_login_state_still_names_its_chat(
    open_store: OpenStore, clock: FakeClock
) -> None:
    async with open_store() as store:
        fresh = await store.logins.create_login_state(7)
        stale = await store.logins.create_login_state(8, ttl=timedelta(minutes=1))
        clock.advance(timedelta(minutes=2))
        assert await store.logins.take_login_state(fresh) == (7, False)
        assert await store.logins.take_login_state(stale) == (8, True)
        assert await store.logins.take_login_state(fresh) is None  # single use
        assert await store.logins.take_login_state("never-issued") is None


async def test_the_buttons_of_a_message_in_one_query(store: Store) -> None:
    ids = await store.callbacks.put_callbacks(
        1, [("renew", {"loan_id": "A"}), ("renew", {"loan_id": "B"})]
    )
    [other] = await store.callbacks.put_callbacks(2, [("renew", {"loan_id": "C"})])
    found = await store.callbacks.callbacks_many([*ids, other, "unknown"], 1)
    assert sorted(ref.payload["loan_id"] for ref in found) == ["A", "B"]


async def test_read_chat_gives_what_the_separate_reads_give(store: Store) -> None:
    """A list command's one transaction: the chat's settings, its cards and their refusals, as
    each repository reads them alone, and every write before it seen."""
    empty = await store.read_chat(7, cards=True, refusals=True)
    assert (empty.settings, empty.cards, empty.refusals) == (await store.chats.chat(7), [], {})
    for _ in range(2):
        code = await store.create_pending_link(7, "token-of-a-card", None)
        assert await store.complete_link(7, code) is not None
    await store.chats.set_language(7, "da")
    await store.renewal_refusals.record_refusal(7, NCIP, "2026-01-23", "Renewal Not Allowed")
    await store.renewal_refusals.record_refusal(7, "L1", "2026-01-23", "Reserved")
    await store.renewal_refusals.record_refusal(7, "L2", "2026-01-24", "On hold", number=2)
    await store.renewal_refusals.record_refusal(8, "L3", "2026-01-24", "someone else's")
    await store.calendar.create(7, {})
    read = await store.read_chat(7, cards=True, refusals=True)
    assert read.settings == await store.chats.chat(7) and read.settings.language == "da"
    assert read.settings.has_calendar
    # Two refusals of card 1 read in one statement: the card is there once all the same.
    assert read.cards == await store.cards.of_chat(7)
    assert [card.number for card in read.cards] == [1, 2]
    assert read.refusals == {
        1: await store.renewal_refusals.refusals(7, 1),
        2: await store.renewal_refusals.refusals(7, 2),
    }
    assert set(read.refusals[1]) == {NCIP, "L1"} and set(read.refusals[2]) == {"L2"}
    assert read.refusals[1]["L1"].reason == "Reserved"
    cards_only = await store.read_chat(7, cards=True)
    assert (cards_only.cards, cards_only.refusals) == (read.cards, None)
    alone = await store.read_chat(7)  # settings only, unless asked
    assert (alone.settings, alone.cards, alone.refusals) == (read.settings, None, None)


async def test_read_chat_of_a_chat_without_settings_sees_its_feed(store: Store) -> None:
    """No settings row, a card and a calendar feed: the defaults, the card, the feed."""
    code = await store.create_pending_link(9, "token-of-a-card", None)
    assert await store.complete_link(9, code) is not None
    await store.calendar.create(9, {})
    assert await rows(store, "SELECT chat_id FROM chat WHERE chat_id = 9") == []
    read = await store.read_chat(9, cards=True, refusals=True)
    assert read.settings == await store.chats.chat(9) and read.settings.has_calendar
    assert [card.token for card in read.cards or []] == ["token-of-a-card"]
    assert read.refusals == {}


async def test_a_commands_read_gives_sqlalchemys_values_and_hides_its_own(store: Store) -> None:
    """`Database.fetch`, what every command reads with, on SQLite and PostgreSQL alike: aware
    UTC times, dates and booleans as SQLAlchemy gives them, and a failure is SQLAlchemy's error
    without the values it was given, after which reads go on."""
    code = await store.create_pending_link(5, "token-of-a-card", None)
    assert await store.complete_link(5, code) is not None
    marked = update(CARD).values(swept_on=date(2026, 11, 24), expiry_warned=True)
    await store.database.run(lambda conn: conn.execute(marked))
    columns = (CARD.c.connected_at, CARD.c.swept_on, CARD.c.expiry_warned)
    statement = select(*columns).where(CARD.c.chat_id == bindparam("chat_id"))
    [(connected_at, swept_on, warned)] = await store.database.fetch(statement, {"chat_id": 5})
    assert connected_at.tzinfo == UTC and swept_on == date(2026, 11, 24) and warned is True

    missing = (
        select(column("x"))
        .select_from(table("no_such_table"))
        .where(column("x") == bindparam("secret"))
    )
    with pytest.raises(DBAPIError) as failed:
        await store.database.fetch(missing, {"secret": "a-token-never-shown"})
    assert "a-token-never-shown" not in str(failed.value)
    after = await store.read_chat(5, cards=True)  # reads go on
    assert [card.token for card in after.cards or []] == ["token-of-a-card"]
