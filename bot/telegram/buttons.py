"""What each inline button stands for: one small typed payload per kind of button.

A button's callback data is only `<ACTION>:<stored id>` (within Telegram's 64 bytes); its
payload is kept in the store (`Store.put_callbacks`) as the JSON object `encode` makes and is
read back with `decode`. The shapes are those the stored buttons always had, so buttons shown
before an upgrade keep working after it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cache
from typing import Any, ClassVar, Protocol, TypeVar

from pydantic import TypeAdapter, ValidationError

from bot.actions.renewing import CHAT_RENEW


class Payload(Protocol):
    ACTION: ClassVar[str]


class NamesCard(Protocol):
    """A tapped button's payload that names a card: its number then, and its identity."""

    @property
    def number(self) -> int | None: ...

    @property
    def cid(self) -> str | None: ...


P = TypeVar("P", bound=Payload)


class ButtonId(str):
    """In a payload handed to `keyboards.callback_buttons`: the stored id of button number n of the
    same batch (a "no" button that must know its "yes"). `ButtonId.of(0)`."""

    __slots__ = ()

    @classmethod
    def of(cls, index: int) -> ButtonId:
        return cls(index)


@dataclass(frozen=True)
class CancelHold:
    """A hold in /holds ("cancel?"), and the "yes" that cancels it (`confirm`)."""

    ACTION: ClassVar[str] = "cancel"
    order_id: str
    order_type: str | None = None
    title: str = ""
    confirm: bool = False
    # The card the hold is on (absent in a button stored before cards: card 1).
    number: int = 1
    # The hold's pick-up branch (ISIL), so two holds of one title can be told apart.
    branch: str | None = None
    # The card's identity (`Card.card_id`), never reused like its number; absent in a button
    # stored before it: such a button acts on no card.
    cid: str | None = None


@dataclass(frozen=True)
class KeepHold:
    """The "no" beside a cancel's "yes" (`keep`: the "yes" button's stored id)."""

    ACTION: ClassVar[str] = "cancel"
    keep: str
    title: str = ""


@dataclass(frozen=True)
class PlaceOrder:
    """ "Yes" under an order's confirmation: places it, once."""

    ACTION: ClassVar[str] = "order"
    pid: str
    branch: str = ""
    title: str = ""
    number: int = 1  # stored before several cards: card 1
    cid: str | None = None  # the card's identity (see `CancelHold`)


@dataclass(frozen=True)
class AbortOrder:
    """ "No" under an order's confirmation (`abort`: the "yes" button's stored id)."""

    ACTION: ClassVar[str] = "order"
    abort: str


@dataclass(frozen=True)
class PickBranch:
    """A branch in the pick-up branch picker: saves it and asks about ordering `pid` there."""

    ACTION: ClassVar[str] = "branch"
    pid: str
    branch: str
    number: int = 1
    cid: str | None = None  # the card's identity (see `CancelHold`)


@dataclass(frozen=True)
class ChooseBranch:
    """ "Change pick-up branch" under an order's confirmation: the picker for `pid`."""

    ACTION: ClassVar[str] = "branch"
    pid: str
    title: str = ""
    number: int = 1
    cid: str | None = None  # the card's identity (see `CancelHold`)


@dataclass(frozen=True)
class OrderFound:
    """A search result's "Order": leads to the confirmation of `/order <pid>`."""

    ACTION: ClassVar[str] = "search"
    pid: str
    # The card to order with (/recommend's, made for one card); None: /order asks which.
    number: int | None = None
    cid: str | None = None  # the card's identity (see `CancelHold`)
    # With no card named: the identities of the chat's cards when it was shown. Once none of
    # them is left, the button orders nothing (another person's card may be here by then).
    cids: tuple[str, ...] = ()


@dataclass(frozen=True)
class WhereIs:
    """ "📍 Where is it?": where the material stands at the libraries of the chat's cards, or
    at `agency`, the library a patron without a card chose."""

    ACTION: ClassVar[str] = "where"
    pid: str
    agency: str | None = None


@dataclass(frozen=True)
class WatchShelf:
    """ "🔔 Tell me when it is on the shelf at <branch>": a watch for the card, title and
    branch (`storage.watches`); with `stop`, /watches' button that ends it."""

    ACTION: ClassVar[str] = "watch"
    pid: str
    branch: str  # its name, as `/v3/holdingsitems` names it
    agency: str
    title: str
    number: int
    cid: str | None = None  # the card's identity (see `CancelHold`)
    stop: bool = False


@dataclass(frozen=True)
class SearchWords:
    """Free text's "🔎 Search for »…«": the search, as `/search <words>` would run it. The
    words are sealed (`Store.seal`): a patron may type anything, a CPR number by mistake."""

    ACTION: ClassVar[str] = "find"
    s: str


@dataclass(frozen=True)
class RenewLoan:
    """One loan's renew button (/renew and reminder digests); `due` as the loan had it."""

    ACTION: ClassVar[str] = CHAT_RENEW
    loan_id: str
    title: str = ""
    due: str = ""
    number: int = 1  # the chat's card the loan is on
    cid: str | None = None  # the card's identity (see `CancelHold`)


