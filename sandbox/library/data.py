"""Test patrons, the catalogue and the libraries of the sandbox.

Everything is built from `today` and the time zone, so due dates are always current. Dates are
deliberately written in the shapes production sends (`2026-01-24`, `2026-01-24T00:00:00+01:00`,
`2026-01-24T00:00:00.000Z`), mixed deterministically, and one loan of Mette Larsen carries a
date in a foreign format (`24/01/2026`) as "new or external modules" may.
"""

from __future__ import annotations

import base64
import html
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

GUID_NAMESPACE = uuid.UUID("5f0c2a56-2b8e-4c51-9d55-6a1d3c0b7e11")
DEFAULT_PIN = "1234"
CURRENCY = "DKK"
# The content service's base address, named `ddbcmsapi` in /v3/user as the recorded answers do.
DDBCMSAPI = "https://cmscontent.sandbox.test/"
MAX_RENEWALS = 3  # renewals per loan the test libraries allow
# The kinds of benchmark patron `synthetic_of` makes, and their first loan's due date in days.
MIX_KINDS = ("overdue", "today", "tomorrow", "ready", "none")
MIX_DUE_IN = {"overdue": -2, "today": 0, "tomorrow": 1}
# The test family's user ids (parent, child, child at Frederiksberg) and its factory's first id.
FAMILY_IDS = ("1000000005", "1000000006", "1000000007")
FAMILY_FIRST_ID = 4_200_000

# (faust number, title, creator, year, type). Ids look like `870970-basis:<faust>`.
CATALOGUE: tuple[tuple[str, str, str, str, str], ...] = (
    ("29318871", "Rødt & sort <2. udgave>", "Stendhal", "2012", "Bog"),
    ("52418873", "Snak_om_*stjerner*", "Ærø Østergård", "2019", "Bog"),
    ("61234570", "Æbler, øl og ålegræs", "Åse Ødegård", "2021", "Bog"),
    ("22677780", "Kongens fald", "Johannes V. Jensen", "1901", "Bog"),
    ("27247164", "Den afrikanske farm", "Karen Blixen", "1937", "Bog"),
    ("22252852", "Harry Potter og De Vises Sten", "J.K. Rowling", "1998", "Bog"),
    ("23645564", "Babettes gæstebud", "Karen Blixen", "1958", "Bog"),
    ("21893526", "Hærværk", "Tom Kristensen", "1930", "Bog"),
    ("25775481", "Barndommens gade", "Tove Ditlevsen", "1943", "Bog"),
    ("50587448", "Gift", "Tove Ditlevsen", "1971", "Bog"),
    ("21464391", "Frøken Smillas fornemmelse for sne", "Peter Høeg", "1992", "Bog"),
    ("27015794", "Kvinden i buret", "Jussi Adler-Olsen", "2007", "Bog"),
    ("51371213", "Kvinden i buret", "Jussi Adler-Olsen", "2013", "Lydbog (net)"),
    ("27936865", "Fasandræberne", "Jussi Adler-Olsen", "2008", "Bog"),
    ("20178945", "Det forsømte forår", "Hans Scherfig", "1940", "Bog"),
    ("22939157", "Lykke-Per", "Henrik Pontoppidan", "1904", "Bog"),
    ("23340632", "Niels Lyhne", "J.P. Jacobsen", "1880", "Bog"),
    ("28530080", "Eventyr og historier", "H.C. Andersen", "1862", "Bog"),
    ("24458512", "Den grimme ælling", "H.C. Andersen", "1843", "Bog"),
    ("22330617", "Jeppe på Bjerget", "Ludvig Holberg", "1722", "Bog"),
    ("26193583", "Erasmus Montanus", "Ludvig Holberg", "1731", "Bog"),
    ("20636375", "Livets hastighed", "Michael Strunge", "1978", "Bog"),
    ("53061407", "Ternet Ninja", "Anders Matthesen", "2016", "Bog"),
    ("29795904", "Jagten", "Thomas Vinterberg", "2012", "Film (dvd)"),
    ("22406094", "Ringenes Herre: Eventyret om ringen", "J.R.R. Tolkien", "1954", "Bog"),
    ("06442885", "The Hobbit", "J.R.R. Tolkien", "1937", "Bog"),
    ("22871420", "1984", "George Orwell", "1949", "Bog"),
    ("24203999", "Hundrede års ensomhed", "Gabriel García Márquez", "1967", "Bog"),
    ("27367658", "Stolthed og fordom", "Jane Austen", "1813", "Bog"),
    ("25561244", "Forbrydelse og straf", "Fjodor Dostojevskij", "1866", "Bog"),
    ("22677608", "Den lille prins", "Antoine de Saint-Exupéry", "1943", "Bog"),
    ("23143152", "Sult", "Knut Hamsun", "1890", "Bog"),
    ("27562159", "Pippi Langstrømpe", "Astrid Lindgren", "1945", "Bog"),
    ("22981346", "Mio, min Mio", "Astrid Lindgren", "1954", "Bog"),
    ("21753520", "Dune", "Frank Herbert", "1965", "Bog"),
    ("28447391", "Norwegian Wood", "Haruki Murakami", "1987", "Bog"),
    ("51588344", "Sapiens: en kort historie om menneskeheden", "Yuval Noah Harari", "2011", "Bog"),
    ("47325218", "Klara og solen", "Kazuo Ishiguro", "2021", "Bog"),
    ("52115939", "Min geniale veninde", "Elena Ferrante", "2011", "Bog"),
    ("26542596", "Drengen i den stribede pyjamas", "John Boyne", "2006", "Bog"),
    ("23190436", "Mørkets hjerte", "Joseph Conrad", "1899", "Bog"),
)

