"""Typed, tolerant models of the library services' resources (spec section 2 and production notes).

Unknown fields are ignored, optional fields are optional, amounts and queue positions stay
strings, and dates become `datetime.date` in the bot's time zone when their format is known,
else stay the text that was sent. Pass the zone as validation context: `{"tz": ZoneInfo(...)}`.
The civil registration number (`cpr`) is deliberately not modelled, so it is dropped on parse.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated
from zoneinfo import ZoneInfo

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel

DEFAULT_TZ = ZoneInfo("Europe/Copenhagen")


# The Danish day-first forms other modules of the platform send: 01/12/2026, 1-12-2026,
# 01.12.2026, optionally followed by a time of day (which does not change the day).
_DAY_FIRST = re.compile(
    r"^(\d{1,2})([./-])(\d{1,2})\2(\d{4})(?:[ T]\d{1,2}[:.]\d{2}(?:[:.]\d{2}(?:\.\d+)?)?)?$"
)


def _day_first(text: str) -> dt.date | None:
    match = _DAY_FIRST.match(text)
    if match is None:
        return None
    day, _, month, year = match.groups()
    try:
        return dt.date(int(year), int(month), int(day))
    except ValueError:  # 31/02/2026: not a date, so kept as text
        return None


# The platform fills a date it does not have with the Unix epoch (recorded answers carry
# `1970-01-01` on fees): such a date, or an earlier one, is no date.
PLACEHOLDER_DAYS_UNTIL = dt.date(1970, 1, 1)


def parse_library_date(value: object, tz: ZoneInfo = DEFAULT_TZ) -> dt.date | str | None:
    """A date in `tz` for every ISO 8601 shape seen and the Danish day-first forms
    (`dd/mm/yyyy`, `dd-mm-yyyy`, `dd.mm.yyyy`); anything else is kept as text; a placeholder
    date (the epoch or earlier) is None."""
    day = _parse_date(value, tz)
    if isinstance(day, dt.date) and day <= PLACEHOLDER_DAYS_UNTIL:
        return None
    return day


def _parse_date(value: object, tz: ZoneInfo) -> dt.date | str | None:
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        return value
    else:
        text = str(value).strip()
        day_first = _day_first(text)
        if day_first is not None:
            return day_first
        try:
            if len(text) == 10:
                return dt.date.fromisoformat(text)
            moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return text
    if moment.tzinfo is None:
        return moment.date()
    try:
        return moment.astimezone(tz).date()
    except OverflowError:  # the first or last day of the calendar, shifted out of range
        return moment.date()


def _to_str(value: object) -> object:
    """Amounts, ids and queue positions are strings on the wire; accept numbers too."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    return value


def _first(value: object) -> object:
    """The work endpoints send list-valued fields; the bot wants the first value."""
    if isinstance(value, list):
        return _first(value[0]) if value else None
    return value


def _date_in_zone(value: object, info: ValidationInfo) -> dt.date | str | None:
    return parse_library_date(value, (info.context or {}).get("tz", DEFAULT_TZ))


LibraryDate = Annotated[dt.date | str | None, BeforeValidator(_date_in_zone)]
Text = Annotated[str, BeforeValidator(_to_str)]
OptText = Annotated[str | None, BeforeValidator(_to_str)]
FirstText = Annotated[str | None, BeforeValidator(lambda v: _to_str(_first(v)))]


