"""Branch ids in ISIL form, and typed names."""

from __future__ import annotations

from bot.rules.isil import fold_name, match_branch, normalise_branch


def test_isil() -> None:
    assert normalise_branch(" dk-761500 ") == "DK-761500"
    assert normalise_branch("761500") == "DK-761500"
    assert normalise_branch("DK-7615") is None and normalise_branch(None) is None


COPENHAGEN = [
    ("DK-710100", "Københavns Hovedbibliotek"),
    ("DK-710104", "Vesterbro Bibliotek"),
    ("DK-710111", "Islands Brygge Bibliotek"),
    ("DK-710117", "Nørrebro Bibliotek"),
]


def test_fold_name_ignores_case_accents_and_spaces() -> None:
    assert fold_name("  Nørrebro   Bibliotek ") == "norrebro bibliotek"
    assert fold_name("ÅRHUS") == fold_name("Arhus") == "arhus"
    assert fold_name("Sønderjyllands Allé") == "sonderjyllands alle"
    assert fold_name("Æbeløs") == "aebelos"


def test_a_typed_name_means_one_branch_or_several() -> None:
    assert match_branch("Vesterbro", COPENHAGEN) == ["DK-710104"]
    assert match_branch("vesterbro bibliotek", COPENHAGEN) == ["DK-710104"]
    assert match_branch("NORREBRO", COPENHAGEN) == ["DK-710117"]
    assert match_branch("nørre", COPENHAGEN) == ["DK-710117"]
    assert match_branch("islands brygge", COPENHAGEN) == ["DK-710111"]
    # A word of the name, when no name starts with it.
    assert match_branch("hoved", COPENHAGEN) == ["DK-710100"]
    # Several: for the patron to choose among; none: no such branch.
    assert match_branch("bibliotek", COPENHAGEN) == ["DK-710104", "DK-710111", "DK-710117"]
    assert match_branch("Aarhus", COPENHAGEN) == []
    assert match_branch("  ", COPENHAGEN) == []


def test_a_whole_name_wins_over_a_longer_one_it_begins() -> None:
    branches = [("DK-1", "Viby"), ("DK-2", "Viby Bibliotek")]
    assert match_branch("viby", branches) == ["DK-1"]
    assert match_branch("viby b", branches) == ["DK-2"]
