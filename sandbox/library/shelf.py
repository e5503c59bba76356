"""Copies on the shelves of the test libraries: `/v3/holdingsitems` and `/v3/availability`.

Shapes as recorded (serviceprovider `holding_*_pids_result.auto.js`,
`availability_*.snapshot.js`; production notes). Each title of the catalogue has copies at
most branches of every test library, decided by the title and the branch so that every library
has titles on the shelf at two or more branches, copies not for loan and copies lent out.
**Recorded** statuses are `OnShelf` and `NotForLoan`; a copy lent out is `OnLoan`, which no
recording shows (**chosen**: the holdings-items service's name for it). `branchId` is empty, as
recorded: a copy's branch is known by its name. A net-only title has no copies.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sandbox.library.data import CATALOGUE, LIBRARIES

ON_SHELF = "OnShelf"
NOT_FOR_LOAN = "NotForLoan"
ON_LOAN = "OnLoan"
# By (title, branch): none, on the shelf (twice as often), lent out, not for loan.
STATUSES = (None, ON_SHELF, ON_SHELF, ON_LOAN, NOT_FOR_LOAN)
CHILDREN = {"Astrid Lindgren", "Anders Matthesen", "H.C. Andersen"}
# Days until a title ordered today can be collected: on the library's own shelves, or fetched.
OWN_DELIVERY_DAYS = 2
ILL_DELIVERY_DAYS = 9


def faust_of(pid: str) -> str:
    return pid.rsplit(":", 1)[-1]


@dataclass
class Shelves:
    """The copies' statuses; `put_back` (the demo console, tests) changes one branch's copy."""

    moved: dict[tuple[str, str], str] = field(default_factory=dict)  # (faust, ISIL) -> status

    def status(self, faust: str, isil: str) -> str | None:
        if (faust, isil) in self.moved:
            return self.moved[(faust, isil)]
        entry = next((e for e in CATALOGUE if e[0] == faust), None)
        if entry is None or "(net)" in entry[4]:
            return None
        return STATUSES[zlib.crc32(f"{faust}|{isil}".encode()) % len(STATUSES)]

    def put_back(self, faust: str, isil: str) -> None:
        """The copy of `faust` at branch `isil` comes home: on the shelf."""
        self.moved[(faust, isil)] = ON_SHELF

    def lend(self, faust: str, isil: str) -> None:
        self.moved[(faust, isil)] = ON_LOAN

    def return_lent(self) -> int:
        """Every copy lent out comes home to its shelf (the demo's button); how many."""
        lent = [
            (entry[0], branch[0])
            for entry in CATALOGUE
            for _, _, branches in LIBRARIES
            for branch in branches
            if self.status(entry[0], branch[0]) == ON_LOAN
        ]
        for key in lent:
            self.moved[key] = ON_SHELF
        return len(lent)

    def holdings(self, pid: str, agency: str) -> list[dict[str, Any]]:
        """The copies of `pid` at the branches of library `agency` (digits)."""
        faust = faust_of(pid)
        entry = next((e for e in CATALOGUE if e[0] == faust), None)
        branches = next((b for a, _, b in LIBRARIES if a == agency), ())
        if entry is None:
            return []
        copies = [
            (name, isil, status)
            for isil, name, *_ in branches
            if (status := self.status(faust, isil)) is not None
        ]
        ready = sum(1 for *_, status in copies if status == ON_SHELF)
        creator = entry[2]
        return [
            {
                "bibliographicRecordId": faust,
                "branch": name,
                "branchId": "",
                "circulationRule": "0" if status == NOT_FOR_LOAN else "alm",
                "department": "Børn" if creator in CHILDREN else "Voksen",
                "issueId": "",
                "issueText": "",
                "itemId": str(zlib.crc32(f"{faust}|{isil}|item".encode())),
                "location": "Læsesal" if status == NOT_FOR_LOAN else "Skønlitteratur",
                "note": "",
                "readyForLoan": ready,
                "status": status,
                "subLocation": creator.split()[-1],
            }
            for name, isil, status in copies
        ]

    def availability(
        self, pid: str, agency: str, today: date, tz: ZoneInfo, own_catalogue: bool
    ) -> dict[str, Any]:
        """`/v3/availability` of `pid` for a patron of library `agency` (as recorded: the
        holding service's `willLend` and `expectedDelivery`, the order policy's
        `orderPossible` and `orderPossibleReason`, or `unavailable`)."""
        faust = faust_of(pid)
        entry = next((e for e in CATALOGUE if e[0] == faust), None)
        if entry is None:
            return {"unavailable": "openHoldingService error: ITEM_NOT_FOUND"}
        if "(net)" in entry[4]:
            return {"willLend": False, "orderPossible": False,
                    "orderPossibleReason": "owned_wrong_mediumType"}  # fmt: skip
        if own_catalogue:
            return {"willLend": True, "orderPossible": False,
                    "orderPossibleReason": "owned_own_catalogue"}  # fmt: skip
        owned = bool(self.holdings(pid, agency))
        days = OWN_DELIVERY_DAYS if owned else ILL_DELIVERY_DAYS
        delivery = datetime.combine(today + timedelta(days=days), time(), tz).isoformat()
        return {
            "willLend": True,
            "expectedDelivery": delivery,
            "orderPossible": True,
            "orderPossibleReason": "owned_accepted" if owned else "not_owned_ILL_loc",
        }
