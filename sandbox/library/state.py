"""The sandbox's in-memory state: patrons, tokens, codes, sessions, and the clock."""

from __future__ import annotations

import ipaddress
import random
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from sandbox.library.data import FAMILY_FIRST_ID, PatronFactory, PatronRecord
from sandbox.library.shelf import Shelves

TOKEN_LIFETIME = 2_592_000  # thirty days, as production
CODE_LIFETIME = 300.0
# What userinfo releases to a client unless its configuration names more (hejmdal's default).
DEFAULT_USERINFO_ATTRIBUTES = ("uniqueId", "municipality")


@dataclass
class TokenRecord:
    user_id: str | None  # None: an anonymous token of the earlier flow
    client_id: str
    expires_at: float
    sso: str | None = None  # the single sign-on session the token came from


@dataclass
class CodeRecord:
    user_id: str
    client_id: str
    redirect_uri: str
    expires_at: float
    sso: str | None


@dataclass
class SessionRecord:
    """A ticket of the earlier flow; it can be read once (`attributes` are gone afterwards)."""

    token: str
    user_id: str
    fetched: bool = False


@dataclass
class PendingOrder:
    """A placed order on its way to the library system: shown in /v3/user from `visible_at`."""

    user_id: str
    visible_at: float
    order: dict[str, object] = field(default_factory=dict)


class SandboxState:
    """Shared by the four services; single-threaded (one event loop), so no locks."""

    def __init__(
        self,
        *,
        client_id: str,
        client_secret: str,
        redirect_uris: Sequence[str] | None,
        today: date,
        tz: ZoneInfo,
        clock: Callable[[], float],
        seed: int,
        release_cpr: bool,
        userinfo_attributes: Sequence[str] = DEFAULT_USERINFO_ATTRIBUTES,
        order_delay: float = 0.0,
    ) -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        self.redirect_uris = None if redirect_uris is None else tuple(redirect_uris)
        self.today = today
        self.tz = tz
        self.clock = clock
        self.random = random.Random(seed)
        self.release_cpr = release_cpr
        # The client's configured attributes (hejmdal's per-client `attributes`), and extra
        # ones sent as given: a test hook for attributes nobody has configured yet.
        self.userinfo_attributes = tuple(userinfo_attributes)
        self.userinfo_extra: dict[str, Any] = {}
        self.revoked: set[str] = set()  # tokens revoked through DELETE /oauth/revoke
        self.order_delay = order_delay
        # Branches that take no pick-ups (`pickupAllowed` false, as some service points).
        self.no_pickup: set[str] = set()
        self.shelves = Shelves()  # the copies' statuses (`/v3/holdingsitems`)
        self.pending_orders: list[PendingOrder] = []
        self.factory = PatronFactory(today, tz)
        self.records: dict[str, PatronRecord] = {}
        self.test_patrons = [
            *self.factory.test_patrons(),
            *PatronFactory(today, tz, first_id=FAMILY_FIRST_ID).family(),
        ]
        for record in self.test_patrons:
            self.records[record.patron.user_id] = record
        self.synthetic_count = 0
        self.tokens: dict[str, TokenRecord] = {}
        self.codes: dict[str, CodeRecord] = {}
        self.sessions: dict[int, SessionRecord] = {}
        self.sso_sessions: dict[str, str] = {}  # cookie value -> user id
        self.sso_providers: dict[str, str] = {}  # cookie value -> identity provider used
        self._next_session = 5_000 + self.random.randrange(1000)
        self._next_order = 90_000_000 + self.random.randrange(1_000_000)

    # --- patrons ---------------------------------------------------------------------------

    def record(self, user_id: str) -> PatronRecord:
        return self.records[user_id]

    def check_login(self, user_id: str, pin: str, agency: str) -> PatronRecord | None:
        record = self.records.get(user_id.strip())
        if record is None or not secrets.compare_digest(record.patron.pin, pin.strip()):
            return None
        if agency and agency not in record.agencies:
            return None
        return record

    # --- tokens ----------------------------------------------------------------------------

    def new_token(
        self, user_id: str | None, *, expires_in: int = TOKEN_LIFETIME, sso: str | None = None
    ) -> str:
        token = secrets.token_hex(20)
        self.tokens[token] = TokenRecord(
            user_id, self.client_id, self.clock() + expires_in, sso=sso
        )
        return token

    def token(self, token: str) -> TokenRecord | None:
        """The live record of `token`, or None when unknown, revoked or expired."""
        found = self.tokens.get(token)
        if found is None or found.expires_at <= self.clock():
            return None
        return found

    def new_code(self, user_id: str, redirect_uri: str, sso: str | None) -> str:
        code = secrets.token_urlsafe(24)
        self.codes[code] = CodeRecord(
            user_id, self.client_id, redirect_uri, self.clock() + CODE_LIFETIME, sso
        )
        return code

    def new_session(self, token: str, user_id: str) -> tuple[str, int]:
        self._next_session += 1
        session_token = secrets.token_hex(16)
        self.sessions[self._next_session] = SessionRecord(session_token, user_id)
        return session_token, self._next_session

    def place_order(self, user_id: str, order: dict[str, object]) -> None:
        """Orders are asynchronous: with a delay, the order shows up in /v3/user only later."""
        if self.order_delay <= 0:
            self.record(user_id).data.orders.append(order)
            return
        self.pending_orders.append(PendingOrder(user_id, self.clock() + self.order_delay, order))

    def arrived_orders(self) -> None:
        """Move the orders whose time has come into their patrons' status."""
        now = self.clock()
        waiting = []
        for pending in self.pending_orders:
            if pending.visible_at <= now:
                self.record(pending.user_id).data.orders.append(pending.order)
            else:
                waiting.append(pending)
        self.pending_orders = waiting

    def new_order_id(self) -> str:
        self._next_order += 1 + self.random.randrange(7)
        return str(self._next_order)

    # --- clients ---------------------------------------------------------------------------

    def client_ok(self, client_id: str, client_secret: str) -> bool:
        return secrets.compare_digest(client_id, self.client_id) and secrets.compare_digest(
            client_secret, self.client_secret
        )

    def redirect_ok(self, redirect_uri: str) -> bool:
        if self.redirect_uris is not None:
            return redirect_uri in self.redirect_uris
        return loopback_url(redirect_uri)


def loopback_url(url: str) -> bool:
    """An http(s) URL on a loopback host or a `*.localhost` / `*.test` name, with no fragment."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or parts.fragment or not parts.hostname:
        return False
    host = parts.hostname.lower().rstrip(".")
    if host == "localhost" or host.endswith((".localhost", ".test")):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
