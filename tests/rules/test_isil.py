"""Branch ids in ISIL form, and the agencies `/v3/libraries` lists a branch under."""

from __future__ import annotations

from library_bot.rules.isil import agencies_of, normalise_branch


def test_isil() -> None:
    assert normalise_branch(" dk-761500 ") == "DK-761500"
    assert normalise_branch("761500") == "DK-761500"
    assert normalise_branch("DK-7615") is None and normalise_branch(None) is None
    assert agencies_of(["DK-710104", "junk", "710100"]) == ["DK-710100", "DK-710104"]
