"""Content of the libraries' own sites (events, news, library pages) of /v3/events, news, library.

The platform passes these through from the content service (`ddbcmsapi`) unchanged: every field is
`{"name": <label>, "value": ..., "attr": [...]}` (taxonomy fields are `{"name", "terms"}`), with a
numeric `nid`, and `created`/`changed` as Unix seconds; an event's date is
`{"from": "YYYY-MM-DD hh:mm:ss", "to": ...}` (shapes from the platform's recorded answers).
Dates are built from `today`, so events are always upcoming.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sandbox.library.data import LIBRARIES, OPENING_HOURS

KINDS = ("events", "news", "library")

# (title, lead, category, target, days from today, start hour, hours long, price)
EVENTS: tuple[tuple[str, str, str, str, int, int, int, str], ...] = (
    (
        "Mød forfatteren",
        "En aften med samtale og oplæsning.",
        "Litteratur",
        "For voksne",
        3,
        19,
        2,
        "50",
    ),
    ("Højtlæsning for de mindste", "Billedbøger og sange.", "Børn", "For børn", 6, 10, 1, ""),
    (
        "Digital hjælp",
        "Få hjælp til MitID og e-boks.",
        "Internet & undervisning",
        "For alle",
        10,
        14,
        2,
        "",
    ),
)
# (title, lead, category, days before today)
NEWS: tuple[tuple[str, str, str, int], ...] = (
    ("Nye åbningstider i sommerferien", "Se hvornår biblioteket har åbent.", "Praktisk", 2),
    ("Månedens anbefalinger", "Personalet har valgt fem bøger til dig.", "Litteratur", 9),
)


def _field(name: str, value: Any, attr: list[str] | None = None) -> dict[str, Any]:
    return {"name": name, "value": value, "attr": attr or []}


def _address(prefix: str, label: str, street: str, postal_code: str, city: str) -> dict[str, Any]:
    """An address as the content service spells it out: one field per part, in this order."""
    parts = {
        "thoroughfare": street,
        "premise": "",
        "postal_code": postal_code,
        "locality": city,
        "country": "DK",
    }
    return {
        f"{prefix}__{part}": _field(f"{label} ({part.replace('_', ' ')})", [value])
        for part, value in parts.items()
    }


def _terms(name: str, *terms: str) -> dict[str, Any]:
    return {"name": name, "terms": list(terms)}


class Content:
    """All items of the test libraries, by kind and agency; `nid`s are unique across kinds."""

    def __init__(self, today: date, tz: ZoneInfo) -> None:
        self.today = today
        self.tz = tz
        self.items: dict[str, dict[str, list[dict[str, Any]]]] = {kind: {} for kind in KINDS}
        self.by_nid: dict[str, dict[int, dict[str, Any]]] = {kind: {} for kind in KINDS}
        nid = 100
        for agency_id, library_name, branches in LIBRARIES:
            for kind in KINDS:
                self.items[kind][agency_id] = []
            for number, event in enumerate(EVENTS):
                nid += 1
                branch = branches[number % len(branches)]
                self._add("events", agency_id, self._event(nid, agency_id, branch, event))
            for news in NEWS:
                nid += 1
                self._add("news", agency_id, self._news(nid, agency_id, library_name, news))
            for branch in branches:
                nid += 1
                self._add("library", agency_id, self._library(nid, agency_id, branch))

    def add_branch_page(self, agency_id: str, branch: tuple[str, str, str, str, str]) -> None:
        """One more branch page of library `agency_id`, with the week's hours (a large library
        system has dozens): `branch` is (branch id, name, street, postal code, city)."""
        nid = 1 + max(max(found, default=0) for found in self.by_nid.values())
        self._add("library", agency_id, self._library(nid, agency_id, branch))

    def _add(self, kind: str, agency_id: str, item: dict[str, Any]) -> None:
        self.items[kind][agency_id].append(item)
        self.by_nid[kind][int(item["nid"])] = item

    def _stamp(self, days: int, hour: int = 9) -> int:
        moment = datetime.combine(self.today + timedelta(days=days), time(hour), self.tz)
        return int(moment.timestamp())

    def _common(self, nid: int, title: str, created_days: int) -> dict[str, Any]:
        return {
            "title": _field("Titel", title),
            "author": _field("Forfatter", "admin"),
            "created": _field("Oprettet", self._stamp(created_days)),
            "changed": _field("Opdateret", self._stamp(created_days, 12)),
            "status": _field("Status", 1),
        }

    def _image(self, agency_id: str, nid: int) -> list[str]:
        return [f"files/{agency_id}/sandbox-{nid}.jpeg"]

    def _event(
        self,
        nid: int,
        agency_id: str,
        branch: tuple[str, str, str, str, str],
        event: tuple[str, str, str, str, int, int, int, str],
    ) -> dict[str, Any]:
        title, lead, category, target, days, hour, hours, price = event
        _, branch_name, street, postal_code, city = branch
        day = (self.today + timedelta(days=days)).isoformat()
        item = self._common(nid, title, -14)
        item.update(
            {
                "field_ding_event_body": _field("Body", f"<p>{lead}</p><p>Gratis adgang.</p>"),
                "field_ding_event_lead": _field("Lead", lead),
                "field_ding_event_list_image": _field(
                    "List image", self._image(agency_id, nid), ["image/jpeg"]
                ),
                **_address("field_ding_event_location", "Location", street, postal_code, city),
                "field_ding_event_location__name_line": _field(
                    "Location (name line)", [branch_name]
                ),
                "field_ding_event_materials": _field("Materials", []),
                "field_ding_event_price": _field("Price", [price] if price else []),
                "field_ding_event_date": _field(
                    "Event date",
                    {
                        "from": f"{day} {hour:02d}:00:00",
                        "to": f"{day} {hour + hours:02d}:00:00",
                    },
                ),
                "field_ding_event_category": _terms("Event category", category),
                "field_ding_event_target": _terms("Event target", target),
                "nid": nid,
            }
        )
        return item

    def _news(
        self, nid: int, agency_id: str, library_name: str, news: tuple[str, str, str, int]
    ) -> dict[str, Any]:
        title, lead, category, days_ago = news
        item = self._common(nid, title, -days_ago)
        item.update(
            {
                "field_ding_news_body": _field("Body", f"<p>{lead}</p><p>{library_name}</p>"),
                "field_ding_news_lead": _field("Lead", lead),
                "field_ding_news_list_image": _field(
                    "List image", self._image(agency_id, nid), ["image/jpeg"]
                ),
                "field_ding_news_materials": _field("Materials", []),
                "field_ding_news_category": _terms("News Category", category),
                "nid": nid,
            }
        )
        return item

    def _library(
        self, nid: int, agency_id: str, branch: tuple[str, str, str, str, str]
    ) -> dict[str, Any]:
        branch_id, name, street, postal_code, city = branch
        item = self._common(nid, name, -400)
        slug = name.lower().replace(" ", "-")
        item.update(
            {
                **_address("field_ding_library_addresse", "Adresse", street, postal_code, city),
                "field_ding_library_body": _field("Body", f"<p>{'. '.join(OPENING_HOURS)}</p>"),
                "field_ding_library_lead": _field("Lead", f"Velkommen til {name}."),
                "field_ding_library_mail": _field("E-mail", [f"{branch_id.lower()}@sandbox.test"]),
                "field_ding_library_phone_number": _field("Telefon", ["33 66 30 00"]),
                "field_ding_library_slug": _field("Slug", slug),
                "opening_hours": self._opening_hours(nid),
                "nid": nid,
            }
        )
        return item

    def _opening_hours(self, nid: int) -> list[dict[str, Any]]:
        """The coming week's hours (field names from the platform's library schema)."""
        hours = []
        for days in range(7):
            day = self.today + timedelta(days=days)
            weekend = day.weekday() >= 5
            hours.append(
                {
                    "category_tid": None,
                    "customised": None,
                    "date": day.isoformat(),
                    "end_time": "16:00" if weekend else "20:00",
                    "instance_id": f"{nid}{days:02d}",
                    "nid": str(nid),
                    "notice": None,
                    "original_instance_id": None,
                    "repeat_end_date": None,
                    "repeat_rule": None,
                    "start_time": "10:00" if weekend else "08:00",
                }
            )
        return hours

    def listing(
        self, kind: str, agencies: list[str], offset: int, limit: int
    ) -> list[dict[str, Any]]:
        found = [item for agency in agencies for item in self.items[kind].get(agency, [])]
        return found[offset : offset + limit]

    def by_nids(self, kind: str, nids: list[str]) -> list[dict[str, Any] | None]:
        """One entry per nid, None where there is none (as the platform answers)."""
        index = self.by_nid[kind]
        return [index.get(int(n)) if n.strip().isdigit() else None for n in nids]