@dataclass(frozen=True)
class RenewAll:
    """ "Renew all": the loans of the message it is under (None: every loan)."""

    ACTION: ClassVar[str] = "renewall"
    loans: tuple[str, ...] | None = None
    # The stored ids of the loan buttons of the message on every page (None: the keyboard's).
    buttons: tuple[str, ...] | None = None
    number: int = 1  # the chat's card the loans are on
    cid: str | None = None  # the card's identity (see `CancelHold`)


@dataclass(frozen=True)
class ListPage:
    """A long list paged through one edited message: /loans, /holds or /renew (`kind`).

    The page is in the callback data (`page:<stored id>:<n>`), so one row serves every page.
    `buttons` maps a loan to its renew button's stored id and `head` is the "renew all" button's,
    so every page of a /renew message shows the same single-use buttons.
    """

    ACTION: ClassVar[str] = "page"
    kind: str
    buttons: dict[str, str] | None = None
    head: str | None = None
    # With several cards: the card shown (None: every card), and the stored id of the view of
    # each card ("0": every card) for the row of buttons that switches between them.
    number: int | None = None
    views: dict[str, str] | None = None
    # A /renew of several cards: each card's "renew all" button's stored id (`buttons` is then
    # keyed "<card>:<loan id>").
    heads: dict[str, str] | None = None
    cid: str | None = None  # the shown card's identity (see `CancelHold`)


@dataclass(frozen=True)
class ReminderChoice:
    """/reminders: `op` "on", "off", "days" with the thresholds to use, "notice" with the
    notice to turn `on` (True) or off, or "hour" with the hour of the day they come."""

    ACTION: ClassVar[str] = "rem"
    op: str
    days: tuple[int, ...] | None = None
    notice: str | None = None
    on: bool | None = None
    hour: int | None = None


@dataclass(frozen=True)
class LanguageChoice:
    """/language: one of `bot.texts.LANGUAGES`, or "auto"."""

    ACTION: ClassVar[str] = "lang"
    lang: str


@dataclass(frozen=True)
class ForgetChoice:
    """/forget: delete everything (`confirm`), or keep it."""

    ACTION: ClassVar[str] = "forget"
    confirm: bool


@dataclass(frozen=True)
class OrderCard:
    """ "Which card?" of /order (or a search result's "Order") in a chat with several cards:
    goes on with `/order <pid> [branch]` for card `number`. `wanted`, the branch name as typed,
    is sealed (`Store.seal`) as a search's words are: it is whatever the patron wrote."""

    ACTION: ClassVar[str] = "ocard"
    pid: str
    number: int
    branch: str | None = None
    wanted: str | None = None
    cid: str | None = None  # the card's identity (see `CancelHold`)


@dataclass(frozen=True)
class LogoutCard:
    """/logout's "which card" and /cards' "🚪 Log out": logs out card `number`, or every card
    (None)."""

    ACTION: ClassVar[str] = "logout"
    number: int | None = None
    cid: str | None = None  # the card's identity (see `CancelHold`)
    # Every card (`number` None): the identities of the cards there were (no others go).
    cids: tuple[str, ...] | None = None


@dataclass(frozen=True)
class LogoutAsk:
    """/cards' "🚪 Log out": asks first (its "yes" is a `LogoutCard`), and the question's "no"
    (`keep`)."""

    ACTION: ClassVar[str] = "logoutask"
    number: int
    cid: str | None = None  # the card's identity (see `CancelHold`)
    keep: bool | None = None


@dataclass(frozen=True)
class RenameCard:
    """/cards' "✏️ Rename": asks for the card's new name."""

    ACTION: ClassVar[str] = "rename"
    number: int
    cid: str | None = None  # the card's identity (see `CancelHold`)


# A payload's field -> its key in the stored JSON object, where the two differ: a card's number
# is stored as "card", as every release before the field was named `number` stored it.
STORED_KEYS = {"number": "card"}
_FIELDS = {key: field for field, key in STORED_KEYS.items()}


def encode(payload: Payload) -> dict[str, Any]:
    """The JSON object stored for `payload` (fields left at None are left out)."""
    fields = asdict(payload)  # type: ignore[call-overload]
    return {STORED_KEYS.get(key, key): value for key, value in fields.items() if value is not None}


@cache
def _adapter(kind: type[Any]) -> TypeAdapter[Any]:
    return TypeAdapter(kind)


def decode(stored: dict[str, Any], *kinds: type[P]) -> P | None:
    """The first of `kinds` the stored payload is, else None (a button of no known shape)."""
    fields = {_FIELDS.get(key, key): value for key, value in stored.items()}
    for kind in kinds:
        try:
            found: P = _adapter(kind).validate_python(fields)
        except ValidationError:
            continue
        return found
    return None


@dataclass(frozen=True)
class RecommendFor:
    """/recommend with several cards: suggestions from this card's loans."""

    ACTION: ClassVar[str] = "recfor"
    number: int
    cid: str | None = None  # the card's identity (see `CancelHold`)


@dataclass(frozen=True)
class LibraryHours:
    """/events' and /news' "🕘 Opening hours": the coming week's hours of `agency`'s branches."""

    ACTION: ClassVar[str] = "hours"
    agency: str
