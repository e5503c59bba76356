"""Typed button payloads: the shapes stored by earlier releases still decode, every button's
callback data fits Telegram's 64 bytes, and the renew buttons of /renew and of a digest."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from bot.library.models import Loan
from bot.telegram.buttons import (
    AbortOrder,
    ButtonId,
    CancelHold,
    ForgetChoice,
    KeepHold,
    LanguageChoice,
    OrderFound,
    Payload,
    PlaceOrder,
    ReminderChoice,
    RenewAll,
    RenewLoan,
    decode,
    encode,
)
from bot.telegram.keyboards import CALLBACK_DATA_LIMIT, ref_button, renew_buttons
from bot.texts.formatting import shorten
from storage.store import new_callback_id

# Payloads as the handlers stored them before they were typed: buttons shown then must keep
# working after an upgrade (they live for a day).
STORED: list[tuple[dict[str, Any], tuple[type[Any], ...], Payload]] = [
    (
        {"order_id": "O1", "order_type": "normal", "title": "Kongens fald"},
        (KeepHold, CancelHold),
        CancelHold("O1", "normal", "Kongens fald"),
    ),
    (
        {"order_id": "O1", "order_type": None, "title": "K", "confirm": True},
        (KeepHold, CancelHold),
        CancelHold("O1", None, "K", confirm=True),
    ),
    ({"keep": "abc", "title": "K"}, (KeepHold, CancelHold), KeepHold("abc", "K")),
    (
        {"pid": "870970-basis:1", "branch": "DK-710100", "title": "K"},
        (AbortOrder, PlaceOrder),
        PlaceOrder("870970-basis:1", "DK-710100", "K"),
    ),
    ({"abort": "abc"}, (AbortOrder, PlaceOrder), AbortOrder("abc")),
    ({"pid": "870970-basis:1"}, (OrderFound,), OrderFound("870970-basis:1")),
    (
        {"loan_id": "L1", "title": "K", "due": "2026-11-25"},
        (RenewLoan,),
        RenewLoan("L1", "K", "2026-11-25"),
    ),
    ({"loans": ["L1", "L2"]}, (RenewAll,), RenewAll(("L1", "L2"))),
    ({"op": "off"}, (ReminderChoice,), ReminderChoice("off")),
    ({"op": "days", "days": [5, 2, 0]}, (ReminderChoice,), ReminderChoice("days", (5, 2, 0))),
    ({"lang": "auto"}, (LanguageChoice,), LanguageChoice("auto")),
    ({"confirm": False}, (ForgetChoice,), ForgetChoice(confirm=False)),
]


@pytest.mark.parametrize(("stored", "kinds", "expected"), STORED)
def test_stored_shapes_decode(
    stored: dict[str, Any], kinds: tuple[type[Any], ...], expected: Payload
) -> None:
    assert decode(stored, *kinds) == expected
    # And what is stored now reads back as the same button.
    assert decode(encode(expected), *kinds) == expected


def test_a_cards_number_is_stored_as_card() -> None:
    """The field is `number`; the stored key stays "card", as every release stored it."""
    stored = {"loan_id": "L1", "title": "K", "due": "2026-11-25", "card": 2, "cid": "c2"}
    button = RenewLoan("L1", "K", "2026-11-25", number=2, cid="c2")
    assert decode(stored, RenewLoan) == button
    assert encode(button) == stored


def test_a_payload_of_no_known_shape_is_none() -> None:
    assert decode({"title": "K"}, KeepHold, CancelHold) is None
    assert decode({"loan_id": 7}, RenewLoan) is None
    assert decode({"op": "days", "days": ["many"]}, ReminderChoice) is None


def test_every_action_fits_telegrams_callback_data() -> None:
    kinds = [kind for _, kinds, _ in STORED for kind in kinds]
    for kind in kinds:
        button = ref_button("x", kind.ACTION, new_callback_id())
        assert isinstance(button.callback_data, str)
        assert len(button.callback_data.encode()) <= CALLBACK_DATA_LIMIT
    with pytest.raises(ValueError, match="64 bytes"):
        ref_button("x", "a" * 50, new_callback_id())


def test_button_id_stands_for_a_sibling() -> None:
    stored = encode(KeepHold(ButtonId.of(1), "K"))
    assert isinstance(stored["keep"], ButtonId) and int(stored["keep"]) == 1


LOANS = [
    Loan(loan_id=f"L{n}", due_date=dt.date(2026, 11, 25), title=f"Bog nummer {n} " * 5)
    for n in range(25)
]


def test_renew_buttons_of_renew_command() -> None:
    specs = renew_buttons(LOANS[:3], "en", every=LOANS[:5], today=dt.date(2026, 11, 22))
    (first, renew_all), *each = specs
    assert first == "🔄 Renew all"
    assert renew_all == RenewAll(tuple(f"L{n}" for n in range(5)))
    assert [payload for _, payload in each] == [
        RenewLoan(f"L{n}", shorten(LOANS[n].title, 120), "2026-11-25") for n in range(3)
    ]
    assert all("25 Nov" in label for label, _ in each)
    assert renew_buttons([], "en", every=LOANS) == []


def test_renew_buttons_of_a_digest() -> None:
    specs = renew_buttons(LOANS[:2], "da", every=LOANS[:2], digest=True)
    assert [type(payload) for _, payload in specs] == [RenewLoan, RenewLoan, RenewAll]
    assert all(len(label) < 64 for label, _ in specs)
    # Too many to name each: only "renew all".
    [(_, only)] = renew_buttons(LOANS, "da", every=LOANS, digest=True)
    assert only == RenewAll(tuple(loan.loan_id for loan in LOANS))