def _texts(value: object) -> object:
    """A list of texts (one per language, as `/v3/libraries` sends them); one text alone too."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return value


Texts = Annotated[list[str], BeforeValidator(_texts)]


class Model(BaseModel):
    model_config = ConfigDict(
        extra="ignore", alias_generator=to_camel, populate_by_name=True, frozen=True
    )


# --- access service -------------------------------------------------------------------------


class TokenResponse(Model):
    access_token: str = Field(alias="access_token", repr=False)
    token_type: str = Field(default="Bearer", alias="token_type")
    expires_in: int | None = Field(default=None, alias="expires_in")


class Session(Model):
    """Earlier flow: what `login` returns (the spec shows only 'a token and an id')."""

    token: Text = Field(repr=False)
    id: Text


class Agency(Model):
    user_id: OptText = None
    agency_id: OptText = None
    user_id_type: OptText = None


class TicketAttributes(Model):
    gender: OptText = None
    wayf_id: OptText = Field(default=None, alias="wayfId")
    agencies: list[Agency] = Field(default_factory=list)
    birth_date: OptText = None
    birth_year: OptText = None
    unilogin_id: OptText = Field(default=None, alias="uniloginId")
    municipality: OptText = None


class Ticket(Model):
    id: Text
    token: Text = Field(repr=False)
    attributes: TicketAttributes = Field(default_factory=TicketAttributes)


class Userinfo(Model):
    """What the bot keeps of userinfo: `uniqueId` and `municipality`, nothing else.

    Userinfo may carry more (`userId`, `agencies[].userId`, `cpr`: civil registration
    numbers); those are never parsed, so they never outlive the request that read them.
    """

    unique_id: OptText = None
    municipality: OptText = None


# --- data platform --------------------------------------------------------------------------


class Loan(Model):
    loan_id: Text
    due_date: LibraryDate = None
    title: Text = ""
    creator: Text = ""
    material_id: OptText = None
    title_id: OptText = None


class Hold(Model):
    """An `order` of borrower status: a reservation (hold) the patron has placed."""

    order_id: Text
    order_type: Text = "normal"
    status: Text = ""
    pick_up_agency: OptText = None
    hold_queue_position: OptText = None
    creator: Text = ""
    title: Text = ""
    order_date: LibraryDate = None
    title_id: OptText = None
    pick_up_expiry_date: LibraryDate = None
    pick_up_id: OptText = None


class Debt(Model):
    amount: Text = "0"
    currency: Text = "DKK"
    date: LibraryDate = None
    # What the fee is for: the material's title (may be empty), as the spec's debt item has
    # it, and its creator (the platform's `user` schema); the data names no other reason.
    title: Text = ""
    creator: Text = ""


class BorrowerStatus(Model):
    id: OptText = None
    name: OptText = None
    address: OptText = None
    postal_code: OptText = None
    mail: OptText = None
    loans: list[Loan] = Field(default_factory=list)
    orders: list[Hold] = Field(default_factory=list)
    debt: list[Debt] = Field(default_factory=list)
    libcmsapi: OptText = None
    # The recorded answers name the content-service field `ddbcmsapi` (the spec: `libcmsapi`).
    ddbcmsapi: OptText = None
    agency: OptText = None

    @field_validator("loans", "orders", "debt", mode="before")
    @classmethod
    def _none_is_empty(cls, value: object) -> object:
        return [] if value is None else value


class OrderResult(Model):
    """A placed order: only `status` == "ok" is a success (the client checks)."""

    status: Text = ""
    ors_id: OptText = None

    @property
    def ok(self) -> bool:
        return self.status.strip().lower() == "ok"


class RenewResult(Model):
    loan_id: Text
    return_date: LibraryDate = None


class CancelResult(Model):
    order_id: Text
    deleted: bool = False


class Work(Model):
    pid: FirstText = None
    title: FirstText = None
    creator: FirstText = None
    date: FirstText = None
    type: FirstText = None
    # Protocol-relative cover URLs (`//moreinfo.addi.dk/...`), the first of each list; none
    # when the work has no cover (production notes).
    cover_url_thumbnail: FirstText = None
    cover_url117: FirstText = None


class Copy(Model):
    """One copy of a title at a branch (`/v3/holdingsitems`). Recorded statuses are `OnShelf`
    and `NotForLoan`; others exist. `branch_id` is often empty: the branch is its name."""

    branch: Text = ""
    branch_id: OptText = None
    department: Text = ""
    location: Text = ""
    sub_location: Text = ""
    status: Text = ""

    @property
    def on_shelf(self) -> bool:
        return self.status == "OnShelf"

    @property
    def not_for_loan(self) -> bool:
        return self.status == "NotForLoan"

    @property
    def place(self) -> list[str]:
        """Department, location and sub-location, the empty ones left out."""
        return [part for part in (self.department, self.location, self.sub_location) if part]


class Holdings(Model):
    pid: Text
    holdingsitems: list[Copy] = Field(default_factory=list)


class Availability(Model):
    """`/v3/availability` of one title for the logged-in patron's library: whether it lends
    it, when an order would be ready, and whether the order system would take an order, with
    its reason (the order system's codes); or `unavailable` when the holding service failed."""

    will_lend: bool | None = None
    expected_delivery: LibraryDate = None
    order_possible: bool | None = None
    order_possible_reason: OptText = None
    unavailable: OptText = None


class SearchResult(Model):
    hit_count: int = 0
    works: list[Work] = Field(default_factory=list)


class Branch(Model):
    # Digits as recorded (`710104`; the answer's `isil` is the `DK-` form): see `branch_key`.
    branch_id: Text
    agency_id: OptText = None
    branch_name: FirstText = None
    # The library the branch belongs to (a family's cards may be at several).
    agency_name: FirstText = None
    branch_website_url: OptText = None
    # "1"/"0" as recorded (the sandbox may send a boolean): may patrons pick up here?
    pickup_allowed: OptText = None
    # The library's own catalogue, where `owned_own_catalogue` says to reserve instead.
    branch_catalogue_url: OptText = None
    # Free text per language (Danish first), as the library publishes it: not a schedule.
    opening_hours: Texts = Field(default_factory=list)
    temporarily_closed: OptText = None

    @property
    def allows_pickup(self) -> bool:
        return (self.pickup_allowed or "1").strip().lower() not in ("0", "false", "no")


# --- content of the library's own site (/v3/events, /v3/news) and /v3/recommend --------------
#
# The platform passes the content service's items through: every field is
# `{"name": <label>, "value": ..., "attr": [...]}`, taxonomy fields `{"name", "terms"}`, `nid` a
# number, `created` Unix seconds, an event's date `{"from": "YYYY-MM-DD hh:mm:ss", "to": ...}`
# in local time (serviceprovider's recorded `events*.snapshot.js`, `news*.snapshot.js`).


def _cms_value(value: object) -> object:
    """A content-service field's value: `{"value": ...}` unwrapped, lists to their first."""
    if isinstance(value, dict):
        value = value.get("value")
    return _first(value)


def _cms_terms(value: object) -> object:
    """A taxonomy field's first term (`{"name", "terms": [...]}`)."""
    if isinstance(value, dict):
        return _first(value.get("terms"))
    return _first(value)


def parse_cms_time(value: object, tz: ZoneInfo = DEFAULT_TZ) -> dt.datetime | None:
    """A moment in `tz` from `YYYY-MM-DD hh:mm:ss` (local: the recorded times carry no zone),
    any ISO 8601 form, or Unix seconds; None for anything else."""
    if isinstance(value, bool) or value is None or value == "":
        return None
    moment: dt.datetime
    if isinstance(value, int | float):
        try:
            return dt.datetime.fromtimestamp(value, tz)
        except (OverflowError, OSError, ValueError):
            return None
    text = str(value).strip()
    if text.isdigit():
        return parse_cms_time(int(text), tz)
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=tz)
    try:
        return moment.astimezone(tz)
    except OverflowError:
        return None


