"""One async client for the access service (both login flows) and the data platform.

Every failure surfaces as one of the errors in `bot.library.errors`; nothing from aiohttp,
pydantic or json leaks out. Error messages and this module's log lines name an endpoint,
never a URL, a query string or a token.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote, urlencode
from zoneinfo import ZoneInfo

import aiohttp
from pydantic import BaseModel
from yarl import URL

from bot.config.proxies import Proxies, tls_context
from bot.config.settings import LIBRARY_VARIABLES, Settings, SettingsError
from bot.library.errors import (
    BadRequest,
    LibraryError,
    NotLoggedIn,
    OrderRefused,
    Refused,
    ServiceUnavailable,
    TokenRejected,
)
from bot.library.models import (
    DEFAULT_TZ,
    BorrowerStatus,
    Branch,
    CancelResult,
    Event,
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

CallHook = Callable[[str, str, float], None]
"""`on_call(endpoint, outcome, seconds)`: outcome is "ok" or the raised error's `kind`."""

CONNECT_TIMEOUT = 3.0
# A retry is only worth starting with this much of the call's deadline left.
MIN_RETRY_BUDGET = 0.5
# Renew the anonymous token this long before the service says it expires.
PUBLIC_TOKEN_MARGIN = 60.0
# Lifetime assumed when a token response carries no `expires_in`.
DEFAULT_TOKEN_LIFETIME = 3600.0
MAX_CODE_LENGTH = 100
# The platform's bump limit for /work and /recommend (spec section 8).
MAX_LIMIT = 50
# /v3/recommend's answer (a 500) when it knows none of the liked works (recorded in
# serviceprovider's `recommend_error_invalid_pid.auto.js`): there is nothing to suggest.
_NOTHING_TO_RECOMMEND = "could not find any works"

# Endpoint name -> how it is named in messages (never a URL: getTicket's path holds a token).
LABELS: Mapping[str, str] = MappingProxyType(
    {
        "exchange_code": "access service /oauth/token",
        "userinfo": "access service /userinfo",
        "revoke": "access service /oauth/revoke",
        "password_grant": "access service (earlier flow) /oauth/token",
        "login_session": "login service /login",
        "get_ticket": "login service /getTicket",
        "user": "data platform /v3/user",
        "order": "data platform /v3/order",
        "cancel_order": "data platform /v3/order (cancel)",
        "renew": "data platform /v3/renew",
        "work": "data platform /v3/work",
        "search": "data platform /v3/search",
        "libraries": "data platform /v3/libraries",
        "events": "data platform /v3/events",
        "news": "data platform /v3/news",
        "recommend": "data platform /v3/recommend",
    }
)
_TOKEN_ENDPOINTS = frozenset({"exchange_code", "password_grant"})
_REFUSABLE = frozenset({"renew", "cancel_order"})
# 5xx codes that say the server failed, not that the order system or the library said no.
_SERVER_FAILURES = frozenset(
    {"internal server error", "server_error", "bad gateway", "gateway timeout", "internal_error"}
)
# Failures on the wire after which a read may be sent again: the connection broke, timed out,
# or carried something that is not HTTP.
_RETRYABLE_ERRORS = (
    aiohttp.ClientConnectionError,
    aiohttp.ClientPayloadError,
    aiohttp.ClientResponseError,
)
_HEADERS = MappingProxyType({"Accept": "application/json", "User-Agent": "library-bot"})
CONNECTION_LIMIT = 100
KEEPALIVE = 30.0


@dataclass(frozen=True, slots=True)
class _Response:
    """A response read whole: all the parsing below needs."""

    status_code: int
    content: bytes

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300


class ConnectionDropped(aiohttp.ClientConnectionError):
    """The server closed or reset the connection after the request was (maybe) sent."""


async def _never_resend(
    request: aiohttp.ClientRequest, handler: aiohttp.ClientHandlerType
) -> aiohttp.ClientResponse:
    """Keep aiohttp from sending a request a second time by itself.

    `ClientSession` re-sends a GET, PUT or DELETE once when the connection drops (aiohttp
    3.10+, `IDEMPOTENT_METHODS` in `aiohttp/client.py`), on a fresh connection as on a reused
    one. The data platform orders, renews and cancels with GETs, so that retry could place an
    order twice. It retries only `ServerDisconnectedError` and `ClientOSError`; raised as
    another `ClientConnectionError`, the drop goes straight to the caller, and
    `LibraryClient._send` alone decides what may be repeated (reads, once).
    """
    try:
        return await handler(request)
    except aiohttp.ClientConnectorError:
        raise  # nothing was sent; aiohttp does not retry these either
    except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
        raise ConnectionDropped(type(exc).__name__) from None


