"""Data platform calls against the sandbox, parsed into the bot's models."""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING

import pytest

from bot.library.client import LibraryClient
from bot.library.errors import TokenRejected
from tests.fixtures.patrons import JONAS, KAREN, METTE, OLE

if TYPE_CHECKING:
    from sandbox.library import LibrarySandbox

ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
ISO_OFFSET = re.compile(r"^\d{4}-\d{2}-\d{2}T00:00:00[+-]\d{2}:\d{2}$")
ISO_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def shape(raw: str) -> str:
    for name, pattern in (("date", ISO_DATE), ("offset", ISO_OFFSET), ("utc", ISO_UTC)):
        if pattern.match(raw):
            return name
    return "other"


async def test_borrower_status_of_karen(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    token = library_sandbox.issue_token(KAREN)
    status = await client.user(token)
    raw = library_sandbox.patron_data(KAREN)

    assert status.name == "Karen Jensen"
    assert len(status.loans) == 7
    assert {hold.status for hold in status.orders} == {
        "Available for pickup",
        "At reservation shelf",
        "In process",
        "Active",
    }
    assert status.debt[0].amount == "45.50"
    assert status.debt[0].title == "Rødt & sort <2. udgave>"
    ready = [hold for hold in status.orders if hold.pick_up_id]
    assert ready and all(isinstance(hold.pick_up_expiry_date, dt.date) for hold in ready)
    # Queue positions are strings where sent (the recorded answers omit them on the shelf).
    assert all(isinstance(h.hold_queue_position, str | None) for h in status.orders)
    assert any(isinstance(h.hold_queue_position, str) for h in status.orders)

    # Every ISO shape lands on the calendar day the sandbox meant, in the bot's zone.
    shapes = set()
    loans = zip(raw.loans, status.loans, strict=True)
    orders = zip(raw.orders, status.orders, strict=True)
    pairs = [(loan["dueDate"], parsed.due_date) for loan, parsed in loans]
    pairs += [(order["orderDate"], parsed.order_date) for order, parsed in orders]
    for text, parsed in pairs:
        shapes.add(shape(text))
        assert parsed == dt.date.fromisoformat(text[:10]), text
    assert {"date", "offset", "utc"} <= shapes


async def test_overdue_loan_is_in_the_past(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    status = await client.user(library_sandbox.issue_token(KAREN))
    dates = [loan.due_date for loan in status.loans if isinstance(loan.due_date, dt.date)]
    assert min(dates) < dt.datetime.now(client.timezone).date()


async def test_patron_with_nothing(library_sandbox: LibrarySandbox, client: LibraryClient) -> None:
    status = await client.user(library_sandbox.issue_token(OLE))
    assert status.loans == [] and status.orders == []
    assert [debt.amount for debt in status.debt] == ["0"]


async def test_long_list_reads_the_danish_day_first_date(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    status = await client.user(library_sandbox.issue_token(METTE))
    assert len(status.loans) == 65
    raw = library_sandbox.patron_data(METTE).loans
    [(text, loan)] = [
        (item["dueDate"], loan)
        for item, loan in zip(raw, status.loans, strict=True)
        if re.fullmatch(r"\d{2}/\d{2}/\d{4}", str(item["dueDate"]))
    ]
    # dd/mm/yyyy as other modules of the platform send it: day first, never left as text.
    day, month, year = (int(part) for part in text.split("/"))
    assert loan.due_date == dt.date(year, month, day)
    assert not [loan for loan in status.loans if isinstance(loan.due_date, str)]


async def test_order_then_cancel(library_sandbox: LibrarySandbox, client: LibraryClient) -> None:
    token = library_sandbox.issue_token(OLE)
    before = library_sandbox.calls["platform GET /v3/order"]
    result = await client.order(token, ["870970-basis:29318871"], "DK-710100")
    assert result.status == "ok"
    assert result.ors_id
    assert library_sandbox.calls["platform GET /v3/order"] == before + 1

    hold = (await client.user(library_sandbox.issue_token(KAREN))).orders[0]
    cancelled = await client.cancel_order(
        library_sandbox.issue_token(KAREN), hold.order_id, hold.order_type
    )
    assert cancelled.order_id == hold.order_id
    assert cancelled.deleted is True
    after = await client.user(library_sandbox.issue_token(KAREN))
    assert hold.order_id not in {other.order_id for other in after.orders}


async def test_renew_moves_the_due_date(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    token = library_sandbox.issue_token(JONAS)
    loan = (await client.user(token)).loans[0]
    renewed = await client.renew(token, loan.loan_id)
    assert renewed.loan_id == loan.loan_id
    assert isinstance(renewed.return_date, dt.date)
    assert isinstance(loan.due_date, dt.date)
    assert renewed.return_date > loan.due_date


async def test_work_search_and_libraries(
    library_sandbox: LibrarySandbox, client: LibraryClient
) -> None:
    token = library_sandbox.issue_token(KAREN)
    works = await client.work(token, ["870970-basis:29318871"])
    assert len(works) == 1
    assert works[0].pid == "870970-basis:29318871"
    assert works[0].title

    found = await client.search(token, works[0].title or "", limit=5)
    assert found.hit_count >= 1
    assert 1 <= len(found.works) <= 5
    assert "870970-basis:29318871" in {work.pid for work in found.works}

    branches = await client.libraries(token, agency_ids=["710100"])
    assert branches
    assert all(branch.branch_id and branch.branch_name for branch in branches)
    assert "710100" in {branch.branch_id for branch in branches}  # digits, as recorded
    [vesterbro] = await client.libraries(token, branch_ids=["DK-710104"])
    assert vesterbro.branch_name == "Vesterbro Bibliotek" and vesterbro.agency_id == "710100"
    assert await client.libraries(token) == []  # never every library


async def test_from_settings_and_call_metrics(library_sandbox: LibrarySandbox) -> None:
    from bot.config.settings import SettingsError, load_settings

    env = library_sandbox.env()
    settings = load_settings(**env, BOT_TIMEZONE="Europe/Copenhagen", LIBRARY_TIMEOUT=4)
    calls: list[tuple[str, str]] = []
    library = LibraryClient.from_settings(
        settings, on_call=lambda name, outcome, seconds: calls.append((name, outcome))
    )
    try:
        assert library.timeout == 4
        token = library_sandbox.issue_token(OLE)
        assert (await library.user(token)).name == "Ole Hansen"
        library_sandbox.expire_token(token)
        with pytest.raises(TokenRejected):
            await library.user(token)
    finally:
        await library.aclose()
    assert calls == [("user", "ok"), ("user", "token_rejected")]
    with pytest.raises(SettingsError, match="PLATFORM_URL"):
        LibraryClient.from_settings(load_settings(**{**env, "PLATFORM_URL": ""}))
