"""A family's cards in one chat: one digest with a section per card, exactly once per card, and
a refused token forgets only its own card."""

from __future__ import annotations

import json
from datetime import timedelta

from tests.fixtures.patrons import JONAS, KAREN
from tests.fixtures.storage import rows
from tests.jobs.conftest import Rig

FAMILY = 601


async def family(rig: Rig) -> tuple[str, str]:
    """Karen (card 1) and Jonas (card 2) in one chat, named."""
    karen = await rig.connect(FAMILY, KAREN, language="en")
    jonas = await rig.connect(FAMILY, JONAS, language="en")
    assert [card.number for card in await rig.store.cards.of_chat(FAMILY)] == [1, 2]
    await rig.store.cards.set_label(FAMILY, 1, "Karen")
    await rig.store.cards.set_label(FAMILY, 2, "Jonas")
    return karen, jonas


async def test_one_digest_with_a_section_per_card(rig: Rig) -> None:
    await family(rig)

    report = await rig.sweep()

    assert report.patrons == 2
    [digest] = rig.telegram.sent(FAMILY)  # one message for the family, not one per card
    karen, jonas = digest.html.index("👤 <b>Karen</b>"), digest.html.index("👤 <b>Jonas</b>")
    assert karen < jonas
    # Jonas's hold is in his section, Karen's overdue loans in hers.
    assert "Overdue" in digest.text[:jonas] and "Overdue" not in digest.text[jonas:]
    assert "ready for pick-up" in digest.text[jonas:].lower()
    labels = [button.text for row in digest.buttons for button in row]
    assert "Renew these: Karen" in labels and "Renew these: Jonas" in labels
    # Each card's reminders are its own: card 2's keys are marked as card 2's.
    keys = [key for (key,) in await rows(rig.store, "SELECT key FROM reminder_log")]
    assert any(key.startswith("c2:hold:") for key in keys)
    assert any(key.startswith("loan:") for key in keys)
    assert not any(key.startswith("c1:") for key in keys)

    again = await rig.sweep(today=rig.sandbox.today + timedelta(days=1))
    assert again.messages <= 1
    assert "Jonas" not in "".join(m.text for m in rig.telegram.sent(FAMILY)[1:])  # told once


async def test_the_renew_buttons_carry_their_card(rig: Rig) -> None:
    await family(rig)
    await rig.sweep()
    payloads = await rows(rig.store, "SELECT action, payload FROM callback_ref")
    cards = {str(payload) for action, payload in payloads if action == "renewall"}
    assert any('"card": 1' in p or "'card': 1" in p for p in cards)
    assert any('"card": 2' in p or "'card': 2" in p for p in cards)
    # And name it by identity, never by its number alone (numbers are reused after a logout).
    identities = {card.card_id for card in await rig.store.cards.of_chat(FAMILY)}
    for action, payload in payloads:
        if action in ("renewall", "renew"):
            stored = payload if isinstance(payload, dict) else json.loads(str(payload))
            assert stored["cid"] in identities


async def test_a_refused_token_lapses_only_its_card_and_is_told_once(rig: Rig) -> None:
    _, jonas = await family(rig)
    rig.sandbox.expire_token(jonas)

    report = await rig.sweep()

    assert report.failures["token_rejected"] == 1
    messages = rig.telegram.sent(FAMILY)
    [lapsed] = [m for m in messages if m.text.startswith("🔑")]
    # It says which card, that its reminders are paused, and how to log it in again.
    assert lapsed.text.startswith("🔑 Jonas's library login has lapsed, so its reminders are")
    assert "Log in again" in lapsed.text or any(b.url for row in lapsed.buttons for b in row)
    [digest] = [m for m in messages if m is not lapsed]
    assert "Karen" in digest.html and "Jonas" not in digest.html
    # The card stays, by its name; the next days' sweeps never ask the library for it, and
    # say nothing more of it.
    cards = await rig.store.cards.of_chat(FAMILY, lapsed=True)
    assert [(card.number, card.label, card.is_lapsed) for card in cards] == [
        (1, "Karen", False),
        (2, "Jonas", True),
    ]
    later = await rig.sweep(today=rig.day(1))
    assert later.patrons == 1 and not later.failures
    assert [m for m in rig.telegram.sent(FAMILY) if m.text.startswith("🔑")] == [lapsed]


async def test_the_cards_of_a_chat_stay_together_across_batches(rig: Rig) -> None:
    """A claim batch may end between a chat's cards; they still make one digest."""
    await family(rig)
    await rig.connect(FAMILY + 1, KAREN, language="en")

    report = await rig.sweep(batch_size=1, concurrency=1)

    assert report.patrons == 3
    assert len(rig.telegram.sent(FAMILY)) == 1
    assert len(rig.telegram.sent(FAMILY + 1)) == 1
    swept = await rows(rig.store, "SELECT count(*) FROM card WHERE swept_on IS NOT NULL")
    assert swept == [(3,)]


async def test_a_card_logged_out_takes_only_its_own_memory(rig: Rig) -> None:
    await family(rig)
    await rig.store.renewal_refusals.record_refusal(
        FAMILY, "L1", "2027-01-01", "Renewal Not Allowed", number=2
    )
    await rig.store.renewal_refusals.record_refusal(
        FAMILY, "L1", "2027-01-01", "Renewal Not Allowed", number=1
    )
    removed = await rig.store.remove_card(FAMILY, 2, logout=True)
    assert removed is not None and removed.label == "Jonas"
    assert await rows(rig.store, "SELECT number FROM renewal_refusal") == [(1,)]


async def test_a_big_familys_digest_keeps_within_telegrams_hundred_buttons(rig: Rig) -> None:
    """Five cards with 20 loans due each would want 105 buttons, which Telegram refuses (the
    stand-in too): each card keeps "renew these", and its loans go without buttons of their
    own, in one delivery."""
    rig.telegram.add_chat(FAMILY, language_code="en")
    for n, patron in enumerate(rig.sandbox.add_patrons(5)):
        data = rig.sandbox.patron_data(patron.user_id)
        data.orders.clear()
        data.debt.clear()
        data.loans[:] = [
            {
                "loanId": f"L{n}-{i}",
                "dueDate": rig.day(3).isoformat(),
                "title": f"Billedbog {n}-{i}",
                "creator": "Forfatter",
                "materialId": f"5{n}{i:04d}",
                "titleId": "29318871",
            }
            for i in range(20)
        ]
        await rig.connect(FAMILY, patron.user_id, language="en")

    report = await rig.sweep()

    assert not report.failures, report.summary()
    sent = rig.telegram.sent(FAMILY)
    labels = [button.text for message in sent for row in message.buttons for button in row]
    assert len(labels) == 5 and all(label.startswith("Renew these: ") for label in labels)
    assert sum("Billedbog" in message.text for message in sent) >= 1
