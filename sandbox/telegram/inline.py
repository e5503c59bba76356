"""`answerInlineQuery`: the bot's answer to what a user typed after `@<bot>`, checked as Telegram
checks it.

At most 50 results, each with an id of 1-64 bytes unique in the answer; `next_offset` at most
64 bytes; an article needs a title and a message to send (text parsed with its `parse_mode`, as
`sendMessage` parses it), its keyboard the same checks as a message's; thumbnails and a
results button as Telegram wants them. Only article results are known here: the bot sends
nothing else.
"""

from __future__ import annotations

import re
import time
from typing import Any

from sandbox.telegram.params import (
    ApiError,
    Params,
    as_bool,
    as_int,
    as_json,
    bad,
    inline_keyboard,
    message_text,
    valid_button_url,
)
from sandbox.telegram.state import Bot, State

MAX_RESULTS = 50
MAX_ID = 64  # bytes, for a result id and for next_offset
INLINE_QUERY_TTL = 15 * 60.0
QUERY_TOO_OLD = "query is too old and response timeout expired or query ID is invalid"
_START_PARAMETER = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _result(raw: Any, seen: set[str]) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise bad("can't parse InlineQueryResult JSON object")
    kind = raw.get("type")
    if kind != "article":
        raise bad("RESULT_TYPE_INVALID")
    result_id = raw.get("id")
    if not isinstance(result_id, str) or not 1 <= len(result_id.encode("utf-8")) <= MAX_ID:
        raise bad("RESULT_ID_INVALID")
    if result_id in seen:
        raise bad("RESULT_ID_DUPLICATE")
    seen.add(result_id)
    if not isinstance(raw.get("title"), str) or not raw["title"].strip():
        raise bad("RESULT_TITLE_EMPTY")
    content = raw.get("input_message_content")
    if not isinstance(content, dict) or "message_text" not in content:
        raise bad("can't parse InputMessageContent JSON object")
    try:
        text = message_text({"text": content["message_text"], **_mode(content)})
    except ApiError as exc:
        raise bad("MESSAGE_EMPTY" if "empty" in exc.description else exc.description) from None
    keyboard = inline_keyboard(raw.get("reply_markup"))
    for key in ("thumbnail_url", "url"):
        if key in raw and not (isinstance(raw[key], str) and valid_button_url(raw[key])):
            raise bad("THUMBNAIL_URL_INVALID" if key == "thumbnail_url" else "URL_INVALID")
    return {
        "id": result_id,
        "title": raw["title"],
        "description": raw.get("description"),
        "thumbnail_url": raw.get("thumbnail_url"),
        "text": text.text,
        "entities": text.entities,
        "html": text.source,
        "parse_mode": text.parse_mode,
        "keyboard": keyboard,
        "link_preview": not as_bool(
            (content.get("link_preview_options") or {}).get("is_disabled", False)
        ),
    }


def _mode(content: dict[str, Any]) -> dict[str, Any]:
    mode: dict[str, Any] = {}
    if content.get("parse_mode"):
        mode["parse_mode"] = content["parse_mode"]
    if content.get("entities"):
        mode["entities"] = content["entities"]
    return mode


def _button(raw: Any) -> dict[str, Any] | None:
    if raw in (None, ""):
        return None
    button = as_json(raw, "can't parse InlineQueryResultsButton JSON object")
    if not isinstance(button, dict) or not isinstance(button.get("text"), str):
        raise bad("can't parse InlineQueryResultsButton JSON object")
    start = button.get("start_parameter")
    if "web_app" not in button and not (
        isinstance(start, str) and _START_PARAMETER.fullmatch(start)
    ):
        raise bad("START_PARAM_INVALID")
    return {"text": button["text"], "start_parameter": start}


class InlineAnswers:
    def __init__(self, state: State) -> None:
        self.state = state
        self.query_ttl = INLINE_QUERY_TTL

    async def answer(self, bot: Bot, params: Params) -> bool:
        query_id = str(params.get("inline_query_id") or "")
        # A JSON body carries no hits as `[]` itself, which Telegram takes like the form's "[]".
        given = params.get("results")
        unparsable = "can't parse inline query results JSON object"
        raw = as_json("" if given is None else given, unparsable)
        if not isinstance(raw, list):
            raise bad(unparsable)
        if len(raw) > MAX_RESULTS:
            raise bad("RESULTS_TOO_MUCH")
        seen: set[str] = set()
        results = [_result(item, seen) for item in raw]
        next_offset = str(params.get("next_offset") or "")
        if len(next_offset.encode("utf-8")) > MAX_ID:
            raise bad("NEXT_OFFSET_INVALID")
        cached = params.get("cache_time")  # 0 (not cached) is a value, not an absence
        cache_time = as_int(300 if cached is None else cached, bad("wrong cache_time"))
        button = _button(params.get("button"))
        query = self.state.inline_queries.get(query_id)
        if (
            query is None
            or query.bot_token != bot.token
            or query.answer is not None
            or time.monotonic() - query.created > self.query_ttl
        ):
            raise bad(QUERY_TOO_OLD)
        query.answer = {
            "results": results,
            "next_offset": next_offset,
            "cache_time": cache_time,
            "is_personal": as_bool(params.get("is_personal", False)),
            "button": button,
        }
        self.state.bump()
        return True