def _cms_time_in_zone(value: object, info: ValidationInfo) -> dt.datetime | None:
    return parse_cms_time(_cms_value(value), (info.context or {}).get("tz", DEFAULT_TZ))


CmsText = Annotated[str | None, BeforeValidator(lambda v: _to_str(_cms_value(v)) or None)]
CmsTerm = Annotated[str | None, BeforeValidator(lambda v: _to_str(_cms_terms(v)) or None)]
CmsTime = Annotated[dt.datetime | None, BeforeValidator(_cms_time_in_zone)]


class CmsModel(BaseModel):
    """An item of the content service, by its snake_case field names (no camel aliases)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    nid: OptText = None
    title: CmsText = None
    created: CmsTime = None
    changed: CmsTime = None


def _event_date(value: object, info: ValidationInfo) -> object:
    """`field_ding_event_date`'s value `{"from", "to"}`, kept as a dict of moments."""
    inner = value.get("value") if isinstance(value, dict) else None
    if not isinstance(inner, dict):
        return {}
    tz = (info.context or {}).get("tz", DEFAULT_TZ)
    return {key: parse_cms_time(inner.get(key), tz) for key in ("from", "to")}


class Event(CmsModel):
    """An event at the library (`/v3/events`)."""

    lead: CmsText = Field(default=None, alias="field_ding_event_lead")
    body: CmsText = Field(default=None, alias="field_ding_event_body")
    dates: Annotated[dict[str, dt.datetime | None], BeforeValidator(_event_date)] = Field(
        default_factory=dict, alias="field_ding_event_date"
    )
    place: CmsText = Field(default=None, alias="field_ding_event_location__name_line")
    street: CmsText = Field(default=None, alias="field_ding_event_location__thoroughfare")
    price: CmsText = Field(default=None, alias="field_ding_event_price")
    category: CmsTerm = Field(default=None, alias="field_ding_event_category")
    target: CmsTerm = Field(default=None, alias="field_ding_event_target")

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    @property
    def starts(self) -> dt.datetime | None:
        return self.dates.get("from")

    @property
    def ends(self) -> dt.datetime | None:
        return self.dates.get("to")


