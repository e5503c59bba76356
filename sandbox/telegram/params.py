"""Reading and checking the Bot API's parameters, strictly, with Telegram's error wording.

Real Telegram refuses HTML it cannot parse, texts over 4096 characters, callback data over 64
bytes and URL buttons whose host is not a dotted name; so does the stand-in, so a bot that works
here does not fail there. Parameters come as the query string plus a JSON, form-encoded or
multipart body, and values arrive as strings or as JSON, as PTB and other clients send them.
"""

from __future__ import annotations

import json
import re
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from sandbox.telegram.markup import (
    MAX_TEXT_LENGTH,
    Entity,
    ParseError,
    entities_from_utf16,
    parse,
)

MAX_CALLBACK_DATA = 64  # bytes
MAX_INLINE_BUTTONS = 100  # a message's inline keyboard, all rows together
_LANGUAGE_CODE = re.compile(r"[a-z]{2}")
_OTHER_BUTTONS = (
    "login_url",
    "web_app",
    "switch_inline_query",
    "switch_inline_query_current_chat",
    "switch_inline_query_chosen_chat",
    "copy_text",
    "callback_game",
    "pay",
)

Params = dict[str, Any]
# Whether the call came to Telegram's test environment (`/bot<token>/test/<method>`), which
# opens Mini Apps at plain-http addresses; the production one takes https only.
TEST_ENVIRONMENT: ContextVar[bool] = ContextVar("TEST_ENVIRONMENT", default=False)


class ApiError(Exception):
    """An error answer of the Bot API."""

    def __init__(
        self, status: int, description: str, parameters: dict[str, Any] | None = None
    ) -> None:
        super().__init__(description)
        self.status = status
        self.description = description
        self.parameters = parameters


def bad(description: str) -> ApiError:
    return ApiError(400, f"Bad Request: {description}")


def blocked() -> ApiError:
    return ApiError(403, "Forbidden: bot was blocked by the user")


async def read_params(request: web.Request) -> Params:
    """Query string plus the body: JSON, form-encoded or multipart (file parts are ignored)."""
    params: Params = dict(request.query)
    if request.method not in ("POST", "PUT") or not request.can_read_body:
        return params
    content_type = request.content_type
    if content_type == "application/json":
        try:
            body = await request.json()
        except ValueError:
            raise bad("can't parse JSON encoded request parameters") from None
        if not isinstance(body, dict):
            raise bad("can't parse JSON encoded request parameters")
        params.update(body)
    elif content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        form = await request.post()
        for key, value in form.items():
            if isinstance(value, str):
                params[key] = value
    return params


def as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value)


def as_json(value: Any, error: str) -> Any:
    """A JSON-serialised parameter (form bodies), or the value itself (JSON bodies)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            raise bad(error) from None
    return value


def as_int(value: Any, error: ApiError) -> int:
    if isinstance(value, bool):
        raise error
    try:
        return int(value)
    except (TypeError, ValueError):
        raise error from None


def chat_id_of(params: Params) -> int:
    raw = params.get("chat_id")
    if raw is None or raw == "":
        raise bad("chat_id is empty")
    return as_int(raw, bad("chat not found"))


@dataclass(frozen=True)
class Text:
    """A message text as sent (`source`) and as parsed (plain `text` and its entities)."""

    text: str
    entities: list[Entity]
    source: str
    parse_mode: str | None


def message_text(params: Params) -> Text:
    """`text` with `parse_mode` (or explicit `entities`), within Telegram's limits."""
    raw = params.get("text")
    if raw is None or str(raw) == "":
        raise bad("message text is empty")
    source = str(raw)
    parse_mode = params.get("parse_mode") or None
    try:
        plain, entities = parse(source, parse_mode)
    except ParseError as exc:
        raise bad(f"can't parse entities: {exc}") from None
    except ValueError:
        raise bad(f"unsupported parse_mode {parse_mode}") from None
    if parse_mode is None and params.get("entities"):
        raw_entities = as_json(params["entities"], "can't parse entities JSON object")
        if isinstance(raw_entities, list):
            entities = entities_from_utf16(plain, raw_entities)
    if not plain.strip():
        raise bad("message text is empty")
    if len(plain) > MAX_TEXT_LENGTH:
        raise bad("message is too long")
    return Text(plain, entities, source, parse_mode)


