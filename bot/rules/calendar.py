"""What a patron's calendar feed holds: each loan's due date and each ready hold's last
pick-up day, taken from the last borrower status the bot saw.

An entry's `uid` depends on the loan or hold alone, never on its date, so a renewal moves the
event instead of adding a second one. The entries are what the store keeps (encrypted) for
the feed, so fetching the feed never costs a platform call.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Literal

from bot.library.models import BorrowerStatus, Hold, Loan
from bot.rules.urgency import hold_is_ready

Kind = Literal["due", "pick_up"]


@dataclass(frozen=True)
class Entry:
    uid: str
    kind: Kind
    day: dt.date
    title: str
    creator: str = ""
    # A ready hold's pick-up branch (its agency id, named when the feed is served) and number.
    branch: str = ""
    number: str = ""


def _uid(kind: str, ident: str) -> str:
    # A digest, so the feed does not publish the library's own loan and order ids.
    return f"{kind}-{hashlib.sha256(ident.encode()).hexdigest()[:24]}@library-bot"


def loan_uid(loan_id: str) -> str:
    return _uid("loan", loan_id)


def loan_entry(loan: Loan) -> Entry | None:
    if not isinstance(loan.due_date, dt.date):
        return None
    return Entry(loan_uid(loan.loan_id), "due", loan.due_date, loan.title, loan.creator)


def hold_entry(hold: Hold) -> Entry | None:
    last = hold.pick_up_expiry_date
    if not hold_is_ready(hold) or not isinstance(last, dt.date):
        return None
    return Entry(
        _uid("hold", hold.order_id),
        "pick_up",
        last,
        hold.title,
        hold.creator,
        branch=(hold.pick_up_agency or "").strip(),
        number=(hold.pick_up_id or "").strip()[:40],
    )


def entries(status: BorrowerStatus) -> list[Entry]:
    """The calendar's entries for `status`, by day."""
    found = [entry for loan in status.loans if (entry := loan_entry(loan)) is not None]
    found += [entry for hold in status.orders if (entry := hold_entry(hold)) is not None]
    return ordered(found)


def ordered(found: list[Entry]) -> list[Entry]:
    return sorted(found, key=lambda entry: (entry.day, entry.kind, entry.title))


def dumps(found: list[Entry]) -> str:
    return json.dumps(
        [asdict(entry) | {"day": entry.day.isoformat()} for entry in found],
        ensure_ascii=False,
        separators=(",", ":"),
    )


def loads(text: str) -> list[Entry]:
    """The entries `dumps` wrote; anything else is an empty calendar rather than an error."""
    try:
        raw = json.loads(text)
        return [
            Entry(
                uid=str(item["uid"]),
                kind="pick_up" if item["kind"] == "pick_up" else "due",
                day=dt.date.fromisoformat(item["day"]),
                title=str(item.get("title", "")),
                creator=str(item.get("creator", "")),
                branch=str(item.get("branch", "")),
                number=str(item.get("number", "")),
            )
            for item in raw
        ]
    except (ValueError, TypeError, KeyError):
        return []
