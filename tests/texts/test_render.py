"""Loans, holds, debt and works as the patron reads them, in Danish and English."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from bot.library.models import BorrowerStatus, Debt, Hold, Loan, Work
from bot.rules.urgency import hold_is_ready, loan_urgency, sort_holds, sort_loans
from bot.texts.formatting import split_messages, utf16_len
from bot.texts.render import (
    debt_total,
    loans_summary,
    render_debt,
    render_hold,
    render_loan,
    render_work,
)
from tests.texts.telegram_html import assert_telegram_html

TODAY = dt.date(2026, 11, 26)
BRANCHES = {"DK-775100": "Hovedbiblioteket", "DK-775120": "Børn & unge <Vest>"}


def loan(due: dt.date | str | None, title: str = "Rødt & sort", **kw: str) -> Loan:
    return Loan(
        loan_id=kw.pop("loan_id", "L1"),
        due_date=due,
        title=title,
        creator=kw.pop("creator", "Karen Blixen"),
    )


def days(n: int) -> dt.date:
    return TODAY + dt.timedelta(days=n)


def test_overdue_loan_in_both_languages() -> None:
    overdue = loan(days(-2))
    assert render_loan(overdue, TODAY, "da") == (
        "🔴 <b>Rødt &amp; sort</b>\nKaren Blixen · afleveres 24. nov. (overskredet med 2 dage)"
    )
    assert render_loan(overdue, TODAY, "en") == (
        "🔴 <b>Rødt &amp; sort</b>\nKaren Blixen · due 24 Nov (2 days overdue)"
    )


@pytest.mark.parametrize(
    ("offset", "urgency", "mark", "da", "en"),
    [
        (-1, "overdue", "🔴 ", "(overskredet med 1 dag)", "(1 day overdue)"),
        (0, "due_today", "🟡 ", "(i dag)", "(today)"),
        (1, "due_soon", "🟡 ", "(i morgen)", "(tomorrow)"),
        (3, "due_soon", "🟡 ", "(om 3 dage)", "(in 3 days)"),
        (4, "later", "", "(om 4 dage)", "(in 4 days)"),
    ],
)
def test_loan_urgency_and_days(offset: int, urgency: str, mark: str, da: str, en: str) -> None:
    item = loan(days(offset), title="Bog")
    assert loan_urgency(item, TODAY) == urgency
    assert render_loan(item, TODAY, "da").startswith(f"{mark}<b>Bog</b>")
    assert render_loan(item, TODAY, "da").endswith(da)
    assert render_loan(item, TODAY, "en").endswith(en)


def test_loan_from_the_wire_with_every_date_shape() -> None:
    tz = {"tz": ZoneInfo("Europe/Copenhagen")}
    status = BorrowerStatus.model_validate(
        {
            "loans": [
                {"loanId": "a", "dueDate": "2026-11-27T00:00:00.000Z", "title": "Z"},
                {"loanId": "b", "dueDate": "snart", "title": "Y_*<b>"},
                {"loanId": "c", "dueDate": "2026-11-24T00:00:00+01:00", "title": "X"},
                {"loanId": "d", "title": "W", "creator": ""},
            ]
        },
        context=tz,
    )
    ordered = sort_loans(status.loans)
    assert [item.loan_id for item in ordered] == ["c", "a", "b", "d"]
    texts = [render_loan(item, TODAY, "da") for item in ordered]
    assert texts[1].endswith("afleveres 27. nov. (i morgen)")
    # Unparsed: shown as sent, and flagged.
    assert texts[2] == "<b>Y_*&lt;b&gt;</b>\nafleveres snart ⚠️ datoen kunne ikke læses"
    assert loan_urgency(ordered[2], TODAY) == "unknown"
    assert texts[3] == "<b>W</b>\ningen afleveringsdato"
    assert render_loan(ordered[3], TODAY, "en") == "<b>W</b>\nno due date"
    for text in texts:
        assert_telegram_html(text)


def test_loan_due_next_year_shows_the_year_and_untitled() -> None:
    item = loan(dt.date(2027, 1, 5), title="", creator="Å & Ø")
    assert render_loan(item, TODAY, "da") == (
        "<b>(uden titel)</b>\nÅ &amp; Ø · afleveres 5. jan. 2027 (om 40 dage)"
    )
    assert render_loan(item, TODAY, "en").startswith(
        "<b>(untitled)</b>\nÅ &amp; Ø · due 5 Jan 2027"
    )


def test_a_very_long_title_is_shortened_so_the_entry_fits() -> None:
    item = loan(days(5), title="Ø&" * 3000)
    text = render_loan(item, TODAY, "da")
    assert "…</b>" in text
    assert utf16_len(text) < 1000
    assert_telegram_html(text)
    assert split_messages([text] * 10)[0].count("<b>") >= 2


def hold(**kw: object) -> Hold:
    base: dict[str, object] = {"order_id": "o", "title": "Ordbog", "creator": "Æble & co"}
    base.update(kw)
    return Hold.model_validate(base)


def test_hold_in_queue() -> None:
    item = hold(status="Active", hold_queue_position="3", pick_up_agency="DK-775100")
    assert not hold_is_ready(item)
    assert render_hold(item, TODAY, "da", BRANCHES) == (
        "<b>Ordbog</b>\nÆble &amp; co · I kø · nr. 3\nAfhentes på Hovedbiblioteket"
    )
    assert render_hold(item, TODAY, "en", BRANCHES) == (
        "<b>Ordbog</b>\nÆble &amp; co · In the queue · number 3\nPick up at Hovedbiblioteket"
    )


@pytest.mark.parametrize(
    "status", ["Available for pickup", "At reservation shelf", "AT RESERVATION SHELF"]
)
def test_ready_hold(status: str) -> None:
    item = hold(
        status=status, pick_up_agency="DK-775120", pick_up_id="117", pick_up_expiry_date=days(3)
    )
    assert hold_is_ready(item)
    da = render_hold(item, TODAY, "da", BRANCHES)
    assert da == (
        "🟢 <b>Ordbog</b>\nÆble &amp; co · Klar til afhentning\n"
        "Afhentes på Børn &amp; unge &lt;Vest&gt;\n"
        "Afhentningsnr. <b>117</b> · hentes senest 29. nov. (om 3 dage)"
    )
    en = render_hold(item, TODAY, "en", BRANCHES)
    assert (
        "Ready for pick-up" in en and "Pick-up no. <b>117</b> · collect by 29 Nov (in 3 days)" in en
    )
    assert_telegram_html(da)
    assert_telegram_html(en)


def test_hold_statuses_in_plain_words() -> None:
    processing = hold(status="In process", pick_up_agency="DK-999999")
    assert render_hold(processing, TODAY, "da", BRANCHES) == (
        "<b>Ordbog</b>\nÆble &amp; co · Behandles\nAfhentes på DK-999999"
    )
    assert "Being processed" in render_hold(processing, TODAY, "en", {})
    odd = hold(status="Suspended <til 1/12>", creator="")
    assert render_hold(odd, TODAY, "da", {}) == "<b>Ordbog</b>\nSuspended &lt;til 1/12&gt;"
    # A pick-up number alone means it is on the shelf, even with an odd status.
    shelf = hold(status="Active", pick_up_id="9", pick_up_expiry_date="fredag")
    assert hold_is_ready(shelf)
    assert render_hold(shelf, TODAY, "en", {}).endswith(
        "Pick-up no. <b>9</b> · collect by fredag ⚠️ the date could not be read"
    )
    assert render_hold(hold(status="Active"), TODAY, "da", {}).endswith("· I kø")


def test_sort_holds_ready_first_then_queue() -> None:
    items = [
        hold(order_id="q7", status="Active", hold_queue_position="7"),
        hold(order_id="r-late", status="Available for pickup", pick_up_expiry_date=days(6)),
        hold(order_id="q?", status="Active", hold_queue_position="?"),
        hold(order_id="q2", status="Active", hold_queue_position="2"),
        hold(order_id="r-soon", status="At reservation shelf", pick_up_expiry_date=days(1)),
    ]
    assert [h.order_id for h in sort_holds(items)] == ["r-soon", "r-late", "q2", "q7", "q?"]


def test_debt_entries_and_total() -> None:
    items = [
        Debt(
            amount="45.50",
            currency="DKK",
            date=dt.date(2026, 11, 2),
            title="Jagten",
            creator="Thomas Vinterberg",
        ),
        Debt(amount="0", currency="DKK", title="Nul"),
        Debt(amount="10", currency="DKK", title=""),
    ]
    # What a fee is for is the material (the only reason the platform passes on).
    assert render_debt(items, TODAY, "da") == [
        "Gebyr for <b>Jagten</b> · Thomas Vinterberg\n2. nov. · 45,50\u00a0kr.",
        "<b>Gebyr</b> (biblioteket oplyser ingen grund)\n10,00\u00a0kr.",
    ]
    assert render_debt(items, TODAY, "en") == [
        "Fee for <b>Jagten</b> · Thomas Vinterberg\n2 Nov · DKK\u00a045.50",
        "<b>Fee</b> (the library gives no reason)\nDKK\u00a010.00",
    ]
    assert debt_total(items) == ("55.50", "DKK")


def test_no_debt() -> None:
    zero = [Debt(amount="0.00", currency="DKK", title="x")]
    assert render_debt(zero, TODAY, "da") == []
    assert render_debt([], TODAY, "en") == []
    assert debt_total(zero) is None
    assert debt_total([]) is None


def test_debt_total_is_exact_and_refuses_mixed_currencies() -> None:
    items = [Debt(amount="0.10"), Debt(amount="0.20"), Debt(amount="0.005")]
    assert debt_total(items) == ("0.305", "DKK")
    assert debt_total([Debt(amount="5", currency="DKK"), Debt(amount="5", currency="EUR")]) is None
    assert debt_total([Debt(amount="5"), Debt(amount="fem")]) is None


def test_work() -> None:
    work = Work.model_validate(
        {
            "pid": ["870970-basis:1"],
            "title": ["Kongens fald & <andet>"],
            "creator": ["Johannes V. Jensen"],
            "date": ["1901"],
            "type": ["Bog"],
        }
    )
    assert render_work(work, "da") == (
        "<b>Kongens fald &amp; &lt;andet&gt;</b>\nJohannes V. Jensen · 1901 · Bog"
    )
    assert render_work(Work(), "en") == "<b>(untitled)</b>"
    assert render_work(Work(title="T", type="Lydbog"), "da") == "<b>T</b>\nLydbog"
    # The platform's Danish material types, translated; an unknown one as given.
    assert render_work(work, "en").endswith("1901 · Book")
    assert render_work(work, "uk").endswith("1901 · Книга")
    assert render_work(Work(title="T", type="Film (dvd)"), "en") == "<b>T</b>\nFilm (DVD)"
    assert render_work(Work(title="T", type="lydbog (NET)"), "en") == "<b>T</b>\nAudiobook (online)"
    assert render_work(Work(title="T", type="Lydbog (net)"), "da") == "<b>T</b>\nLydbog (net)"
    assert render_work(Work(title="T", type="Diorama"), "en") == "<b>T</b>\nDiorama"


def test_day_first_dates_from_the_wire_are_read_sorted_and_show_their_year() -> None:
    status = BorrowerStatus.model_validate(
        {
            "loans": [
                {"loanId": "a", "dueDate": "05.01.2027", "title": "A"},
                {"loanId": "b", "dueDate": "27-11-2026", "title": "B"},
                {"loanId": "c", "dueDate": "24/11/2026", "title": "C"},
                {"loanId": "d", "dueDate": "30/02/2026", "title": "D"},
            ]
        },
        context={"tz": ZoneInfo("Europe/Copenhagen")},
    )
    ordered = sort_loans(status.loans)
    assert [item.loan_id for item in ordered] == ["c", "b", "a", "d"]
    texts = [render_loan(item, TODAY, "en") for item in ordered]
    assert texts[0].endswith("due 24 Nov (2 days overdue)")
    assert texts[1].endswith("due 27 Nov (tomorrow)")
    assert texts[2].endswith("due 5 Jan 2027 (in 40 days)")  # not this year: with the year
    assert texts[3].endswith("due 30/02/2026 ⚠️ the date could not be read")


def test_a_refused_renewal_is_marked_in_the_entry() -> None:
    entry = render_loan(loan(TODAY), TODAY, "en", "reserved by another patron")
    assert entry.endswith("\n⛔ can't be renewed: reserved by another patron")
    assert_telegram_html(entry)


def test_loans_summary_counts_overdue_due_soon_and_refused() -> None:
    loans = [loan(days(d)) for d in (-9, -1, -1, 0, 3, 4, 30)] + [loan("31/02/2026")]
    assert loans_summary(loans, TODAY, "en", 3) == "3 overdue · 2 due within 3 days"
    assert loans_summary(loans, TODAY, "da", 7, refused=1) == (
        "3 overskredet · 3 skal afleveres inden for 7 dage · ⛔ 1 kan ikke fornyes"
    )
    assert loans_summary([loan(days(1))], TODAY, "en", 1) == "1 due within 1 day"
    assert loans_summary([loan(days(9))], TODAY, "en", 3) == "nothing due within 3 days"


@pytest.mark.parametrize("lang", ["da", "en"])
def test_a_fee_dated_with_the_epoch_shows_no_date(lang: str) -> None:
    status = BorrowerStatus.model_validate(
        {"debt": [{"amount": "50", "currency": "DKK", "date": "1970-01-01T00:00:00+01:00"}]}
    )
    [entry] = render_debt(status.debt, TODAY, lang)
    assert "1970" not in entry and "50" in entry
