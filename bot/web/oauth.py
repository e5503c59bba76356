"""`GET /oauth/callback`: the end of the code flow, and the start of the phishing-safe link.

The page never connects the account itself: it hands out a one-time code that only the chat
which asked for `/login` can redeem with `/start <code>`.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from aiohttp import web

from bot.actions import chats, logins
from bot.library.errors import LibraryError
from bot.texts import LANGUAGES, pick_language, t
from bot.web.pages import page_language, render

if TYPE_CHECKING:
    from bot.services import Services

log = logging.getLogger(__name__)

MAX_STATE = 256
MAX_CODE = 2048
MAX_ERROR = 256
# The `error` of a patron who cancelled at the login page (RFC 6749 4.1.2.1; the production
# notes' "denied login"); the access service's own failures, as against refusals of our request.
DENIED = "access_denied"
SERVICE_FAULTS = frozenset({"server_error", "temporarily_unavailable"})
# The token endpoint's answer to a code that expired or was used (the production notes).
CODE_REFUSED = "invalid_grant"
# Carries the chat's language from `/oauth/logout` to the page the access service returns to.
LOGOUT_COOKIE = "logout_lang"


def _valid(value: str | None, limit: int) -> bool:
    return value is not None and 0 < len(value) <= limit and value.isprintable()


def _back(services: Services, lang: str) -> tuple[str, str] | None:
    """A button back to the chat with the bot (no start parameter: nothing to redeem)."""
    if not services.bot_username:
        return None
    return t(lang, "pages.back_to_chat"), services.chat_link()


async def _chat_language(services: Services, chat_id: int, fallback: str) -> str:
    """The chat's language (saved, else Telegram's), as every message to it uses."""
    chat = await chats.settings(services, chat_id)
    if chat.language is None and chat.telegram_language is None:
        return fallback
    return pick_language(chat.language, chat.telegram_language)


async def logout_redirect(request: web.Request, services: Services) -> web.StreamResponse:
    """`GET /oauth/logout?lang=..`: on to the access service's logout, which ends its single
    sign-on session in this browser and comes back to the callback.

    Linked from the /logout reply, so the chat never holds a URL with a token in it. The
    language rides along in a short-lived cookie, as the access service's redirect back
    carries nothing of ours.
    """
    lang = request.rel_url.query.get("lang", "")
    lang = lang if lang in LANGUAGES else page_language(request.headers.get("Accept-Language"))
    target = services.library.logout_url(redirect_uri=services.settings.redirect_uri)
    response = web.Response(status=302, headers={"Location": target, "Cache-Control": "no-store"})
    response.set_cookie(
        LOGOUT_COOKIE,
        lang,
        max_age=600,
        path="/oauth",
        httponly=True,
        samesite="Lax",
        secure=(services.settings.PUBLIC_URL or "").startswith("https://"),
    )
    return response


def _logged_out(request: web.Request, services: Services) -> web.Response:
    """The access service's logout came back (`message=logout`, or our cookie).

    `message=logout_close_browser` (hejmdal's logout component) means the patron logged in
    through an identity provider that keeps its own login (UNI-login, WAYF): only closing the
    browser ends that, and the page says so.
    """
    lang = request.cookies.get(LOGOUT_COOKIE, "")
    if lang not in LANGUAGES:
        lang = page_language(request.headers.get("Accept-Language"))
    close = request.rel_url.query.get("message") == "logout_close_browser"
    response = render(
        lang,
        status=200,
        title_key="pages.logged_out_title",
        body_keys=("pages.logged_out_close_browser" if close else "pages.logged_out_body",),
        button=_back(services, lang),
    )
    response.del_cookie(LOGOUT_COOKIE, path="/oauth")
    return response


def _page(services: Services, lang: str, status: int, page: str) -> web.Response:
    """The callback's page `page` ("bad", "expired", "denied", "failed": its title and body
    texts), with the way back to the chat."""
    return render(
        lang,
        status=status,
        title_key=f"pages.{page}_title",
        body_keys=(f"pages.{page}_body",),
        button=_back(services, lang),
    )


async def oauth_callback(request: web.Request, services: Services) -> web.Response:
    """Validate, consume the state, exchange the code, and show the deep link."""
    lang = page_language(request.headers.get("Accept-Language"))
    query = request.rel_url.query
    state, code, error = query.get("state"), query.get("code"), query.get("error")
    returned = "message" in query or LOGOUT_COOKIE in request.cookies
    if state is None and code is None and error is None and returned:
        return _logged_out(request, services)
    well_formed = (
        _valid(state, MAX_STATE)
        and (code is None or _valid(code, MAX_CODE))
        and (error is None or _valid(error, MAX_ERROR))
        and (code is not None or error is not None)
    )
    if not well_formed:
        return _page(services, lang, 400, "bad")
    assert state is not None
    taken = await logins.take_state(services, state)
    if taken is not None:
        lang = await _chat_language(services, taken[0], lang)
    if taken is None or taken[1]:
        return _page(services, lang, 410, "expired")
    chat_id = taken[0]
    if error == DENIED:
        log.info("login at the access service was cancelled")
        return _page(services, lang, 200, "denied")
    if error is not None:
        # Not the patron's doing: the service failed (`server_error`, `temporarily_unavailable`)
        # or refused the bot's request (`invalid_request`, `unauthorized_client`, ...).
        level = logging.WARNING if error in SERVICE_FAULTS else logging.ERROR
        log.log(level, "login at the access service failed: %s", error[:40])
        return _page(services, lang, 502, "failed")
    assert code is not None

    library = services.library
    try:
        token = await library.exchange_code(code, redirect_uri=services.settings.redirect_uri)
    except LibraryError as exc:
        log.warning("login could not be completed: %s %s", type(exc).__name__, exc.code or "")
        if exc.code == CODE_REFUSED:  # the code expired (or was used) before it reached us
            return _page(services, lang, 410, "expired")
        return _page(services, lang, 502, "failed")
    try:
        info = await library.userinfo(token.access_token)
    except LibraryError as exc:
        log.warning("login could not be completed: %s %s", type(exc).__name__, exc.code or "")
        await library.revoke(token.access_token)  # no card will hold it
        return _page(services, lang, 502, "failed")
    expires_at = (
        datetime.now(UTC) + timedelta(seconds=token.expires_in)
        if token.expires_in and token.expires_in > 0
        else None
    )
    link_code = await logins.pending_link(services, chat_id, token.access_token, expires_at, info)
    deep_link = services.chat_link(link_code)
    typed = t(lang, "pages.success_code", code=f"/start {link_code}")
    return render(
        lang,
        status=200,
        title_key="pages.success_title",
        body_keys=("pages.success_body",),
        button=(t(lang, "pages.back_to_telegram"), deep_link),
        extra_html=f"<p>{typed}</p>",
    )
