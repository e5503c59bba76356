"""`GET /oauth/callback`: the end of the code flow, and the start of the phishing-safe link.

The page never connects the account itself: it hands out a one-time code that only the chat
which asked for `/login` can redeem with `/start <code>`.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING
from urllib.parse import quote

from aiohttp import web

from bot.library.errors import LibraryError
from bot.texts import t
from bot.web.pages import page_language, render

if TYPE_CHECKING:
    from bot.services import Services

log = logging.getLogger(__name__)

MAX_STATE = 256
MAX_CODE = 2048
MAX_ERROR = 256


def _valid(value: str | None, limit: int) -> bool:
    return value is not None and 0 < len(value) <= limit and value.isprintable()


async def oauth_callback(request: web.Request, services: Services) -> web.Response:
    """Validate, consume the state, exchange the code, and show the deep link."""
    lang = page_language(request.headers.get("Accept-Language"))
    query = request.rel_url.query
    state, code, error = query.get("state"), query.get("code"), query.get("error")
    well_formed = (
        _valid(state, MAX_STATE)
        and (code is None or _valid(code, MAX_CODE))
        and (error is None or _valid(error, MAX_ERROR))
        and (code is not None or error is not None)
    )
    if not well_formed:
        return render(lang, status=400, title_key="pages.bad_title", body_keys=("pages.bad_body",))
    assert state is not None
    chat_id = await services.store.consume_login_state(state)
    if chat_id is None:
        return render(
            lang, status=410, title_key="pages.expired_title", body_keys=("pages.expired_body",)
        )
    if error is not None:
        log.info("login at the access service was cancelled (%s)", error[:40])
        return render(
            lang, status=200, title_key="pages.denied_title", body_keys=("pages.denied_body",)
        )
    assert code is not None

    library = services.library
    try:
        token = await library.exchange_code(code, redirect_uri=services.settings.redirect_uri)
        info = await library.userinfo(token.access_token)
    except LibraryError as exc:
        log.warning("login could not be completed: %s %s", type(exc).__name__, exc.code or "")
        return render(
            lang, status=502, title_key="pages.failed_title", body_keys=("pages.failed_body",)
        )
    expires_at = (
        datetime.now(UTC) + timedelta(seconds=token.expires_in)
        if token.expires_in and token.expires_in > 0
        else None
    )
    link_code = await services.store.create_pending_link(
        chat_id, token.access_token, expires_at, info
    )
    username = services.bot_username
    deep_link = f"{services.settings.TELEGRAM_LINK_URL}/{quote(username)}?start={quote(link_code)}"
    typed = t(lang, "pages.success_code", code=f"/start {link_code}")
    return render(
        lang,
        status=200,
        title_key="pages.success_title",
        body_keys=("pages.success_body",),
        button=(t(lang, "pages.back_to_telegram"), deep_link),
        extra_html=f"<p>{typed}</p>",
    )