@dataclass
class _Sessions:
    """The client's aiohttp sessions, bound to the event loop they were made in."""

    loop: asyncio.AbstractEventLoop
    pooled: aiohttp.ClientSession  # keep-alive connections, for reads
    fresh: aiohttp.ClientSession | None = None  # a new connection per request, for changes

    async def close(self) -> None:
        await self.pooled.close()
        if self.fresh is not None:
            await self.fresh.close()


@dataclass(frozen=True)
class _CachedToken:
    token: str
    renew_at: float  # time.monotonic()


def _basic_auth(client_id: str, client_secret: str) -> str:
    """HTTP Basic credentials, as `httpx.BasicAuth` encodes them."""
    pair = f"{client_id}:{client_secret}".encode()
    return f"Basic {base64.b64encode(pair).decode('ascii')}"


def _label(endpoint: str) -> str:
    return LABELS.get(endpoint, endpoint)


def _malformed(endpoint: str, why: str) -> ServiceUnavailable:
    log.warning("malformed response from %s (%s)", _label(endpoint), why)
    return ServiceUnavailable(f"malformed response from {_label(endpoint)}", code="malformed")


def parse_model(model: type[M], data: object, *, tz: ZoneInfo, endpoint: str) -> M:
    """Validate `data` as `model` with dates in `tz`; any failure is `ServiceUnavailable`."""
    try:
        return model.model_validate(data, context={"tz": tz})
    except Exception as exc:  # ValidationError, but also overflow/recursion on odd input
        raise _malformed(endpoint, type(exc).__name__) from None


def _parse_list(model: type[M], data: object, *, tz: ZoneInfo, endpoint: str) -> list[M]:
    if isinstance(data, dict):  # one object where a list was expected: take it as a list of one
        data = [data]
    if not isinstance(data, list):
        raise _malformed(endpoint, "data is not a list")
    return [parse_model(model, item, tz=tz, endpoint=endpoint) for item in data]


def _data(body: Mapping[str, Any], endpoint: str) -> Any:
    if "data" not in body:
        raise _malformed(endpoint, "no data in the envelope")
    return body["data"]


def parse_envelope(
    body: object, model: type[M], *, tz: ZoneInfo = DEFAULT_TZ, endpoint: str = "user"
) -> M:
    """Parse a decoded data-platform body `{"statusCode", "data"}` into `model`.

    Raises only `LibraryError`s: the mapped error of a failure envelope, or `ServiceUnavailable`
    for anything of the wrong shape.
    """
    if not isinstance(body, dict):
        raise _malformed(endpoint, "body is not an object")
    status = body.get("statusCode")
    if isinstance(status, int) and not isinstance(status, bool) and status >= 400:
        raise _error_for(endpoint, status, body)
    return parse_model(model, _data(body, endpoint), tz=tz, endpoint=endpoint)


def _error_code(body: object) -> str | None:
    if isinstance(body, dict):
        code = body.get("error")
        if isinstance(code, str) and code:
            return code[:MAX_CODE_LENGTH]
    return None


def _error_description(body: object) -> str | None:
    if isinstance(body, dict):
        text = body.get("error_description")
        if isinstance(text, str) and text:
            return text[:MAX_CODE_LENGTH]
    return None


def _order_url(body: object) -> str | None:
    """`orderUrl` beside an order refusal (serviceprovider's placeOrder), if a web address."""
    if isinstance(body, dict):
        url = body.get("orderUrl")
        if isinstance(url, str) and url.startswith(("https://", "http://")) and len(url) < 2000:
            return url
    return None