# (agency id, library name, branches as (branch id, name, street, postal code, city)).
LIBRARIES: tuple[tuple[str, str, tuple[tuple[str, str, str, str, str], ...]], ...] = (
    (
        "710100",
        "Københavns Biblioteker",
        (
            ("DK-710100", "Københavns Hovedbibliotek", "Krystalgade 15", "1172", "København K"),
            ("DK-710104", "Vesterbro Bibliotek", "Lyrskovgade 4", "1758", "København V"),
            ("DK-710111", "Islands Brygge Bibliotek", "Njalsgade 13", "2300", "København S"),
            ("DK-710117", "Nørrebro Bibliotek", "Bragesgade 8B", "2200", "København N"),
        ),
    ),
    (
        "751000",
        "Aarhus Kommunes Biblioteker",
        (
            ("DK-751000", "Dokk1", "Hack Kampmanns Plads 2", "8000", "Aarhus C"),
            ("DK-751003", "Risskov Bibliotek", "Fortevej 87", "8240", "Risskov"),
            ("DK-751011", "Viby Bibliotek", "Skanderborgvej 170", "8260", "Viby J"),
        ),
    ),
    (
        "746100",
        "Odense Bibliotekerne",
        (
            ("DK-746100", "Odense Hovedbibliotek", "Østre Stationsvej 15", "5000", "Odense C"),
            ("DK-746104", "Vollsmose Bibliotek", "Vollsmose Torv 8", "5240", "Odense NØ"),
        ),
    ),
    (
        "775100",
        "Aalborg Bibliotekerne",
        (
            ("DK-775100", "Hovedbiblioteket Aalborg", "Rendsburggade 2", "9000", "Aalborg"),
            ("DK-775120", "Nørresundby Bibliotek", "Torvet 2", "9400", "Nørresundby"),
        ),
    ),
    (
        "714700",
        "Frederiksberg Bibliotek",
        (
            (
                "DK-714700",
                "Frederiksberg Hovedbibliotek",
                "Solbjergvej 21",
                "2000",
                "Frederiksberg",
            ),
            (
                "DK-714703",
                "Bibliotek Sønderjyllands Allé",
                "Sønderjyllands Allé 2",
                "2000",
                "Frederiksberg",
            ),
        ),
    ),
)

OPENING_HOURS = ("Man-fre 08-20", "Lør-søn 10-16")
OPENING_HOURS_EN = ("Mon-Fri 08-20", "Sat-Sun 10-16")


@dataclass(frozen=True)
class TestPatron:
    """A patron a person or a test can log in as."""

    __test__ = False  # not a pytest test class

    user_id: str
    pin: str
    agency: str
    name: str
    description: str


@dataclass
class PatronData:
    """The live, mutable borrower status of one patron, in wire form (tests may tweak it)."""

    loans: list[dict[str, Any]] = field(default_factory=list)
    orders: list[dict[str, Any]] = field(default_factory=list)
    debt: list[dict[str, Any]] = field(default_factory=list)
    # Loans another patron has reserved, so renewing them is refused.
    unrenewable: set[str] = field(default_factory=set)
    # How often each loan has been renewed (loan id -> count; absent means never).
    renewals: dict[str, int] = field(default_factory=dict)
    # The library system no longer accepts this patron: /v3/user is "User authentication failed".
    refused_by_library: bool = False


