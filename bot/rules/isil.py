"""Library and branch ids in ISIL form (`DK-761500`), and the branch a typed name means."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

_ISIL = re.compile(r"^(?:DK-?)?(\d{6})$", re.IGNORECASE)


def normalise_branch(text: str | None) -> str | None:
    """A branch in ISIL form (`DK-761500`) from `DK-761500`, `dk-761500` or `761500`, else None."""
    match = _ISIL.match((text or "").strip())
    return f"DK-{match.group(1)}" if match else None


def branch_key(branch_id: str) -> str:
    """The id a branch is remembered under: its ISIL form, else the id as given."""
    return normalise_branch(branch_id) or branch_id


# Letters a patron without a Danish keyboard types in their place.
_FOLDS = str.maketrans({"ø": "o", "æ": "ae", "đ": "d", "ł": "l", "ß": "ss"})


def fold_name(text: str) -> str:
    """A name for comparing: case and accents ignored, spaces collapsed ("Nørrebro" ->
    "norrebro", "Århus" -> "arhus")."""
    decomposed = unicodedata.normalize("NFKD", text.casefold().translate(_FOLDS))
    bare = "".join(char for char in decomposed if not unicodedata.combining(char))
    return " ".join(bare.translate(_FOLDS).split())


def match_branch(text: str, branches: Iterable[tuple[str, str]]) -> list[str]:
    """The ids of the branches, (id, name) each, that a typed name means: the one whose name
    it is, else those whose name starts with it, else those with a word starting with it
    ("Vesterbro" -> "Vesterbro Bibliotek", "hoved" -> "Københavns Hovedbibliotek"). One id is a
    match; several are for the patron to choose among; none, no such branch."""
    wanted = fold_name(text)
    if not wanted:
        return []
    named = [(branch_id, fold_name(name)) for branch_id, name in branches if name]
    for fits in (
        lambda name: name == wanted,
        lambda name: name.startswith(wanted),
        lambda name: any(word.startswith(wanted) for word in name.split()),
    ):
        found = [branch_id for branch_id, name in named if fits(name)]
        if found:
            return list(dict.fromkeys(found))
    return []