def _error_for(endpoint: str, status: int, body: object) -> LibraryError:
    """Map an HTTP status and error body to the taxonomy (see production-notes.md)."""
    code = _error_code(body)
    description = _error_description(body)
    message = f"{_label(endpoint)} answered HTTP {status}"
    if code:
        message += f" ({code})"
    if endpoint in _TOKEN_ENDPOINTS and status in (400, 401):
        default = "invalid_client" if status == 401 else "invalid_request"
        return BadRequest(message, code=code or default, status=status)
    if status == 401:
        return TokenRejected(message, code=code or "invalid_token", status=status)
    if status == 403:
        return NotLoggedIn(message, code=code or "not logged in", status=status)
    if status == 503:
        return ServiceUnavailable(message, code="service_unavailable", status=status)
    if status >= 500 and (code or "").lower() in _SERVER_FAILURES:
        return ServiceUnavailable(message, code=code, status=status)
    if endpoint == "order" and status == 500 and code:
        return OrderRefused(
            message, code=code, status=status, description=description, url=_order_url(body)
        )
    if endpoint in _REFUSABLE and status >= 400 and code:
        return Refused(message, code=code, status=status, description=description)
    if status == 400:
        return BadRequest(message, code=code or "invalid_request", status=status)
    return ServiceUnavailable(message, code=code, status=status)


def _decode(endpoint: str, response: _Response) -> dict[str, Any]:
    """The JSON object of a successful response; the mapped error otherwise."""
    status = response.status_code
    content = response.content
    try:
        body: object = json.loads(content) if content else None
    except Exception:  # not JSON, bad UTF-8, absurd nesting
        body = None
        decoded = False
    else:
        decoded = True
    if isinstance(body, dict):
        inner = body.get("statusCode")
        if isinstance(inner, int) and not isinstance(inner, bool) and inner >= 400 > status:
            status = inner  # an error envelope sent with HTTP 200
    if status >= 400:
        raise _error_for(endpoint, status, body)
    if not 200 <= status < 300:
        raise ServiceUnavailable(f"{_label(endpoint)} answered HTTP {status}", status=status)
    if not decoded:
        raise _malformed(endpoint, "not JSON")
    if not isinstance(body, dict):
        raise _malformed(endpoint, "not a JSON object")
    return body


