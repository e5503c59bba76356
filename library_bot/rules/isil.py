"""Library and branch ids in ISIL form (`DK-761500`), and the agencies that list a branch."""

from __future__ import annotations

import re
from collections.abc import Iterable

_ISIL = re.compile(r"^(?:DK-?)?(\d{6})$", re.IGNORECASE)


def normalise_branch(text: str | None) -> str | None:
    """A branch in ISIL form (`DK-761500`) from `DK-761500`, `dk-761500` or `761500`, else None."""
    match = _ISIL.match((text or "").strip())
    return f"DK-{match.group(1)}" if match else None


def branch_key(branch_id: str) -> str:
    """The id a branch is remembered under: its ISIL form, else the id as given."""
    return normalise_branch(branch_id) or branch_id


def agencies_of(branch_ids: Iterable[str]) -> list[str]:
    """The agency ids to ask `/v3/libraries` for, to learn the names of `branch_ids`.

    The endpoint lists branches by agency. A Danish public library's branches share the first
    four digits of its agency id, which ends in `00` (DK-710104 belongs to 710100); the
    branch's own digits are asked for too, in case it is an agency itself.
    """
    agencies: set[str] = set()
    for branch_id in branch_ids:
        isil = normalise_branch(branch_id)
        if isil is None:
            continue
        digits = isil.removeprefix("DK-")
        agencies.update({f"DK-{digits}", f"DK-{digits[:4]}00"})
    return sorted(agencies)