def shows_link_preview(params: Params) -> bool:
    """Whether the message shows a link preview (`link_preview_options` or the older flag)."""
    options = params.get("link_preview_options")
    if options:
        parsed = as_json(options, "can't parse link preview options JSON object")
        if isinstance(parsed, dict) and as_bool(parsed.get("is_disabled", False)):
            return False
    return not as_bool(params.get("disable_web_page_preview", False))


def inline_keyboard(raw: Any) -> list[list[dict[str, Any]]] | None:
    """Validate reply_markup; returns the inline keyboard rows (None for other markups)."""
    if raw is None or raw == "":
        return None
    markup = as_json(raw, "can't parse reply keyboard markup JSON object")
    if not isinstance(markup, dict):
        raise bad("can't parse reply keyboard markup JSON object")
    if "inline_keyboard" not in markup:
        return None  # reply keyboards, remove_keyboard and force_reply are accepted as is
    rows = markup["inline_keyboard"]
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise bad(
            'field "inline_keyboard" of the InlineKeyboardMarkup should be an Array of Arrays'
        )
    if sum(len(row) for row in rows) > MAX_INLINE_BUTTONS:
        raise bad("reply markup is too long")
    for row in rows:
        for button in row:
            _check_button(button)
    return [[dict(button) for button in row] for row in rows]


def _check_button(button: Any) -> None:
    prefix = "can't parse inline keyboard button: "
    if not isinstance(button, dict):
        raise bad(prefix + "InlineKeyboardButton must be an Object")
    if not isinstance(button.get("text"), str):
        raise bad(prefix + 'Field "text" must be of type String')
    if "callback_data" in button:
        data = button["callback_data"]
        if not isinstance(data, str) or not 1 <= len(data.encode("utf-8")) <= MAX_CALLBACK_DATA:
            raise bad("BUTTON_DATA_INVALID")
        return
    if "url" in button:
        if not isinstance(button["url"], str) or not valid_button_url(button["url"]):
            raise bad("BUTTON_URL_INVALID")
        return
    if "web_app" in button:
        app = button["web_app"]
        url = app.get("url") if isinstance(app, dict) else None
        if not isinstance(url, str) or not valid_button_url(url):
            raise bad("BUTTON_URL_INVALID")
        if not url.lower().startswith("https://") and not TEST_ENVIRONMENT.get():
            raise bad(
                f"inline keyboard button Web App URL '{url}' is invalid: "
                "Only HTTPS links are allowed"
            )
        return
    if not any(key in button for key in _OTHER_BUTTONS):
        raise bad(prefix + "Text buttons are unallowed in the inline keyboard")


def valid_button_url(url: str) -> bool:
    """http(s) with a dotted host name (Telegram refuses `localhost`), or a tg: link."""
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme == "tg":
            return bool(parts.netloc or parts.path)
        host = parts.hostname
        _ = parts.port  # raises on a malformed port
    except ValueError:
        return False
    if scheme not in ("http", "https") or not host:
        return False
    labels = host.split(".")
    return len(labels) >= 2 and all(labels)


def allowed_updates_of(params: Params) -> frozenset[str] | None:
    """The update kinds asked for; None when not given, empty when all default kinds."""
    if params.get("allowed_updates") in (None, ""):
        return None
    allowed = as_json(params["allowed_updates"], "can't parse allowed updates")
    if not isinstance(allowed, list):
        return None
    return frozenset(str(kind) for kind in allowed)


def scope_key(params: Params) -> str:
    """A command scope as a key: the same scope, however its JSON is spelt, is the same key."""
    scope = as_json(params.get("scope") or {"type": "default"}, "can't parse scope JSON")
    if not isinstance(scope, dict) or "type" not in scope:
        raise bad("can't parse BotCommandScope JSON object")
    return json.dumps(scope, sort_keys=True)


def language_code(params: Params) -> str:
    language = str(params.get("language_code") or "")
    if language and not _LANGUAGE_CODE.fullmatch(language):
        raise bad("invalid language code specified")
    return language