class LibraryClient:
    """Typed calls to the library services over aiohttp's `ClientSession`.

    aiohttp's client costs about as little CPU per call as a hand-written HTTP/1.1 client
    (about 0.15 ms on loopback, where httpx's `AsyncClient` cost 0.9-1.7 ms); the reminder
    sweep makes one call per patron. Reads share keep-alive connections. A call that changes
    state (order, renew, cancel, the code exchange, revocation; every call made with
    `retry=False`) goes on a connection of its own, so it never meets a kept-alive connection
    the server is just closing, and no layer sends it twice: see `_never_resend`.

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
        self._on_call = on_call
        self.proxies = proxies or Proxies()
        # Each service's proxy, worked out once per host rather than per call.
        self._proxy_of: dict[str, str | None] = {}
        # The call's deadline (`_send`) bounds the rest; aiohttp's own total would bound
        # each attempt and count time spent waiting for a free connection.
        self._client_timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=min(CONNECT_TIMEOUT, timeout)
        )
        self._sessions: _Sessions | None = None
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
        sessions, self._sessions = self._sessions, None
        if sessions is not None and not sessions.loop.is_closed():
            await sessions.close()

    async def __aenter__(self) -> LibraryClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # --- plumbing ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def _metered(self, endpoint: str) -> Iterator[None]:
        started = time.perf_counter()
        outcome = "ok"
        try:
            yield
        except LibraryError as exc:
            outcome = exc.kind
            raise
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        except BaseException:
            outcome = "error"
            raise
        finally:
            seconds = time.perf_counter() - started
            # One line per call, as httpx's client logged each request, but by endpoint name.
            log.debug("%s: %s in %.0f ms", _label(endpoint), outcome, 1000 * seconds)
            if self._on_call is not None:
                try:
                    self._on_call(endpoint, outcome, seconds)
                except Exception:  # metrics must never break a patron's call
                    log.exception("on_call hook failed for %s", endpoint)

    def _session(self, *, fresh: bool) -> aiohttp.ClientSession:
        """This loop's session (a session from another, finished loop is dropped)."""
        loop = asyncio.get_running_loop()
        sessions = self._sessions
        if sessions is None or sessions.loop is not loop:
            sessions = self._sessions = _Sessions(loop, self._new_session(force_close=False))
        if not fresh:
            return sessions.pooled
        if sessions.fresh is None:
            sessions.fresh = self._new_session(force_close=True)
        return sessions.fresh

    def _new_session(self, *, force_close: bool) -> aiohttp.ClientSession:
        connector = (
            aiohttp.TCPConnector(limit=CONNECTION_LIMIT, ssl=tls_context(), force_close=True)
            if force_close
            else aiohttp.TCPConnector(
                limit=CONNECTION_LIMIT, ssl=tls_context(), keepalive_timeout=KEEPALIVE
            )
        )
        return aiohttp.ClientSession(
            connector=connector,
            timeout=self._client_timeout,
            middlewares=(_never_resend,),
            trust_env=False,  # proxies come from `Settings`, read once at start-up
        )

    def _proxy_for(self, url: URL) -> str | None:
        if not self.proxies:
            return None
        origin = f"{url.scheme}://{url.raw_authority}"
        if origin not in self._proxy_of:
            self._proxy_of[origin] = self.proxies.for_url(origin)
        return self._proxy_of[origin]

    async def _send(
        self,
        endpoint: str,
        method: str,
        url: str | URL,
        *,
        retry: bool = False,
        params: Mapping[str, str] | None = None,
        data: Mapping[str, str] | None = None,
        authorization: str | None = None,
    ) -> _Response:
        """One call, its response read whole; aiohttp's and time-out errors mapped.

        Sent once, or, with `retry`, at most twice; with `retry=False` on a connection of its
        own (see the class docstring).
        """
        if params:
            # Encoded here, with the bytes on the wire exactly as `urlencode` makes them.
            url = URL(f"{url}?{urlencode(params)}", encoded=True)
        elif isinstance(url, str):
            url = URL(url, encoded=True)
        headers = dict(_HEADERS)
        if authorization is not None:
            headers["Authorization"] = authorization
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        attempts = 2 if retry else 1
        session = self._session(fresh=not retry)
        proxy = self._proxy_for(url)
        for attempt in range(1, attempts + 1):
            try:
                async with asyncio.timeout_at(deadline):
                    return await self._exchange(session, method, url, data, headers, proxy)
            except _RETRYABLE_ERRORS as exc:
                if attempt < attempts and deadline - loop.time() > MIN_RETRY_BUDGET:
                    log.info("retrying %s after %s", _label(endpoint), type(exc).__name__)
                    continue
                code = "timeout" if isinstance(exc, TimeoutError) else "connection"
                raise ServiceUnavailable(
                    f"{_label(endpoint)}: {type(exc).__name__}", code=code
                ) from None
            except TimeoutError:
                raise ServiceUnavailable(
                    f"{_label(endpoint)}: no answer within {self.timeout:g} s", code="timeout"
                ) from None
            except (aiohttp.ClientError, ValueError) as exc:  # ValueError: a URL aiohttp refuses
                raise ServiceUnavailable(
                    f"{_label(endpoint)}: {type(exc).__name__}", code="connection"
                ) from None
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    async def _exchange(
        session: aiohttp.ClientSession,
        method: str,
        url: URL,
        data: Mapping[str, str] | None,
        headers: dict[str, str],
        proxy: str | None,
    ) -> _Response:
        async with session.request(
            method, url, data=data, headers=headers, proxy=proxy, allow_redirects=False
        ) as response:
            return _Response(response.status, await response.read())

    async def _platform(
        self,
        endpoint: str,
        path: str,
        access_token: str,
        params: Mapping[str, str] | None = None,
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
            params=params,
            authorization=f"Bearer {access_token}",
            retry=retry,
        )
        return _decode(endpoint, response)

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
            return self._model(TokenResponse, _decode("exchange_code", response), "exchange_code")

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
            body = _decode("userinfo", response)
            attributes = body.get("attributes", body if "uniqueId" in body else None)
            if not isinstance(attributes, dict):
                raise _malformed("userinfo", "no attributes")
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
            return self._model(TokenResponse, _decode("password_grant", response), "password_grant")

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
            body = _decode("get_ticket", response)
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
            return self._model(BorrowerStatus, _data(body, "user"), "user")

    async def order(self, access_token: str, pids: list[str], pick_up_branch: str) -> OrderResult:
        """Place a hold; `pick_up_branch` in ISIL form (`DK-` + digits). Never retried."""
        with self._metered("order"):
            params = {"pids": json.dumps(pids), "pickUpBranch": pick_up_branch}
            body = await self._platform("order", "/v3/order", access_token, params, retry=False)
            result = self._model(OrderResult, _data(body, "order"), "order")
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
            params = {"orderId": order_id, "orderType": order_type, "delete": "true"}
            body = await self._platform(
                "cancel_order", "/v3/order", access_token, params, retry=False
            )
            return self._model(CancelResult, _data(body, "cancel_order"), "cancel_order")

    async def renew(self, access_token: str, loan_id: str) -> RenewResult:
        with self._metered("renew"):
            body = await self._platform(
                "renew", "/v3/renew", access_token, {"loanId": loan_id}, retry=False
            )
            return self._model(RenewResult, _data(body, "renew"), "renew")

    async def work(self, access_token: str, pids: list[str]) -> list[Work]:
        with self._metered("work"):
            body = await self._platform(
                "work", "/v3/work", access_token, {"pids": json.dumps(pids)}, retry=True
            )
            return _parse_list(Work, _data(body, "work"), tz=self.timezone, endpoint="work")

    async def search(
        self, access_token: str, query: str, *, limit: int = 10, offset: int = 0
    ) -> SearchResult:
        """Search with a CQL `query`; `limit` is capped at the platform's 50."""
        with self._metered("search"):
            params = {"q": query, "limit": str(max(1, min(limit, 50))), "offset": str(offset)}
            body = await self._platform("search", "/v3/search", access_token, params, retry=True)
            works = _parse_list(Work, _data(body, "search"), tz=self.timezone, endpoint="search")
            hits = body.get("hitCount", len(works))
            return self._model(SearchResult, {"hitCount": hits, "works": works}, "search")

    async def libraries(self, access_token: str, agency_ids: list[str]) -> list[Branch]:
        with self._metered("libraries"):
            params = {"agencyIds": json.dumps(agency_ids)}
            body = await self._platform(
                "libraries", "/v3/libraries", access_token, params, retry=True
            )
            data = _data(body, "libraries")
            return _parse_list(Branch, data, tz=self.timezone, endpoint="libraries")

    async def events(
        self, access_token: str, agency_ids: list[str] | None = None, *, limit: int = 10
    ) -> list[Event]:
        """The library's events as its site lists them (the platform does not sort or filter).

        `agency_ids` (ISIL, `DK-710100`) goes as the JSON array of strings of spec 9.6; without
        it the platform uses the library of the token's patron.
        """
        return await self._cms("events", "/v3/events", Event, access_token, agency_ids, limit)

    async def news(
        self, access_token: str, agency_ids: list[str] | None = None, *, limit: int = 10
    ) -> list[NewsItem]:
        """The library's news items (see `events`)."""
        return await self._cms("news", "/v3/news", NewsItem, access_token, agency_ids, limit)

    async def _cms(
        self,
        endpoint: str,
        path: str,
        model: type[M],
        access_token: str,
        agency_ids: list[str] | None,
        limit: int,
    ) -> list[M]:
        with self._metered(endpoint):
            params = {"limit": str(max(1, limit))}
            if agency_ids:
                params["agency"] = json.dumps(agency_ids)
            body = await self._platform(endpoint, path, access_token, params, retry=True)
            data = _data(body, endpoint)
            if isinstance(data, list):
                data = [item for item in data if item is not None]  # `null` for an unknown nid
            return _parse_list(model, data, tz=self.timezone, endpoint=endpoint)

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
            params = {"like": json.dumps(like), "limit": str(max(1, min(limit, MAX_LIMIT)))}
            if ignore:
                params["ignore"] = json.dumps(ignore)
            try:
                body = await self._platform(
                    "recommend", "/v3/recommend", access_token, params, retry=True
                )
            except ServiceUnavailable as exc:
                if exc.status == 500 and _NOTHING_TO_RECOMMEND in (exc.code or "").lower():
                    return []
                raise
            data = _data(body, "recommend")
            return _parse_list(Recommendation, data, tz=self.timezone, endpoint="recommend")

    # --- public data with the cached anonymous token ----------------------------------------

    async def search_public(self, query: str, *, limit: int = 10, offset: int = 0) -> SearchResult:
        return await self._with_public_token(
            lambda token: self.search(token, query, limit=limit, offset=offset)
        )

    async def work_public(self, pids: list[str]) -> list[Work]:
        return await self._with_public_token(lambda token: self.work(token, pids))

    async def libraries_public(self, agency_ids: list[str]) -> list[Branch]:
        return await self._with_public_token(lambda token: self.libraries(token, agency_ids))
