"""One async client for the access service (both login flows) and the data platform: the
endpoints. The wire is `transport` (sessions, metering, retry, at most once); reading the
answers and mapping failures is `decoding`.

Every failure surfaces as one of the errors in `bot.library.errors`; nothing from aiohttp,
pydantic or json leaks out. Error messages and this module's log lines name an endpoint,
never a URL, a query string or a token.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote, urlencode
from zoneinfo import ZoneInfo

from pydantic import BaseModel
from yarl import URL

from bot.config.proxies import Proxies
from bot.config.settings import LIBRARY_VARIABLES, Settings, SettingsError
from bot.library.decoding import (
    MAX_CODE_LENGTH,
    decode,
    envelope_data,
    parse_envelope,
    parse_list,
    parse_model,
)
from bot.library.decoding import error_for as _error_for
from bot.library.decoding import label as _label
from bot.library.decoding import malformed as _malformed
from bot.library.errors import (
    BadRequest,
    LibraryError,
    OrderRefused,
    ServiceUnavailable,
    TokenRejected,
)
from bot.library.models import (
    DEFAULT_TZ,
    Availability,
    BorrowerStatus,
    Branch,
    CancelResult,
    Event,
    Holdings,
    LibraryPage,
    NewsItem,
    OrderResult,
    Recommendation,
    RenewResult,
    SearchResult,
    Session,
    Ticket,
    TokenResponse,
    Userinfo,
    Work,
)
from bot.library.transport import CallHook, Transport

if TYPE_CHECKING:
    from types import TracebackType

__all__ = [
    "CallHook",
    "LibraryClient",
    "parse_envelope",
    "parse_model",
]

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

# Renew the anonymous token this long before the service says it expires.
PUBLIC_TOKEN_MARGIN = 60.0
# Lifetime assumed when a token response carries no `expires_in`.
DEFAULT_TOKEN_LIFETIME = 3600.0
# The platform's bump limit for /recommend and /search (spec section 8).
MAX_LIMIT = 50
# `pids` per `/v3/work` and `/v3/holdingsitems` call: the platform's spec (`maxItems: 20`).
MAX_WORK_PIDS = 20
# What the bot shows of a work. Without `fields` the platform leaves out every `cover*` field
# (doc/spec.yaml, `work`), and its `fieldsFilter` keeps only the keys named.
WORK_FIELDS = ("pid", "title", "creator", "date", "type", "coverUrlThumbnail", "coverUrl117")
# /v3/recommend's answer (a 500) when it knows none of the liked works (recorded in
# serviceprovider's `recommend_error_invalid_pid.auto.js`): there is nothing to suggest.
_NOTHING_TO_RECOMMEND = "could not find any works"


@dataclass(frozen=True)
class _CachedToken:
    token: str
    renew_at: float  # time.monotonic()


# A data-platform parameter: a string, a number, a boolean or a list of strings (doc/spec.yaml).
PlatformValue = str | int | bool | Sequence[str]


def platform_query(params: Mapping[str, PlatformValue]) -> dict[str, str]:
    """The query of a data-platform call: every value JSON-encoded.

    The platform runs `JSON.parse` on every query value (serviceprovider `src/provider.js`),
    then validates the types against its spec: JSON is the one encoding whose every value
    comes back as itself. An all-digit id stays a string (`"4940377131"`), a number a number,
    a list a list, and no text is split at its commas.
    """
    return {
        name: json.dumps(value if isinstance(value, str | int) else list(value), **_JSON)
        for name, value in params.items()
    }


_JSON: dict[str, Any] = {"ensure_ascii": False, "separators": (",", ":")}


def _twenties(pids: Sequence[str]) -> list[Sequence[str]]:
    """`pids` in calls of at most `MAX_WORK_PIDS`, as `/v3/work` and `/v3/holdingsitems` take."""
    return [pids[n : n + MAX_WORK_PIDS] for n in range(0, len(pids), MAX_WORK_PIDS)]


def _basic_auth(client_id: str, client_secret: str) -> str:
    """HTTP Basic credentials, as `httpx.BasicAuth` encodes them."""
    pair = f"{client_id}:{client_secret}".encode()
    return f"Basic {base64.b64encode(pair).decode('ascii')}"


class LibraryClient:
    """Typed calls to the library services over aiohttp's `ClientSession`.

    aiohttp's client costs about as little CPU per call as a hand-written HTTP/1.1 client
    (about 0.15 ms on loopback, where httpx's `AsyncClient` cost 0.9-1.7 ms); the reminder
    sweep makes one call per patron. Reads share keep-alive connections. A call that changes
    state (order, renew, cancel, the code exchange, revocation; every call made with
    `retry=False`) goes on a connection of its own, so it never meets a kept-alive connection
    the server is just closing, and no layer sends it twice: see `transport._never_resend`.

    `timeout` bounds each call as a whole, retry included, so the bot can answer within
    ten seconds. Reads are retried once on a connection error or time-out while time is left;
    nothing that changes state is retried. `proxies` (read once at start-up) applies per
    service host.
    """

    def __init__(
        self,
        *,
        oauth_url: str,
        auth_url: str,
        platform_url: str,
        client_id: str,
        client_secret: str,
        login_url: str | None = None,
        timezone: ZoneInfo = DEFAULT_TZ,
        timeout: float = 8.0,
        proxies: Proxies | None = None,
        on_call: CallHook | None = None,
    ) -> None:
        self.oauth_url = oauth_url.rstrip("/")
        self.auth_url = auth_url.rstrip("/")
        self.platform_url = platform_url.rstrip("/")
        self.login_url = login_url.rstrip("/") if login_url else None
        self.client_id = client_id
        self._client_secret = client_secret
        self.timezone = timezone
        self.timeout = timeout
        self.proxies = proxies or Proxies()
        self._transport = Transport(timeout=timeout, proxies=self.proxies, on_call=on_call)
        self._metered = self._transport.metered
        self._send = self._transport.send
        self._basic_auth = _basic_auth(client_id, client_secret)
        self._public: _CachedToken | None = None
        self._public_lock = asyncio.Lock()
        self._platform_urls: dict[str, URL] = {}

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> LibraryClient:
        """Build from `Settings` (proxies included); `kwargs` (e.g. `on_call`) pass through."""
        for name in LIBRARY_VARIABLES:
            if not getattr(settings, name):
                raise SettingsError(f"{name}: required to reach the library services, but not set")
        assert settings.OAUTH_URL and settings.AUTH_URL and settings.PLATFORM_URL
        assert settings.CLIENT_ID and settings.CLIENT_SECRET
        return cls(
            oauth_url=settings.OAUTH_URL,
            auth_url=settings.AUTH_URL,
            platform_url=settings.PLATFORM_URL,
            login_url=settings.LOGIN_URL,
            client_id=settings.CLIENT_ID,
            client_secret=settings.CLIENT_SECRET.get_secret_value(),
            timezone=settings.timezone,
            timeout=settings.LIBRARY_TIMEOUT,
            **{"proxies": settings.proxies, **kwargs},
        )

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def __aenter__(self) -> LibraryClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _platform(
        self,
        endpoint: str,
        path: str,
        access_token: str,
        params: Mapping[str, PlatformValue] | None = None,
        *,
        retry: bool,
    ) -> dict[str, Any]:
        # The token goes in the header (the platform takes either, not both): it stays out of
        # URLs, so out of access logs and proxies, and a call without parameters reuses one
        # parsed URL instead of validating a long query string every time.
        url = self._platform_urls.get(path)
        if url is None:
            url = self._platform_urls[path] = URL(f"{self.platform_url}{path}", encoded=True)
        response = await self._send(
            endpoint,
            "GET",
            url,
            params=platform_query(params) if params else None,
            authorization=f"Bearer {access_token}",
            retry=retry,
        )
        return decode(endpoint, response)

    def _model(self, model: type[M], data: object, endpoint: str) -> M:
        return parse_model(model, data, tz=self.timezone, endpoint=endpoint)

    def _require_login_url(self) -> str:
        if self.login_url is None:
            raise BadRequest("LOGIN_URL is not configured", code="not_configured")
        return self.login_url

    # --- code flow --------------------------------------------------------------------------

    def authorize_url(self, *, redirect_uri: str, state: str, force_login: bool = False) -> str:
        """Where to send the patron to log in; the service redirects back with a code.

        `force_login` asks for the card number and pin again instead of offering "continue
        as ..." from the single sign-on session (after a logout, on a shared device).
        """
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": redirect_uri,
            "state": state,
        }
        if force_login:
            params["force_login"] = "1"
        return f"{self.oauth_url}/oauth/authorize?{urlencode(params)}"

    def logout_url(self, *, redirect_uri: str) -> str:
        """The access service's logout, which ends its single sign-on session in the browser.

        No `access_token`: the service finds the session by its cookie and checks
        `redirect_uri` against the clients of that session, so no token goes into a URL.
        """
        return f"{self.oauth_url}/logout?{urlencode({'redirect_uri': redirect_uri})}"

    async def exchange_code(self, code: str, *, redirect_uri: str) -> TokenResponse:
        with self._metered("exchange_code"):
            response = await self._send(
                "exchange_code",
                "POST",
                f"{self.oauth_url}/oauth/token",
                data={
                    "grant_type": "authorization_code",
                    "code": code,
                    "client_id": self.client_id,
                    "client_secret": self._client_secret,
                    "redirect_uri": redirect_uri,
                },
            )
            return self._model(TokenResponse, decode("exchange_code", response), "exchange_code")

    async def userinfo(self, access_token: str) -> Userinfo:
        """`uniqueId` and `municipality` of the patron; any other attribute is dropped."""
        with self._metered("userinfo"):
            response = await self._send(
                "userinfo",
                "GET",
                f"{self.oauth_url}/userinfo",
                authorization=f"Bearer {access_token}",
                retry=True,
            )
            body = decode("userinfo", response)
            attributes = body.get("attributes", body if "uniqueId" in body else None)
            if not isinstance(attributes, dict):
                raise _malformed("userinfo", "no attributes")
            status = attributes.get("serviceStatus")
            register = status.get("culr") if isinstance(status, dict) else None
            if not attributes.get("uniqueId") and register == "error":
                # The national user register failed: who logged in is not known now, and a
                # card added without it could never be matched to the person again.
                raise ServiceUnavailable(
                    "access service: userinfo without uniqueId (the user register failed)",
                    code="register_failed",
                )
            # Only the two the bot keeps are even looked at; the rest of the body (which may
            # hold civil registration numbers) is dropped with this call's locals.
            return self._model(
                Userinfo,
                {
                    "uniqueId": attributes.get("uniqueId"),
                    "municipality": attributes.get("municipality"),
                },
                "userinfo",
            )

    async def revoke(self, access_token: str) -> bool:
        """Best effort: True when the service confirmed, False on any failure (never raises)."""
        try:
            with self._metered("revoke"):
                response = await self._send(
                    "revoke",
                    "DELETE",
                    f"{self.oauth_url}/oauth/revoke",
                    params={"access_token": access_token},
                )
                if not response.is_success:
                    raise _error_for("revoke", response.status_code, None)
                return True
        except LibraryError as exc:
            log.info("token revocation failed: %s", exc)
            return False

    # --- earlier flow -----------------------------------------------------------------------

    async def password_grant(self) -> TokenResponse:
        """An anonymous token (good for public data-platform calls, not for `/v3/user`)."""
        with self._metered("password_grant"):
            response = await self._send(
                "password_grant",
                "POST",
                f"{self.auth_url}/oauth/token",
                data={"grant_type": "password", "username": "@", "password": "@"},
                authorization=self._basic_auth,
            )
            return self._model(TokenResponse, decode("password_grant", response), "password_grant")

    async def public_token(self) -> str:
        """The cached anonymous token; concurrent callers share one request to renew it."""
        cached = self._public
        if cached is not None and time.monotonic() < cached.renew_at:
            return cached.token
        async with self._public_lock:
            cached = self._public
            if cached is not None and time.monotonic() < cached.renew_at:
                return cached.token
            grant = await self.password_grant()
            lifetime = float(grant.expires_in or DEFAULT_TOKEN_LIFETIME)
            renew_in = max(lifetime - PUBLIC_TOKEN_MARGIN, lifetime / 2)
            self._public = _CachedToken(grant.access_token, time.monotonic() + renew_in)
            return grant.access_token

    def _forget_public_token(self, token: str) -> None:
        if self._public is not None and self._public.token == token:
            self._public = None

    async def _with_public_token(self, call: Callable[[str], Awaitable[T]]) -> T:
        """Run a public call; if the service rejects the cached token, retry once with a new one."""
        token = await self.public_token()
        try:
            return await call(token)
        except TokenRejected:
            self._forget_public_token(token)
            return await call(await self.public_token())

    def login_page_url(self, access_token: str, *, return_url: str | None = None) -> str:
        """Earlier flow: the access service's page where the patron logs in.

        It is a page for the browser, not an API (production-notes): afterwards the browser
        comes back to `return_url` with the session `token` and `id` (`session_from_return`).
        """
        params = {"token": access_token}
        if return_url is not None:
            params["returnurl"] = return_url
        return f"{self._require_login_url()}/login?{urlencode(params)}"

    def session_from_return(self, query: Mapping[str, str]) -> Session:
        """The session the login page sent back in the return URL's query; BadRequest if the
        patron cancelled (`error`) or the query is not a session."""
        if query.get("error"):
            raise BadRequest("the login was cancelled", code=str(query["error"])[:MAX_CODE_LENGTH])
        try:
            return Session.model_validate({"token": query["token"], "id": query["id"]})
        except Exception:  # KeyError, ValidationError
            raise BadRequest("no session in the return URL", code="invalid_request") from None

    async def get_ticket(self, session: Session) -> Ticket:
        login_url = self._require_login_url()
        with self._metered("get_ticket"):
            path = f"/getTicket/{quote(session.token, safe='')}/{quote(session.id, safe='')}"
            response = await self._send("get_ticket", "GET", f"{login_url}{path}", retry=True)
            body = decode("get_ticket", response)
            data = body["data"] if isinstance(body.get("data"), dict) else body
            if data.get("attributes") in (None, False):
                # A ticket is read once: a second read (null) or an unknown one (false) has no
                # attributes, and is not a patron.
                raise BadRequest("the ticket was used or is unknown", code="invalid_ticket")
            return self._model(Ticket, data, "get_ticket")

    # --- data platform ----------------------------------------------------------------------

    async def user(self, access_token: str) -> BorrowerStatus:
        with self._metered("user"):
            body = await self._platform("user", "/v3/user", access_token, retry=True)
            return self._model(BorrowerStatus, envelope_data(body, "user"), "user")

    async def order(self, access_token: str, pids: list[str], pick_up_branch: str) -> OrderResult:
        """Place a hold; `pick_up_branch` in ISIL form (`DK-` + digits). Never retried."""
        with self._metered("order"):
            params = {"pids": pids, "pickUpBranch": pick_up_branch}
            body = await self._platform("order", "/v3/order", access_token, params, retry=False)
            result = self._model(OrderResult, envelope_data(body, "order"), "order")
            if not result.ok:
                # Success is `status` "ok" only; anything else is the order system saying no.
                code = result.status.strip()[:MAX_CODE_LENGTH] or "order not placed"
                raise OrderRefused(
                    f"{_label('order')} answered status {code!r}", code=code, status=200
                )
            return result

    async def cancel_order(
        self, access_token: str, order_id: str, order_type: str = "normal"
    ) -> CancelResult:
        with self._metered("cancel_order"):
            params: dict[str, PlatformValue] = {
                "orderId": order_id,
                "orderType": order_type,
                "delete": True,
            }
            body = await self._platform(
                "cancel_order", "/v3/order", access_token, params, retry=False
            )
            return self._model(CancelResult, envelope_data(body, "cancel_order"), "cancel_order")

    async def renew(self, access_token: str, loan_id: str) -> RenewResult:
        with self._metered("renew"):
            body = await self._platform(
                "renew", "/v3/renew", access_token, {"loanId": loan_id}, retry=False
            )
            return self._model(RenewResult, envelope_data(body, "renew"), "renew")

    async def work(self, access_token: str, pids: Sequence[str]) -> list[Work]:
        """The works of `pids`, with their covers: one call per 20 pids, made at once."""
        found = await asyncio.gather(*(self._work(access_token, c) for c in _twenties(pids)))
        return [work for works in found for work in works]

    async def _work(self, access_token: str, pids: Sequence[str]) -> list[Work]:
        with self._metered("work"):
            params = {"pids": pids, "fields": WORK_FIELDS}
            body = await self._platform("work", "/v3/work", access_token, params, retry=True)
            return parse_list(Work, envelope_data(body, "work"), tz=self.timezone, endpoint="work")

    async def holdings(self, access_token: str, agency: str, pids: Sequence[str]) -> list[Holdings]:
        """The copies of `pids` at the branches of library `agency` (`710100` or ISIL), 20
        pids a call as the platform's spec allows, made at once."""
        found = await asyncio.gather(
            *(self._holdings(access_token, agency, c) for c in _twenties(pids))
        )
        return [holding for part in found for holding in part]

    async def _holdings(
        self, access_token: str, agency: str, pids: Sequence[str]
    ) -> list[Holdings]:
        with self._metered("holdings"):
            params: dict[str, PlatformValue] = {"agency": agency, "pids": pids}
            body = await self._platform(
                "holdings", "/v3/holdingsitems", access_token, params, retry=True
            )
            data = envelope_data(body, "holdings")
            return parse_list(Holdings, data, tz=self.timezone, endpoint="holdings")

    async def availability(self, access_token: str, pids: Sequence[str]) -> list[Availability]:
        """For the patron of `access_token`, per pid in order: may it be ordered, and when
        would it be ready (the order system's reasons)."""
        with self._metered("availability"):
            body = await self._platform(
                "availability", "/v3/availability", access_token, {"pids": pids}, retry=True
            )
            data = envelope_data(body, "availability")
            return parse_list(Availability, data, tz=self.timezone, endpoint="availability")

    async def search(
        self, access_token: str, query: str, *, limit: int = 10, offset: int = 0
    ) -> SearchResult:
        """Search with a CQL `query`; `limit` is capped at the platform's 50."""
        with self._metered("search"):
            params: dict[str, PlatformValue] = {
                "q": query,
                "limit": max(1, min(limit, MAX_LIMIT)),
                "offset": max(0, offset),
                "fields": WORK_FIELDS,
            }
            body = await self._platform("search", "/v3/search", access_token, params, retry=True)
            works = parse_list(
                Work, envelope_data(body, "search"), tz=self.timezone, endpoint="search"
            )
            hits = body.get("hitCount", len(works))
            return self._model(SearchResult, {"hitCount": hits, "works": works}, "search")

    async def libraries(
        self,
        access_token: str,
        *,
        agency_ids: Sequence[str] = (),
        branch_ids: Sequence[str] = (),
    ) -> list[Branch]:
        """The branches of the libraries `agency_ids`, or the branches `branch_ids` (ids or
        ISIL); never every library, which is what the platform answers to neither (and what
        `every_library` asks for, on purpose)."""
        if not agency_ids and not branch_ids:
            return []
        return await self._libraries(access_token, agency_ids, branch_ids)

    async def every_library(self, access_token: str) -> list[Branch]:
        """Every branch of every library: `/v3/libraries` with neither filter (libraries.js)."""
        return await self._libraries(access_token, (), ())

    async def _libraries(
        self, access_token: str, agency_ids: Sequence[str], branch_ids: Sequence[str]
    ) -> list[Branch]:
        with self._metered("libraries"):
            params: dict[str, PlatformValue] = {}
            if agency_ids:
                params["agencyIds"] = agency_ids
            if branch_ids:
                params["branchIds"] = branch_ids
            body = await self._platform(
                "libraries", "/v3/libraries", access_token, params, retry=True
            )
            data = envelope_data(body, "libraries")
            return parse_list(Branch, data, tz=self.timezone, endpoint="libraries")

    async def events(
        self, access_token: str, agency: str | None = None, *, limit: int = 10
    ) -> list[Event]:
        """The library's events as its site lists them (the platform does not sort or filter).

        `agency` (`710100` or ISIL `DK-710100`) is one string: the platform's spec types it so,
        whatever the interface spec's 9.6 says, and a list is a 400. Without it the platform
        uses the library of the token's patron.
        """
        return await self._cms("events", "/v3/events", Event, access_token, agency, limit)

    async def library(
        self, access_token: str, agency: str | None = None, *, limit: int = 50
    ) -> list[LibraryPage]:
        """The library's branch pages with their dated opening hours (see `events`)."""
        return await self._cms("library", "/v3/library", LibraryPage, access_token, agency, limit)

    async def news(
        self, access_token: str, agency: str | None = None, *, limit: int = 10
    ) -> list[NewsItem]:
        """The library's news items (see `events`)."""
        return await self._cms("news", "/v3/news", NewsItem, access_token, agency, limit)

    async def _cms(
        self,
        endpoint: str,
        path: str,
        model: type[M],
        access_token: str,
        agency: str | None,
        limit: int,
    ) -> list[M]:
        with self._metered(endpoint):
            params: dict[str, PlatformValue] = {"limit": max(1, limit)}
            if agency:
                params["agency"] = agency
            body = await self._platform(endpoint, path, access_token, params, retry=True)
            data = envelope_data(body, endpoint)
            if isinstance(data, list):
                data = [item for item in data if item is not None]  # `null` for an unknown nid
            return parse_list(model, data, tz=self.timezone, endpoint=endpoint)

    async def recommend(
        self,
        access_token: str,
        like: list[str],
        *,
        ignore: list[str] | None = None,
        limit: int = 10,
    ) -> list[Recommendation]:
        """Works like the `like` pids, best first; `limit` is capped at the platform's 50.

        A like the recommender does not know is an answer, not a failure: no suggestions.
        """
        with self._metered("recommend"):
            params: dict[str, PlatformValue] = {
                "like": like,
                "limit": max(1, min(limit, MAX_LIMIT)),
            }
            if ignore:
                params["ignore"] = ignore
            try:
                body = await self._platform(
                    "recommend", "/v3/recommend", access_token, params, retry=True
                )
            except ServiceUnavailable as exc:
                if exc.status == 500 and _NOTHING_TO_RECOMMEND in (exc.code or "").lower():
                    return []
                raise
            data = envelope_data(body, "recommend")
            return parse_list(Recommendation, data, tz=self.timezone, endpoint="recommend")

    # --- public data with the cached anonymous token ----------------------------------------

    async def search_public(self, query: str, *, limit: int = 10, offset: int = 0) -> SearchResult:
        return await self._with_public_token(
            lambda token: self.search(token, query, limit=limit, offset=offset)
        )

    async def holdings_public(self, agency: str, pids: Sequence[str]) -> list[Holdings]:
        return await self._with_public_token(lambda token: self.holdings(token, agency, pids))

    async def work_public(self, pids: Sequence[str]) -> list[Work]:
        return await self._with_public_token(lambda token: self.work(token, pids))

    async def library_public(self, agency: str) -> list[LibraryPage]:
        return await self._with_public_token(lambda token: self.library(token, agency))

    async def libraries_public(
        self, *, agency_ids: Sequence[str] = (), branch_ids: Sequence[str] = ()
    ) -> list[Branch]:
        return await self._with_public_token(
            lambda token: self.libraries(token, agency_ids=agency_ids, branch_ids=branch_ids)
        )

    async def every_library_public(self) -> list[Branch]:
        return await self._with_public_token(self.every_library)