class NewsItem(CmsModel):
    """A news item of the library (`/v3/news`)."""

    lead: CmsText = Field(default=None, alias="field_ding_news_lead")
    body: CmsText = Field(default=None, alias="field_ding_news_body")
    category: CmsTerm = Field(default=None, alias="field_ding_news_category")

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


def _iso_day(value: object) -> dt.date | None:
    """`YYYY-MM-DD` as a date; None for anything else (a day unread is a day not shown)."""
    try:
        return dt.date.fromisoformat(str(value).strip()[:10]) if value else None
    except ValueError:
        return None


def _clock(value: object) -> str | None:
    """`HH:MM` (seconds dropped) from the schema's `start_time`/`end_time`; None otherwise."""
    text = str(value or "").strip()[:5]
    try:
        return dt.time.fromisoformat(text).strftime("%H:%M") if text else None
    except ValueError:
        return None


class OpeningDay(BaseModel):
    """One dated entry of a library page's `opening_hours` (the platform's library schema,
    `doc/specs/definitions/library.yaml`: `date`, `start_time`, `end_time`, `notice`, ...)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    date: Annotated[dt.date | None, BeforeValidator(_iso_day)] = None
    start_time: Annotated[str | None, BeforeValidator(_clock)] = None
    end_time: Annotated[str | None, BeforeValidator(_clock)] = None
    notice: Annotated[
        str | None, BeforeValidator(lambda v: v.strip() or None if isinstance(v, str) else None)
    ] = None


class LibraryPage(CmsModel):
    """A branch's page on the library's site (`/v3/library`): its name (`title`) and its
    dated opening hours. The page names no branch id; it is matched to a branch by name."""

    opening_hours: list[OpeningDay] = Field(default_factory=list)

    def hours_on(self, day: dt.date) -> list[OpeningDay]:
        """The page's opening intervals on `day`, earliest first; [] when it lists none."""
        found = [d for d in self.opening_hours if d.date == day and d.start_time and d.end_time]
        return sorted(found, key=lambda d: d.start_time or "")


class Recommendation(Model):
    """One work `/v3/recommend` suggests: its `pid`, a similarity `val`, and what it came `from`."""

    pid: Text
    val: float | None = None
    source: list[str] = Field(default_factory=list, alias="from")
