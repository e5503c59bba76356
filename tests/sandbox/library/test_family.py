"""The test family: three cards of one household at two libraries, served as the recorded
answers are (login page, userinfo, `/v3/user`, `/v3/libraries`, renew)."""

from __future__ import annotations

import json
import re
from datetime import date
from zoneinfo import ZoneInfo

import httpx

from bot.library.models import parse_library_date
from sandbox.library import LibrarySandbox
from tests.fixtures.patrons import ANNA, COPENHAGEN, EMIL, FAMILY, FREDERIKSBERG, SOFIE
from tests.sandbox.library.helpers import REDIRECT, anonymous_token, exchange, form

TZ = ZoneInfo("Europe/Copenhagen")


async def platform(
    client: httpx.AsyncClient, sandbox: LibrarySandbox, path: str, token: str, **params: str
) -> httpx.Response:
    return await client.get(
        f"{sandbox.urls.platform}{path}", params={"access_token": token, **params}
    )


async def status(client: httpx.AsyncClient, sandbox: LibrarySandbox, user_id: str) -> dict:
    response = await platform(client, sandbox, "/v3/user", sandbox.issue_token(user_id))
    assert response.status_code == 200
    data = response.json()["data"]
    assert isinstance(data, dict)
    return data


def days_to(sandbox: LibrarySandbox, text: str) -> int:
    day = parse_library_date(text, TZ)
    assert isinstance(day, date), text
    return (day - sandbox.today).days


async def test_the_login_page_lists_the_family_with_their_libraries(library_sandbox, client):
    response = await client.get(
        f"{library_sandbox.urls.oauth}/oauth/authorize",
        params={
            "response_type": "code",
            "client_id": library_sandbox.client_id,
            "redirect_uri": REDIRECT,
            "state": "s-1",
        },
    )
    assert response.status_code == 200
    page = response.text
    # Both libraries can be chosen.
    assert re.search(r'<option value="710100"[^>]*>Københavns Biblioteker', page)
    assert re.search(r'<option value="714700"[^>]*>Frederiksberg Bibliotek', page)
    hint = page[page.index("class=hint") :]
    for user_id, name, library in (
        (ANNA, "Anna Holm", "Københavns Biblioteker (710100)"),
        (SOFIE, "Sofie Holm", "Københavns Biblioteker (710100)"),
        (EMIL, "Emil Holm", "Frederiksberg Bibliotek (714700)"),
    ):
        row = re.search(rf"<tr><td><code>{user_id}</code></td>.*?</tr>", hint)
        assert row is not None, user_id
        assert name in row.group(0) and library in row.group(0)
    assert "choose their library above" in hint


async def test_each_child_logs_in_only_at_their_own_library(library_sandbox, client):
    authorize = f"{library_sandbox.urls.oauth}/oauth/authorize"
    wrong = await client.post(
        authorize, data=form(library_sandbox, user_id=EMIL, agency=COPENHAGEN)
    )
    assert wrong.status_code == 200
    assert "Forkert låner-id eller pinkode for det valgte bibliotek" in wrong.text
    for user_id, agency in ((ANNA, COPENHAGEN), (SOFIE, COPENHAGEN), (EMIL, FREDERIKSBERG)):
        done = await client.post(
            authorize, data=form(library_sandbox, user_id=user_id, agency=agency)
        )
        assert done.status_code == 302, (user_id, done.text)
    assert (
        await client.post(
            authorize, data=form(library_sandbox, user_id=SOFIE, agency=FREDERIKSBERG)
        )
    ).status_code == 200


async def test_userinfo_three_people_one_household(library_sandbox, client):
    seen = []
    for user_id, agency in ((ANNA, COPENHAGEN), (SOFIE, COPENHAGEN), (EMIL, FREDERIKSBERG)):
        response = await client.post(
            f"{library_sandbox.urls.oauth}/oauth/authorize",
            data=form(library_sandbox, user_id=user_id, agency=agency),
        )
        code = httpx.URL(response.headers["location"]).params["code"]
        token = (await exchange(client, library_sandbox, code)).json()["access_token"]
        info = await client.get(
            f"{library_sandbox.urls.oauth}/userinfo", headers={"Authorization": f"Bearer {token}"}
        )
        assert info.status_code == 200
        attributes = info.json()["attributes"]
        assert set(attributes) == {"uniqueId", "municipality", "serviceStatus"}
        seen.append(attributes)
    # Three people: three uniqueIds (the bot tells cards apart by them); one home municipality.
    assert len({a["uniqueId"] for a in seen}) == 3
    assert {a["municipality"] for a in seen} == {"101"}


