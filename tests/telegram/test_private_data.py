"""Userinfo that carries civil registration numbers under other names leaves no byte of them
in the database, its WAL or the logs: only uniqueId and municipality are kept."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fixtures.bot import DEEP_LINK, BotHarness
from tests.fixtures.patrons import KAREN

CHAT = 5301
# Made-up numbers in the odd places a future configuration might put them.
OTHER_CPRS = ("2412851234", "3112999998", "0707070707")
# Every attribute hejmdal can map for a client (src/utils/attribute.mapper.util.js).
ALL_ATTRIBUTES = (
    "uniqueId",
    "municipality",
    "cpr",
    "userId",
    "agencies",
    "libraries",
    "birthDate",
    "birthYear",
    "gender",
    "blocked",
    "uniloginId",
    "wayfId",
)


def _cprs_in(value: Any) -> set[str]:
    """Every ten-digit string in a JSON value, at any depth."""
    if isinstance(value, str):
        digits = value.replace("-", "")
        return {digits} if len(digits) == 10 and digits.isdigit() else set()
    if isinstance(value, dict):
        return {cpr for item in value.values() for cpr in _cprs_in(item)}
    if isinstance(value, list):
        return {cpr for item in value for cpr in _cprs_in(item)}
    return set()


def _spellings(cpr: str) -> list[str]:
    return [cpr, f"{cpr[:6]}-{cpr[6:]}"]


def _files(bot: BotHarness) -> bytes:
    database = Path(bot.settings.DATABASE_URL.split("///", 1)[1])
    return b"".join(
        path.read_bytes() for path in database.parent.glob(database.name + "*") if path.is_file()
    )


async def test_cpr_numbers_under_other_names_are_never_stored_or_logged(
    bot: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    bot.sandbox.userinfo_attributes = ALL_ATTRIBUTES
    cpr_a, cpr_b, cpr_c = OTHER_CPRS
    bot.sandbox.userinfo_extra.update(
        {
            "dbcidpUserInfo": {"person": {"cpr": cpr_a, "ids": [[{"value": cpr_b}]]}},
            "uniLoginInstitutions": [{"id": "x", "members": [cpr_c, {"userId": cpr_a}]}],
            "CPR-nummer ✓": f"{cpr_b[:6]}-{cpr_b[6:]}",
            "": cpr_c,
            "userIdType": "CPR",
            "accounts": [{"agencyId": "710100", "userId": cpr_a, "uidType": "CPR"}],
        }
    )
    # What the access service now answers: the sandbox patron's own CPR under four names.
    token = bot.sandbox.issue_token(KAREN)
    async with httpx.AsyncClient() as client:
        answer = await client.get(
            f"{bot.sandbox.urls.oauth}/userinfo", headers={"Authorization": f"Bearer {token}"}
        )
    attributes = answer.json()["attributes"]
    assert attributes["agencies"][0]["userIdType"] == "CPR"
    cprs = _cprs_in(attributes) - {KAREN}
    assert attributes["cpr"] in cprs and set(OTHER_CPRS) <= cprs

    # The login, up to the page with the code: the pending link is stored now.
    bot.add_chat(CHAT)
    redirect = await bot.log_in_at_library(await bot.login_url(CHAT), KAREN)
    page = await bot.follow(redirect)
    assert page.status_code == 200
    found = DEEP_LINK.search(page.text)
    assert found is not None
    pending = _files(bot)
    reply = await bot.send(CHAT, f"/start {found.group(1)}")
    assert "København" in reply.text  # the municipality is what names the library
    card = await bot.store.cards.get(CHAT)
    assert card is not None
    assert (card.unique_id, card.municipality) == (
        attributes["uniqueId"],
        attributes["municipality"],
    )
    assert "attributes" not in {name for name in vars(card)}
    connected = _files(bot)
    await bot.send(CHAT, "/loans")

    logs = caplog.text + "".join(str(record.__dict__) for record in caplog.records)
    assert attributes["uniqueId"].encode() in connected  # the files are the right ones
    for cpr in cprs:
        for spelled in _spellings(cpr):
            assert spelled.encode() not in pending, cpr
            assert spelled.encode() not in connected, cpr
            assert spelled not in logs, cpr
