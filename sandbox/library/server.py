"""`LibrarySandbox`: the four services on loopback, and the hooks tests drive them with.

What each service answers is in `oauth`, `earlier` and `platform`; which path goes where, with
faults applied, in `apps`; the endpoints another process drives the sandbox through in `control`.
"""

from __future__ import annotations

import collections
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from aiohttp import web
from aiohttp.typedefs import Middleware

from sandbox.library.apps import ServiceApps
from sandbox.library.cms import Content
from sandbox.library.data import PatronData, TestPatron
from sandbox.library.faults import SERVICES, Faults
from sandbox.library.shelf import Shelves
from sandbox.library.state import (
    DEFAULT_USERINFO_ATTRIBUTES,
    TOKEN_LIFETIME,
    SandboxState,
)
from sandbox.serving import Served, base_url, serve


@dataclass(frozen=True)
class SandboxUrls:
    """Base addresses of the four services, without a trailing slash."""

    oauth: str
    auth: str
    login: str
    platform: str


class LibrarySandbox(Served):
    """Stand-ins for the access service and the data platform, with test patrons."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        single_port: bool = False,
        client_id: str = "library-bot-sandbox",
        client_secret: str | None = None,
        redirect_uris: Sequence[str] | None = None,
        today: date | None = None,
        timezone: str = "Europe/Copenhagen",
        clock: Callable[[], float] = time.time,
        seed: int = 0,
        release_cpr: bool = False,
        userinfo_attributes: Sequence[str] = DEFAULT_USERINFO_ATTRIBUTES,
        order_delay: float = 0.0,
    ) -> None:
        """`order_delay`: seconds before a placed order shows up in /v3/user (0: at once)."""
        tz = ZoneInfo(timezone)
        self.host = host
        self.port = port
        self.single_port = single_port
        self.client_id = client_id
        self.client_secret = client_secret or secrets.token_urlsafe(24)
        self.faults = Faults()
        self.calls: collections.Counter[str] = collections.Counter()
        self._state = SandboxState(
            client_id=self.client_id,
            client_secret=self.client_secret,
            redirect_uris=redirect_uris,
            today=today or datetime.now(tz).date(),
            tz=tz,
            clock=clock,
            seed=seed,
            release_cpr=release_cpr,
            userinfo_attributes=userinfo_attributes,
            order_delay=order_delay,
        )
        self.patrons: list[TestPatron] = [r.patron for r in self._state.test_patrons]
        # aiohttp middlewares for every service, for benchmarks that time requests inside
        self.middlewares: list[Middleware] = []
        self._apps = ServiceApps(self._state, lambda: self.faults, self.calls, self.middlewares)
        self._runners: list[web.AppRunner] = []
        self._urls: SandboxUrls | None = None

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def urls(self) -> SandboxUrls:
        if self._urls is None:
            raise RuntimeError("the sandbox is not started")
        return self._urls

    @property
    def today(self) -> date:
        return self._state.today

    async def start(self) -> None:
        if self._runners:
            raise RuntimeError("the sandbox is already started")
        try:
            if self.single_port:
                url = await self._serve(self._apps.single_app(), self.port)
                self._urls = SandboxUrls(url, url, url, url)
            else:
                urls = [
                    await self._serve(
                        self._apps.service_app(name), self.port + i if self.port else 0
                    )
                    for i, name in enumerate(SERVICES)
                ]
                self._urls = SandboxUrls(*urls)
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        runners, self._runners = self._runners, []
        for runner in runners:
            await runner.cleanup()
        self._urls = None

    async def _serve(self, app: web.Application, port: int) -> str:
        runner, bound = await serve(app, self.host, port)
        self._runners.append(runner)
        return base_url(self.host, bound)

    # --- test hooks ------------------------------------------------------------------------

    def env(self) -> dict[str, str]:
        """The environment that points a bot at this sandbox."""
        urls = self.urls
        return {
            "OAUTH_URL": urls.oauth,
            "AUTH_URL": urls.auth,
            "LOGIN_URL": urls.login,
            "PLATFORM_URL": urls.platform,
            "CLIENT_ID": self.client_id,
            "CLIENT_SECRET": self.client_secret,
        }

    def issue_token(self, user_id: str, *, expires_in: int = TOKEN_LIFETIME) -> str:
        """A patron's code-flow token without the browser (KeyError for an unknown patron)."""
        self._state.record(user_id)
        return self._state.new_token(user_id, expires_in=expires_in)

    @property
    def userinfo_attributes(self) -> tuple[str, ...]:
        """The attributes userinfo releases to the client (hejmdal's names)."""
        return self._state.userinfo_attributes

    @userinfo_attributes.setter
    def userinfo_attributes(self, names: Sequence[str]) -> None:
        self._state.userinfo_attributes = tuple(names)

    @property
    def userinfo_extra(self) -> dict[str, Any]:
        """Attributes added to every userinfo answer as given (odd names, nested values)."""
        return self._state.userinfo_extra

    def token_is_live(self, token: str) -> bool:
        return self._state.token(token) is not None

    def live_tokens(self, user_id: str) -> list[str]:
        """The patron's tokens that work now (neither revoked nor expired)."""
        return [
            token
            for token, record in self._state.tokens.items()
            if record.user_id == user_id and self._state.token(token) is not None
        ]

    def was_revoked(self, token: str) -> bool:
        """True once `DELETE /oauth/revoke` revoked `token`."""
        return token in self._state.revoked

    def expire_token(self, token: str) -> None:
        found = self._state.tokens.get(token)
        if found is not None:
            found.expires_at = min(found.expires_at, self._state.clock() - 1)

    def expire_all_tokens(self) -> None:
        for token in list(self._state.tokens):
            self.expire_token(token)

    @property
    def content(self) -> Content:
        """The libraries' site content (events, news, pages) the platform passes through."""
        return self._apps.platform.content

    def patron_data(self, user_id: str) -> PatronData:
        return self._state.record(user_id).data

    @property
    def no_pickup(self) -> set[str]:
        """Branch ids `/v3/libraries` lists with `pickupAllowed` false (a test hook)."""
        return self._state.no_pickup

    @property
    def order_delay(self) -> float:
        return self._state.order_delay

    @order_delay.setter
    def order_delay(self, seconds: float) -> None:
        self._state.order_delay = seconds

    @property
    def shelves(self) -> Shelves:
        """The copies on the test libraries' shelves (`put_back`, `lend`, `return_lent`)."""
        return self._state.shelves

    def refuse_patron(self, user_id: str, refused: bool = True) -> None:
        """The library system stops accepting the patron: /v3/user answers 500
        `User authentication failed` (KeyError for an unknown patron)."""
        self._state.record(user_id).data.refused_by_library = refused

    def open_ticket(self, user_id: str) -> tuple[str, int]:
        """A patron's earlier-flow ticket without the browser: its session token and id."""
        self._state.record(user_id)
        token, ticket_id = self._state.new_session("", user_id)
        return token, ticket_id

    def add_patrons(
        self, count: int, *, due_every: int = 10, mix: Sequence[str] | None = None
    ) -> list[TestPatron]:
        """Synthetic patrons `2000000001`, ... with pin 1234; not listed in `patrons`.

        `mix`: the kinds (`data.MIX_KINDS`) of the patrons added, in turn (the i-th added is
        `mix[i % len(mix)]`), instead of a loan due soon for every `due_every`-th."""
        if mix is not None and not mix:
            raise ValueError("mix names no kind")
        added: list[TestPatron] = []
        state = self._state
        for index in range(count):
            state.synthetic_count += 1
            number = state.synthetic_count
            record = (
                state.factory.synthetic_of(number, mix[index % len(mix)])
                if mix is not None
                else state.factory.synthetic(
                    number, due_soon=due_every > 0 and number % due_every == 0
                )
            )
            state.records[record.patron.user_id] = record
            added.append(record.patron)
        return added