@dataclass
class PatronRecord:
    """Everything the sandbox knows about a patron."""

    patron: TestPatron
    data: PatronData
    address: str
    postal_code: str
    municipality: str
    gender: str
    birth_date: str
    birth_year: str
    agencies: tuple[str, ...]

    @property
    def unique_id(self) -> str:
        """A stable GUID per patron, as the access service's uniqueId."""
        return str(uuid.uuid5(GUID_NAMESPACE, self.patron.user_id))

    @property
    def mail(self) -> str:
        return f"laaner{self.patron.user_id}@sandbox.test"

    @property
    def cpr(self) -> str:
        """A synthetic civil registration number (day, month, year, four digits)."""
        return f"{self.birth_date}{self.birth_year[2:]}{self.patron.user_id[-4:]}"


def ncip_id(*parts: str) -> str:
    """A loan or order id as the user status service writes them for some library systems:
    `NCIP` and base64 of `|`-joined parts (recorded: `renew_existing_loanid`, `order_cancel`).

    Padded so the base64 ends in `==`, as the recorded ids do.
    """
    raw = "|".join(parts) + "|||"
    while len(raw.encode()) % 3 != 1:
        raw += "|"
    return "NCIP" + base64.b64encode(raw.encode()).decode()


def pid(faust: str) -> str:
    return f"870970-basis:{faust}"


def work_json(entry: tuple[str, str, str, str, str]) -> dict[str, list[str]]:
    faust, title, creator, year, kind = entry
    return {
        "pid": [pid(faust)],
        "title": [title],
        "creator": [creator],
        "date": [year],
        "type": [kind],
    }


def has_cover(faust: str) -> bool:
    """Most works have a cover; one in seven has none (a placeholder shows instead)."""
    return int(faust) % 7 != 0


# The cover fields of the recorded answers (`work_single_pid_coverUrl`), by size.
COVER_FIELDS = ("coverUrlThumbnail", "coverUrl42", "coverUrl117", "coverUrl500", "coverUrlFull")


def cover_json(faust: str, host: str) -> dict[str, list[str]]:
    """The work's cover fields as the platform sends them: lists of protocol-relative URLs (on
    the sandbox's own host, so a browser loads them), and none at all for a work without a
    cover (production notes)."""
    if not has_cover(faust):
        return {}
    url = f"//{host}/covers/{faust}.svg"
    return {name: [url] for name in COVER_FIELDS}


def cover_svg(faust: str, title: str) -> str:
    """A small generated cover: a colour from the record number, and the title's initial."""
    hue = int(faust) % 360
    initial = html.escape((title.strip()[:1] or "?").upper())
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="117" height="165" viewBox="0 0 117 165">'
        f'<rect width="117" height="165" fill="hsl({hue},45%,35%)"/>'
        f'<text x="58" y="100" font-size="64" text-anchor="middle" fill="#fff" '
        f'font-family="Georgia,serif">{initial}</text></svg>'
    )


def branch_json(
    agency_id: str, branch: tuple[str, str, str, str, str], library_name: str = ""
) -> dict[str, Any]:
    isil, name, street, postal_code, city = branch
    digits = isil.removeprefix("DK-")
    return {
        # As recorded (libraries_isil_request.snapshot.js): ids are digits, `isil` has `DK-`,
        # the library's name is one string, texts are lists (Danish first), flags "1"/"0".
        "agencyName": library_name,
        "agencyId": agency_id,
        "agencyType": "Folkebibliotek",
        "branchId": digits,
        "branchType": "H" if digits == agency_id else "f",
        "branchName": [name],
        "branchShortName": [name.split(" ")[0]],
        "branchIsAgency": "1" if digits == agency_id else "0",
        "postalAddress": street,
        "postalCode": postal_code,
        "city": city,
        "isil": isil,
        "branchCatalogueUrl": f"https://bibliotek-{agency_id}.sandbox.test",
        "branchWebsiteUrl": f"https://bibliotek.sandbox.test/{isil.lower()}",
        # As recorded (libraries_branchIds.snapshot.js): one free text per language, its lines
        # separated by CRLF.
        "openingHours": ["\r\n".join(OPENING_HOURS), "\r\n".join(OPENING_HOURS_EN)],
        "temporarilyClosed": "0",
        "illOrderReceiptText": [
            "Tak for din bestilling. Du får besked, når materialet er klar til afhentning.",
            "Thank you for your order. You will be told when it is ready for pick-up.",
        ],
        "pickupAllowed": "1",
        "geolocation": {"latitude": "55.67", "longitude": "12.57"},
    }