async def test_user_names_and_libraries(library_sandbox, client):
    expected = {
        ANNA: ("Anna Holm", COPENHAGEN),
        SOFIE: ("Sofie Holm", COPENHAGEN),
        EMIL: ("Emil Holm", FREDERIKSBERG),
    }
    for user_id in FAMILY:
        data = await status(client, library_sandbox, user_id)
        assert (data["name"], data["agency"]) == expected[user_id]
        # The first word of `name` is the card's label: a first name in either language.
        assert data["name"].split()[0] in {"Anna", "Sofie", "Emil"}
        assert data["address"] == "Bibliotekvej 5"
        assert data["debt"], "the debt structure is returned even when it is 0"


async def test_each_card_has_something_for_the_demo(library_sandbox, client):
    anna = await status(client, library_sandbox, ANNA)
    assert sorted(days_to(library_sandbox, loan["dueDate"]) for loan in anna["loans"])[0] == 1
    assert [order["status"] for order in anna["orders"]] == ["Active"]
    assert anna["debt"][0]["amount"] == "30.00"

    sofie = await status(client, library_sandbox, SOFIE)
    due = {loan["title"]: days_to(library_sandbox, loan["dueDate"]) for loan in sofie["loans"]}
    assert due == {"Pippi Langstrømpe": -1, "Ternet Ninja": 0, "Mio, min Mio": 3}
    ninja = next(loan for loan in sofie["loans"] if loan["title"] == "Ternet Ninja")
    token = library_sandbox.issue_token(SOFIE)
    refused = await platform(
        client, library_sandbox, "/v3/renew", token, loanId=json.dumps(ninja["loanId"])
    )
    assert refused.status_code == 500
    assert refused.json()["error"] == "Renewal Not Allowed - Item Has Outstanding Requests"
    # A loan of one card cannot be renewed with another card's token.
    other = await platform(
        client, library_sandbox, "/v3/renew", library_sandbox.issue_token(ANNA),
        loanId=json.dumps(ninja["loanId"]),
    )  # fmt: skip
    assert other.status_code != 200

    emil = await status(client, library_sandbox, EMIL)
    [ready] = emil["orders"]
    assert ready["status"] == "Available for pickup" and ready["pickUpAgency"] == "DK-714703"
    assert days_to(library_sandbox, ready["pickUpExpiryDate"]) == 3
    assert min(days_to(library_sandbox, loan["dueDate"]) for loan in emil["loans"]) == 2
    # The branch it waits at is one of Frederiksberg's, taking pick-ups, by name.
    anonymous = await anonymous_token(client, library_sandbox)
    libraries = await platform(
        client, library_sandbox, "/v3/libraries", anonymous, agencyIds='["714700"]'
    )
    branches = {b["isil"]: b for b in libraries.json()["data"]}
    assert branches["DK-714703"]["branchName"] == ["Bibliotek Sønderjyllands Allé"]
    assert branches["DK-714703"]["pickupAllowed"] == "1"
    assert all(b["agencyId"] == FREDERIKSBERG for b in branches.values())


async def test_the_family_leaves_the_other_patrons_as_they_were(library_sandbox):
    ids = [patron.user_id for patron in library_sandbox.patrons]
    assert ids == ["1000000001", "1000000002", "1000000003", "1000000004", *FAMILY]
    loan_ids = [
        loan["loanId"] for user_id in ids for loan in library_sandbox.patron_data(user_id).loans
    ]
    assert len(loan_ids) == len(set(loan_ids))
    # The first four keep their ids (4100001...); the family's come from a range of their own.
    assert library_sandbox.patron_data("1000000001").loans[0]["loanId"] == "4100001"
    assert library_sandbox.patron_data(ANNA).loans[0]["loanId"] == "4200001"
