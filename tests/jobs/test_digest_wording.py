"""The digest as patrons expect it (issue 15): their language, every date, branch names,
/holds' order, and loans the library refused to renew."""

from __future__ import annotations

from datetime import date
from typing import Any

from bot.library.deadline import Deadline
from bot.rules.urgency import hold_is_ready, sort_holds
from bot.services.branches import BranchNames
from tests.fixtures.patrons import JONAS, KAREN
from tests.jobs.conftest import Rig

CHAT = 801


def _labels(message: Any) -> list[str]:
    return [button.text for row in message.buttons for button in row]


async def test_reminders_in_telegrams_language_without_a_language_choice(rig: Rig) -> None:
    await rig.connect(CHAT, JONAS)
    await rig.store.chats.set_language(CHAT, None)  # never chose one with /language
    await rig.store.chats.set_telegram_language(CHAT, "en-GB")  # as every update leaves it
    await rig.sweep()
    [digest] = rig.telegram.sent(CHAT)
    assert digest.text.startswith("🔔 Reminder from your library bot")


async def test_day_first_and_unreadable_due_dates(rig: Rig) -> None:
    await rig.connect(CHAT, JONAS, language="en")
    [loan] = rig.sandbox.patron_data(JONAS).loans
    due = rig.sandbox.today
    loan["dueDate"] = due.strftime("%d/%m/%Y")  # as the platform's "other modules" send it
    await rig.sweep()
    [digest] = rig.telegram.sent(CHAT)
    assert "Due soon" in digest.text and "Lykke-Per" in digest.text and "(today)" in digest.text
    assert "Renew: Lykke-Per" in _labels(digest)

    await rig.connect(CHAT + 1, JONAS, language="en")
    loan["dueDate"] = "31/02/2026"
    await rig.sweep()
    [told] = rig.telegram.sent(CHAT + 1)
    # Shown as sent, flagged, and said in the digest rather than dropped.
    assert "The due date could not be read" in told.text
    assert "due 31/02/2026 ⚠️ the date could not be read" in told.text
    assert "Renew: Lykke-Per" not in _labels(told)
    await rig.sweep(today=rig.sandbox.today)  # told once, not every sweep
    assert len(rig.telegram.sent(CHAT + 1)) == 1


async def test_pick_up_branches_by_name_and_holds_in_holds_order(rig: Rig) -> None:
    await rig.connect(CHAT, KAREN, language="en")
    await rig.sweep()
    [digest] = rig.telegram.sent(CHAT)
    assert "DK-7101" not in digest.text
    status = await rig.library.user(rig.sandbox.issue_token(KAREN))
    ready = [hold for hold in sort_holds(status.orders) if hold_is_ready(hold)]
    assert len(ready) == 2
    agencies = [hold.pick_up_agency for hold in ready]
    names = await BranchNames().lookup(rig.library, agencies, Deadline())
    for hold in ready:
        assert f"Pick up at {names[hold.pick_up_agency or '']}" in digest.text
    positions = [digest.text.index(hold.title) for hold in ready]
    assert positions == sorted(positions)


async def test_a_refused_loan_is_marked_and_gets_no_button(rig: Rig) -> None:
    await rig.connect(CHAT, KAREN, language="en")
    status = await rig.library.user(rig.sandbox.issue_token(KAREN))
    [kongens] = [loan for loan in status.loans if loan.title == "Kongens fald"]
    assert isinstance(kongens.due_date, date)
    reason = "Renewal Not Allowed - Item Has Outstanding Requests"
    await rig.store.renewal_refusals.record_refusal(
        CHAT, kongens.loan_id, kongens.due_date.isoformat(), reason
    )
    await rig.sweep()
    [digest] = rig.telegram.sent(CHAT)
    entry = next(part for part in digest.text.split("\n\n") if "Kongens fald" in part)
    assert entry.endswith("⛔ can't be renewed: reserved by another patron")
    assert not [label for label in _labels(digest) if "Kongens fald" in label]
    assert "Renew these" in _labels(digest)