def all_branch_ids() -> set[str]:
    return {branch[0] for _, _, branches in LIBRARIES for branch in branches}


def agency_of(branch: str) -> str | None:
    """The agency (digits) whose library the branch (ISIL) belongs to."""
    return next((a for a, _, branches in LIBRARIES for b in branches if b[0] == branch), None)


class Dates:
    """Writes dates in the production shapes, cycling through them deterministically."""

    def __init__(self, today: date, tz: ZoneInfo) -> None:
        self.today = today
        self.tz = tz
        self._turn = 0

    def day(self, offset: int) -> date:
        return self.today + timedelta(days=offset)

    def _next(self, shapes: int) -> int:
        self._turn += 1
        return self._turn % shapes

    def any_shape(self, offset: int) -> str:
        """A date in any of the three shapes."""
        return self.render(self.day(offset), self._next(3))

    def moment(self, offset: int) -> str:
        """A date-time with an offset (either `+01:00` or `Z`)."""
        return self.render(self.day(offset), 1 + self._next(2))

    def render(self, day: date, shape: int) -> str:
        local_midnight = datetime.combine(day, time(), self.tz)
        if shape == 0:
            return day.isoformat()
        if shape == 1:
            return local_midnight.isoformat()
        offset = local_midnight.utcoffset()
        if offset is not None and offset >= timedelta(0):
            # The same calendar day in the local zone, as production writes it.
            return f"{day.isoformat()}T00:00:00.000Z"
        utc = local_midnight.astimezone(ZoneInfo("UTC"))
        return utc.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _catalogue(faust: str) -> tuple[str, str, str, str, str]:
    for entry in CATALOGUE:
        if entry[0] == faust:
            return entry
    raise KeyError(faust)


