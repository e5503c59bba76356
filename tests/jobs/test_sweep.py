"""The sweep against the sandbox and the Telegram stand-in, on a real SQLite store."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any

import pytest
from sqlalchemy import text
from telegram import Bot

from bot.actions.outbox import Offers
from bot.jobs.delivery import Deliverer
from bot.library.models import Loan
from bot.rules.reminders import loan_key
from storage.store import Card
from tests.fixtures.patrons import JONAS, KAREN, OLE
from tests.fixtures.storage import reminder_states, rows
from tests.fixtures.telegram import TEST_BOT_TOKEN
from tests.jobs.conftest import Rig

KAREN_CHAT = 501
JONAS_CHAT = 502
OLE_CHAT = 503
SHORT_LEASE = timedelta(seconds=0.5)


def _labels(message: Any) -> list[str]:
    return [button.text for row in message.buttons for button in row]


async def _connect_synthetic(rig: Rig, count: int, first_chat: int = 700) -> list[int]:
    """`count` patrons who each have a loan due soon; returns their chat ids."""
    chats = []
    for offset, patron in enumerate(rig.sandbox.add_patrons(count, due_every=1)):
        chat_id = first_chat + offset
        await rig.connect(chat_id, patron.user_id)
        chats.append(chat_id)
    return chats


def test_only_the_smallest_threshold_reached_counts() -> None:
    today = date(2026, 1, 10)
    days = (3, 1, 0)

    def key(due_in: int) -> str | None:
        return loan_key(Loan(loan_id="L1", due_date=today + timedelta(days=due_in)), today, days)

    assert key(20) is None and key(4) is None
    assert key(3) == "loan:L1:2026-01-13:3"
    assert key(2) == "loan:L1:2026-01-12:3"  # a missed day: the 3-day one, not nothing
    assert key(1) == "loan:L1:2026-01-11:1"
    assert key(0) == "loan:L1:2026-01-10:0"
    assert key(-1) == "loan:L1:2026-01-09:overdue"
    # A due date the bot cannot read is not dropped: it gets a key of its own (told once).
    unreadable = loan_key(Loan(loan_id="L2", due_date="31/02/2026"), today, days)
    assert unreadable is not None and unreadable.startswith("loan:L2:unreadable:")
    assert loan_key(Loan(loan_id="L3", due_date=None), today, days) is None


async def test_digest_has_exactly_the_due_loans_and_ready_holds(rig: Rig) -> None:
    await rig.connect(KAREN_CHAT, KAREN)
    await rig.connect(JONAS_CHAT, JONAS, language="en")
    await rig.connect(OLE_CHAT, OLE)

    report = await rig.sweep()

    assert (report.patrons, report.messages, report.reminders) == (3, 2, 8)
    assert not report.failures
    [karen] = rig.telegram.sent(KAREN_CHAT)
    for title in (
        "Rødt & sort <2. udgave>",  # overdue
        "Snak_om_*stjerner*",  # due today
        "Æbler, øl og ålegræs",  # tomorrow
        "Kongens fald",  # in 3 days
        "Frøken Smillas fornemmelse for sne",  # ready for pick-up
        "Kvinden i buret",  # ready for pick-up
    ):
        assert title in karen.text
    for title in ("Den afrikanske farm", "Harry Potter", "Barndommens gade", "Dune", "Hundrede"):
        assert title not in karen.text  # due in 20 days, or holds not ready
    assert "Påmindelse fra din biblioteksbot" in karen.text
    assert karen.text.index("Overskredet") < karen.text.index("Rødt & sort")
    renew = [label for label in _labels(karen) if label.startswith("Forny:")]
    assert len(renew) == 4 and "Forny: Rødt & sort <2. udgave>" in renew
    assert _labels(karen)[-1] == "Forny disse"
    assert karen.button("Forny disse").callback_data.startswith("renewall:")

    [jonas] = rig.telegram.sent(JONAS_CHAT)
    assert "Reminder from your library bot" in jonas.text
    assert "Lykke-Per" in jonas.text and "Klara og solen" in jonas.text
    assert _labels(jonas) == ["Renew: Lykke-Per", "Renew these"]
    ref = await rig.store.callbacks.callback(
        jonas.button("Lykke-Per").callback_data.split(":")[1], 502
    )
    assert ref is not None and ref.action == "renew" and ref.payload["title"] == "Lykke-Per"

    assert rig.telegram.sent(OLE_CHAT) == []


async def test_second_sweep_the_same_day_sends_nothing(rig: Rig) -> None:
    await rig.connect(KAREN_CHAT, KAREN)
    await rig.sweep()
    again = await rig.sweep()
    assert again.messages == 0 and again.patrons == 0
    # Even a patron the day's sweep had not finished gets nothing twice.
    await rig.store.sweeps.finish_sweeps([(KAREN_CHAT, 1)], date(2000, 1, 1))
    assert (await rig.sweep()).messages == 0
    assert len(rig.telegram.sent(KAREN_CHAT)) == 1


async def test_renewed_loan_is_reminded_again(rig: Rig) -> None:
    token = await rig.connect(JONAS_CHAT, JONAS)
    await rig.sweep()
    [loan] = (await rig.library.user(token)).loans
    renewed = await rig.library.renew(token, loan.loan_id)
    assert isinstance(renewed.return_date, date) and isinstance(loan.due_date, date)

    # Three days before the new due date: the same loan and threshold, a new due date.
    later = renewed.return_date - timedelta(days=3)
    report = await rig.sweep(today=later)

    assert report.messages == 1
    first, second = rig.telegram.sent(JONAS_CHAT)
    assert "Lykke-Per" in first.text and "Lykke-Per" in second.text
    assert "Klara og solen" not in second.text  # the hold was told about already
    assert (await rig.sweep(today=later)).messages == 0


class _CrashingBot(Bot):
    """Delivers the n-th message, then never returns: the sweep dies with it in flight."""

    def __init__(self, *args: Any, crash_at: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._crash: dict[str, int] = {"at": crash_at, "calls": 0}
        self._in_flight = asyncio.Event()

    async def do_api_request(self, *args: Any, **kwargs: Any) -> Any:
        self._crash["calls"] += 1
        answer = await super().do_api_request(*args, **kwargs)
        if self._crash["calls"] == self._crash["at"]:
            self._in_flight.set()
            await asyncio.Event().wait()
        return answer


async def test_crash_mid_sweep_loses_nothing_and_repeats_at_most_one(rig: Rig) -> None:
    chats = await _connect_synthetic(rig, 6)
    crashing = _CrashingBot(TEST_BOT_TOKEN, base_url=f"{rig.telegram.url}/bot", crash_at=3)
    async with crashing:
        task = asyncio.create_task(
            rig.sweep(bot=crashing, concurrency=1, batch_size=2, lease=SHORT_LEASE)
        )
        await asyncio.wait_for(crashing._in_flight.wait(), 10)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert sum(len(rig.telegram.sent(chat)) for chat in chats) == 3

    await asyncio.sleep(SHORT_LEASE.total_seconds() + 0.1)  # the dead sweeper's leases end
    report = await rig.sweep()

    per_chat = Counter({chat: len(rig.telegram.sent(chat)) for chat in chats})
    assert all(per_chat[chat] >= 1 for chat in chats), per_chat  # nothing lost
    assert sum(per_chat.values()) == len(chats) + 1, per_chat  # only the one in flight again
    [repeated] = [chat for chat in chats if per_chat[chat] == 2]
    first, second = rig.telegram.sent(repeated)
    assert first.text == second.text
    assert report.messages == 4
    assert (await rig.sweep()).messages == 0


class _TurnHeld:
    """The rig's deliverer, noting when each chat's digest was prepared (its buttons made, its
    intents recorded just before) and sent; the first send waits for `turn`, as a digest
    waits for its turn in the budget."""

    def __init__(self, inner: Deliverer[Any]) -> None:
        self.inner = inner
        self.events: list[tuple[str, int]] = []
        self.turn = asyncio.Event()
        self.second_prepared = asyncio.Event()

    async def keyboards(self, wanted: Sequence[Offers]) -> list[Any]:
        self.events += [("prepared", message.chat_id) for message in wanted]
        if sum(event == "prepared" for event, _ in self.events) >= 2:
            self.second_prepared.set()
        return await self.inner.keyboards(wanted)

    async def login_message(self, cards: Sequence[Card], lang: str, lead: str) -> Any:
        return await self.inner.login_message(cards, lang, lead)

    async def send(self, chat_id: int, text: str, keyboard: Any = None, **kwargs: Any) -> Any:
        first = not any(event == "sending" for event, _ in self.events)
        self.events.append(("sending", chat_id))
        if first:
            await self.turn.wait()
        delivery = await self.inner.send(chat_id, text, keyboard, **kwargs)
        self.events.append(("sent", chat_id))
        return delivery

    async def send_login(self, chat_id: int, lang: str, lead: str) -> Any:
        return await self.inner.send_login(chat_id, lang, lead)


async def test_the_next_digest_is_prepared_while_one_waits_for_its_turn(rig: Rig) -> None:
    chats = await _connect_synthetic(rig, 3)
    held = _TurnHeld(rig.deliverer())
    task = asyncio.create_task(rig.sweep(deliverer=held, concurrency=1))
    try:
        # The first digest's send waits; the second is prepared meanwhile, not after it.
        await asyncio.wait_for(held.second_prepared.wait(), 10)
        assert held.events == [
            ("prepared", chats[0]),
            ("sending", chats[0]),
            ("prepared", chats[1]),
        ]
        assert set((await reminder_states(rig.store, chats[1])).values()) == {"intent"}
        assert all(rig.telegram.sent(chat) == [] for chat in chats)
    finally:
        held.turn.set()
    report = await asyncio.wait_for(task, 10)

    assert report.messages == 3 and not report.failures
    assert [len(rig.telegram.sent(chat)) for chat in chats] == [1, 1, 1]
    sends = [(event, chat) for event, chat in held.events if event != "prepared"]
    # One at a time (concurrency 1), in the order claimed.
    assert sends == [(event, chat) for chat in chats for event in ("sending", "sent")]
    assert [chat for event, chat in held.events if event == "prepared"] == chats


async def test_a_prepared_digest_whose_lease_ran_out_while_it_waited_is_not_sent(
    rig: Rig,
) -> None:
    chats = await _connect_synthetic(rig, 3)
    held = _TurnHeld(rig.deliverer())
    lease = timedelta(seconds=1.5)  # renewed every 0.5 s
    task = asyncio.create_task(rig.sweep(deliverer=held, concurrency=1, lease=lease))

    async def lease_until(chat_id: int) -> object:
        [(until,)] = await rows(
            rig.store, "SELECT lease_until FROM card WHERE chat_id = :c", c=chat_id
        )
        return until

    try:
        await asyncio.wait_for(held.second_prepared.wait(), 10)
        # Another sweep takes the second card over while its digest waits for its turn.
        await rig.store.database.run(
            lambda conn: conn.execute(
                text("UPDATE card SET lease_owner = 'other' WHERE chat_id = :c"), {"c": chats[1]}
            )
        )
        async with asyncio.timeout(10):  # two beats since: the sweep has seen it go
            for _ in range(2):
                before = await lease_until(chats[0])
                while await lease_until(chats[0]) == before:  # noqa: ASYNC110
                    await asyncio.sleep(0.05)
    finally:
        held.turn.set()
    report = await asyncio.wait_for(task, 10)

    assert rig.telegram.sent(chats[1]) == []  # the sweep that took it over sends it
    assert [len(rig.telegram.sent(chat)) for chat in (chats[0], chats[2])] == [1, 1]
    assert report.messages == 2


async def test_cards_with_nothing_due_are_checked_while_the_digests_wait_their_turn(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Loans due today by yesterday's check (the urgent ranks), and cards with nothing due soon:
    # while the first digest waits for its turn, every quiet card is checked, rather than
    # after the last digest is out.
    urgent = await _connect_synthetic(rig, 10)
    await rig.store.database.run(
        lambda conn: conn.execute(
            text("UPDATE card SET first_due = :today"), {"today": rig.sandbox.today}
        )
    )
    quiet_tokens = {
        await rig.connect(900 + n, patron.user_id)
        for n, patron in enumerate(rig.sandbox.add_patrons(8, mix=("none",)))
    }
    checked: set[str] = set()
    user = rig.library.user

    async def noting(token: str) -> Any:
        checked.add(token)
        return await user(token)

    monkeypatch.setattr(rig.library, "user", noting)
    held = _TurnHeld(rig.deliverer())
    task = asyncio.create_task(rig.sweep(deliverer=held, concurrency=1))
    try:
        try:
            async with asyncio.timeout(10):
                while not quiet_tokens <= checked:  # noqa: ASYNC110 (no event for a call)
                    await asyncio.sleep(0.01)
        except TimeoutError:
            raise AssertionError(
                f"{len(quiet_tokens - checked)} of 8 quiet cards unchecked while a digest waited"
            ) from None
        assert all(rig.telegram.sent(chat) == [] for chat in urgent)  # the first still waits
    finally:
        held.turn.set()
    report = await asyncio.wait_for(task, 10)

    assert report.messages == 10 and not report.failures
    assert [len(rig.telegram.sent(chat)) for chat in urgent] == [1] * 10
    assert all(rig.telegram.sent(900 + n) == [] for n in range(8))


async def test_expired_token_gets_one_reconnect_message(rig: Rig) -> None:
    token = await rig.connect(KAREN_CHAT, KAREN, language="en")
    await rig.connect(JONAS_CHAT, JONAS)
    rig.sandbox.expire_token(token)

    report = await rig.sweep()

    assert report.failures["token_rejected"] == 1
    [message] = rig.telegram.sent(KAREN_CHAT)
    assert "expired" in message.text and "Log in again" in message.text
    login = message.button("Log in again")
    assert login.url and login.url.startswith(rig.settings.OAUTH_URL or "-")
    assert "state=" in login.url
    assert await rig.store.cards.get(KAREN_CHAT) is None
    assert len(rig.telegram.sent(JONAS_CHAT)) == 1  # the others still get theirs

    next_day = await rig.sweep(today=rig.sandbox.today + timedelta(days=1))
    assert next_day.failures["token_rejected"] == 0
    assert len(rig.telegram.sent(KAREN_CHAT)) == 1


async def test_blocked_user_is_marked_inactive(rig: Rig) -> None:
    await rig.connect(KAREN_CHAT, KAREN)
    await rig.connect(JONAS_CHAT, JONAS)
    rig.telegram.block(KAREN_CHAT)

    report = await rig.sweep()

    assert report.failures["blocked"] == 1
    assert (await rig.store.chats.chat(KAREN_CHAT)).active is False
    assert rig.telegram.sent(KAREN_CHAT) == []
    assert len(rig.telegram.sent(JONAS_CHAT)) == 1
    tomorrow = rig.sandbox.today + timedelta(days=1)
    await rig.store.sweeps.set_next_checks({(KAREN_CHAT, 1): tomorrow, (JONAS_CHAT, 1): tomorrow})
    next_day = await rig.sweep(today=tomorrow)
    assert next_day.patrons == 1  # only Jonas: an inactive chat is not swept


async def test_a_chat_telegram_no_longer_knows_is_marked_inactive(rig: Rig) -> None:
    await rig.connect(KAREN_CHAT, KAREN)
    await rig.connect(JONAS_CHAT, JONAS)
    rig.telegram.failures.fail("sendMessage", 400, description="Bad Request: chat not found")

    report = await rig.sweep(concurrency=1)

    assert report.failures["blocked"] == 1 and not report.needs_retry
    sent = len(rig.telegram.sent(KAREN_CHAT)) + len(rig.telegram.sent(JONAS_CHAT))
    assert sent == 1 and report.messages == 1
    chats = [await rig.store.chats.chat(chat) for chat in (KAREN_CHAT, JONAS_CHAT)]
    assert sorted(chat.active for chat in chats) == [False, True]


async def test_a_refused_message_is_left_for_the_retry_sweep(rig: Rig) -> None:
    await rig.connect(KAREN_CHAT, KAREN)
    rig.telegram.failures.fail("sendMessage", 400, description="Bad Request: can't parse entities")

    report = await rig.sweep(lease=SHORT_LEASE)

    assert report.failures["telegram"] == 1 and report.needs_retry
    assert rig.telegram.sent(KAREN_CHAT) == []
    assert (await rig.store.chats.chat(KAREN_CHAT)).active is True
    await asyncio.sleep(SHORT_LEASE.total_seconds() + 0.1)
    retry = await rig.sweep()
    assert retry.messages == 1 and len(rig.telegram.sent(KAREN_CHAT)) == 1


async def test_429_is_waited_out_and_nothing_is_lost(rig: Rig) -> None:
    await rig.connect(KAREN_CHAT, KAREN)
    await rig.connect(JONAS_CHAT, JONAS)
    rig.telegram.failures.fail("sendMessage", 429, retry_after=1)

    report = await rig.sweep(concurrency=1)

    assert not report.failures and report.messages == 2
    assert len(rig.telegram.sent(KAREN_CHAT)) == 1
    assert len(rig.telegram.sent(JONAS_CHAT)) == 1


async def test_platform_failure_for_one_patron_is_retried_later(rig: Rig) -> None:
    await rig.connect(KAREN_CHAT, KAREN)
    await rig.connect(JONAS_CHAT, JONAS)
    rig.sandbox.faults.fail_next = {"/v3/user": [503]}  # the first patron claimed: Karen

    report = await rig.sweep(concurrency=1, lease=SHORT_LEASE)

    assert report.failures["platform"] == 1 and report.needs_retry
    assert rig.telegram.sent(KAREN_CHAT) == []
    assert len(rig.telegram.sent(JONAS_CHAT)) == 1

    await asyncio.sleep(SHORT_LEASE.total_seconds() + 0.1)
    retry = await rig.sweep()
    assert retry.patrons == 1 and retry.messages == 1 and not retry.needs_retry
    assert "Kongens fald" in rig.telegram.sent(KAREN_CHAT)[0].text
    assert len(rig.telegram.sent(JONAS_CHAT)) == 1


async def test_reminders_off_or_custom_days(rig: Rig) -> None:
    await rig.connect(KAREN_CHAT, KAREN)
    await rig.connect(JONAS_CHAT, JONAS)
    await rig.store.set_reminders(KAREN_CHAT, enabled=False)
    await rig.store.set_reminders(JONAS_CHAT, days=[1, 0])  # "in 3 days" is not due yet

    await rig.sweep()

    assert rig.telegram.sent(KAREN_CHAT) == []
    [jonas] = rig.telegram.sent(JONAS_CHAT)
    assert "Lykke-Per" not in jonas.text and "Klara og solen" in jonas.text