class PatronFactory:
    """Builds patrons with unique loan and order ids."""

    def __init__(self, today: date, tz: ZoneInfo, *, first_id: int = 4_100_000) -> None:
        self.dates = Dates(today, tz)
        self._next_id = first_id
        self._loans = 0

    def next_id(self) -> str:
        self._next_id += 1
        return str(self._next_id)

    def loan(self, entry: tuple[str, str, str, str, str], due_in: int) -> dict[str, Any]:
        """A loan; every third has a long `NCIP…` id, the rest all-digit ids (both recorded)."""
        faust, title, creator, _, _ = entry
        number = self.next_id()
        self._loans += 1
        loan_id = (
            ncip_id("0710", number.zfill(10), creator, title) if self._loans % 3 == 0 else number
        )
        return {
            "loanId": loan_id,
            "dueDate": self.dates.any_shape(due_in),
            "title": title,
            "creator": creator,
            "materialId": f"5{faust}{number[-2:]}",
            "titleId": faust,
        }

    def order(
        self,
        entry: tuple[str, str, str, str, str],
        *,
        status: str,
        queue: int,
        ordered: int,
        branch: str = "DK-710100",
        expiry_in: int | None = None,
        shelf: str | None = None,
    ) -> dict[str, Any]:
        faust, title, creator, _, _ = entry
        order: dict[str, Any] = {
            "orderId": self.next_id(),
            "orderType": "normal",
            "status": status,
            "pickUpAgency": branch,
            "holdQueuePosition": str(queue),
            "creator": creator,
            "title": title,
            "orderDate": self.dates.moment(ordered),
            "titleId": faust,
        }
        if status == "At reservation shelf":
            # As recorded: an order waiting on the shelf has no queue position.
            del order["holdQueuePosition"]
        if expiry_in is not None:
            order["pickUpExpiryDate"] = self.dates.any_shape(expiry_in)
        if shelf is not None:
            order["pickUpId"] = shelf
        return order

    def debt(self, amount: str, title: str, days_ago: int) -> dict[str, Any]:
        """A fee, its date in either recorded form: a date-time with offset, or the plain date
        that serviceprovider's `user.js` cuts it to."""
        day = self.dates.day(-days_ago)
        date = day.isoformat() if days_ago % 2 else self.dates.render(day, 1)
        return {"amount": amount, "currency": CURRENCY, "date": date, "title": title}

    def record(
        self,
        patron: TestPatron,
        data: PatronData,
        *,
        number: int,
        gender: str = "k",
        birth: str = "0101",
        year: str = "1980",
        agencies: tuple[str, ...] = ("710100",),
        address: str | None = None,
    ) -> PatronRecord:
        return PatronRecord(
            patron=patron,
            data=data,
            address=address or f"Bibliotekvej {number}",
            postal_code="2300",
            municipality="101",
            gender=gender,
            birth_date=birth,
            birth_year=year,
            agencies=agencies,
        )

    def test_patrons(self) -> list[PatronRecord]:
        """The four documented test patrons (ids and pins are relied on by tests)."""
        c = _catalogue
        karen = PatronData(
            loans=[
                self.loan(c("29318871"), -2),
                self.loan(c("52418873"), 0),
                self.loan(c("61234570"), 1),
                self.loan(c("22677780"), 3),
                self.loan(c("27247164"), 20),
                self.loan(c("22252852"), 20),
                self.loan(c("25775481"), 20),
            ],
            orders=[
                self.order(
                    c("21464391"),
                    status="Available for pickup",
                    queue=0,
                    ordered=-12,
                    expiry_in=5,
                    shelf="17",
                ),
                self.order(
                    c("27015794"),
                    status="At reservation shelf",
                    queue=0,
                    ordered=-20,
                    branch="DK-710104",
                    expiry_in=2,
                    shelf="4",
                ),
                self.order(c("24203999"), status="In process", queue=1, ordered=-3),
                self.order(c("21753520"), status="Active", queue=4, ordered=-30),
            ],
            debt=[
                self.debt("45.50", "Rødt & sort <2. udgave>", 14),
                self.debt("20.00", "", 40),
            ],
        )
        # "Kongens fald" (due in 3 days) is reserved by someone else: renewal is refused.
        karen.unrenewable.add(karen.loans[3]["loanId"])
        # "Snak_om_*stjerner*" (due today) has used all its renewals.
        karen.renewals[karen.loans[1]["loanId"]] = MAX_RENEWALS
        # A long order id, as the user status service sends for some library systems.
        karen.orders[3]["orderId"] = ncip_id(
            "0019", self.dates.day(-30).strftime("%d-%m-%Y 10:04:02"), "Jensen, Karen", "Dune"
        )
        ole = PatronData(debt=[self.debt("0", "", 0)])
        mette = PatronData(
            loans=[
                self.loan(CATALOGUE[(i * 7) % len(CATALOGUE)], (i * 11) % 61 - 15)
                for i in range(65)
            ]
        )
        # An external module's date format.
        mette.loans[10]["dueDate"] = self.dates.day(9).strftime("%d/%m/%Y")
        small = PatronData(
            loans=[self.loan(c("22939157"), 3)],
            orders=[
                self.order(
                    c("47325218"),
                    status="Available for pickup",
                    queue=0,
                    ordered=-7,
                    expiry_in=4,
                    shelf="23",
                )
            ],
        )
        return [
            self.record(
                TestPatron(
                    "1000000001",
                    DEFAULT_PIN,
                    "710100",
                    "Karen Jensen",
                    "loans overdue, due today/tomorrow/in 3 days, four kinds of holds, debt",
                ),
                karen,
                number=1,
                agencies=("710100", "751000"),
            ),
            self.record(
                TestPatron(
                    "1000000002",
                    DEFAULT_PIN,
                    "710100",
                    "Ole Hansen",
                    "nothing on loan, no holds, debt of 0 kr.",
                ),
                ole,
                number=2,
                gender="m",
                birth="1503",
                year="1962",
            ),
            self.record(
                TestPatron(
                    "1000000003",
                    DEFAULT_PIN,
                    "710100",
                    "Mette Larsen",
                    "65 loans with various due dates (long lists)",
                ),
                mette,
                number=3,
                birth="3009",
                year="1991",
            ),
            self.record(
                TestPatron(
                    "1000000004",
                    DEFAULT_PIN,
                    "710100",
                    "Jonas Poulsen",
                    "one loan due in 3 days and one hold ready for pick-up",
                ),
                small,
                number=4,
                gender="m",
                birth="0712",
                year="2001",
            ),
        ]

    def family(self) -> list[PatronRecord]:
        """One household with three cards at two libraries: a parent and a child at Københavns
        Biblioteker, a child at Frederiksberg Bibliotek (ids and pins are relied on by tests).

        Built by a factory of its own (`FAMILY_FIRST_ID`), so the four patrons above and the
        synthetic ones keep their loan ids and date shapes.
        """
        c = _catalogue
        anna = PatronData(
            loans=[
                self.loan(c("52115939"), 1),
                self.loan(c("47325218"), 12),
                self.loan(c("51588344"), 24),
            ],
            orders=[self.order(c("28447391"), status="Active", queue=3, ordered=-9)],
            debt=[self.debt("30.00", "Jagten", 9)],  # a film returned late
        )
        sofie = PatronData(
            loans=[
                self.loan(c("27562159"), -1),
                self.loan(c("53061407"), 0),
                self.loan(c("22981346"), 3),
            ],
            orders=[self.order(c("22252852"), status="In process", queue=2, ordered=-4)],
            debt=[self.debt("0", "", 0)],
        )
        # "Ternet Ninja" (due today) is reserved by another child: its renewal is refused.
        sofie.unrenewable.add(sofie.loans[1]["loanId"])
        emil = PatronData(
            loans=[
                self.loan(c("28530080"), 2),
                self.loan(c("06442885"), 16),
            ],
            orders=[
                self.order(
                    c("22406094"),
                    status="Available for pickup",
                    queue=0,
                    ordered=-10,
                    branch="DK-714703",
                    expiry_in=3,
                    shelf="12",
                )
            ],
            debt=[self.debt("0", "", 0)],
        )
        # One household: the same address and municipality (userinfo's), two libraries.
        home = "Bibliotekvej 5"
        return [
            self.record(
                TestPatron(
                    FAMILY_IDS[0],
                    DEFAULT_PIN,
                    "710100",
                    "Anna Holm",
                    "family (parent): a loan due tomorrow, a hold in the queue, a fee",
                ),
                anna,
                number=5,
                birth="1206",
                year="1984",
                address=home,
            ),
            self.record(
                TestPatron(
                    FAMILY_IDS[1],
                    DEFAULT_PIN,
                    "710100",
                    "Sofie Holm",
                    "family (child): a loan overdue, one due today (renewal refused), a hold",
                ),
                sofie,
                number=6,
                birth="0403",
                year="2015",
                address=home,
            ),
            self.record(
                TestPatron(
                    FAMILY_IDS[2],
                    DEFAULT_PIN,
                    "714700",
                    "Emil Holm",
                    "family (child) at Frederiksberg Bibliotek 714700: a loan due in 2 days, "
                    "a hold ready for pick-up",
                ),
                emil,
                number=7,
                gender="m",
                birth="2109",
                year="2017",
                agencies=("714700",),
                address=home,
            ),
        ]

    def synthetic(self, number: int, *, due_soon: bool) -> PatronRecord:
        """A cheap benchmark patron: one or two loans, due soon for every n-th."""
        user_id = f"2{number:09d}"
        entry = CATALOGUE[number % len(CATALOGUE)]
        loans = [self.loan(entry, 1 + number % 3 if due_soon else 14 + number % 20)]
        if number % 2:
            loans.append(self.loan(CATALOGUE[(number + 5) % len(CATALOGUE)], 25))
        patron = TestPatron(
            user_id, DEFAULT_PIN, "710100", f"Testlåner {number}", "synthetic benchmark patron"
        )
        return self.record(patron, PatronData(loans=loans), number=number)

    def synthetic_of(self, number: int, kind: str) -> PatronRecord:
        """A benchmark patron of one kind of the sweep's mix (`MIX_KINDS`): a loan overdue, due
        today, due tomorrow, a hold ready for pick-up, or nothing due (loans 14 days off)."""
        if kind not in MIX_KINDS:
            raise ValueError(f"unknown kind {kind!r}; one of {', '.join(MIX_KINDS)}")
        user_id = f"2{number:09d}"
        entry = CATALOGUE[number % len(CATALOGUE)]
        due_in = MIX_DUE_IN.get(kind, 14 + number % 20)
        data = PatronData(loans=[self.loan(entry, due_in)])
        if kind == "ready":
            shelf = CATALOGUE[(number + 7) % len(CATALOGUE)]
            data.orders.append(
                self.order(
                    shelf,
                    status="At reservation shelf",
                    queue=0,
                    ordered=-10,
                    expiry_in=5,
                    shelf=str(number % 100),
                )
            )
        patron = TestPatron(
            user_id, DEFAULT_PIN, "710100", f"Testlåner {number}", "synthetic benchmark patron"
        )
        return self.record(patron, data, number=number)
