"""Mini Apps in the stand-in: the launch address a `web_app` button opens, with the init data
signed as Telegram signs it (HMAC-SHA256 under a key derived from the bot token with
"WebAppData") and the theme, in the address's fragment as Telegram's clients pass them
(`#tgWebAppData=...&tgWebAppThemeParams=...`)."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from urllib.parse import quote, urlencode

# A light theme as Telegram's web client sends it (the page's CSS variables follow it).
THEME = {
    "bg_color": "#ffffff",
    "text_color": "#000000",
    "hint_color": "#595959",
    "link_color": "#1a56b0",
    "button_color": "#1f5fbf",
    "button_text_color": "#ffffff",
    "secondary_bg_color": "#f1f1f4",
}


def init_data(bot_token: str, user_id: int, first_name: str, language_code: str | None) -> str:
    """Signed init data for the user of a private chat, dated now."""
    user = {"id": user_id, "first_name": first_name, "language_code": language_code or "en"}
    fields = {
        "auth_date": str(int(time.time())),
        "query_id": f"AA{user_id}",
        "user": json.dumps(user, separators=(",", ":"), ensure_ascii=False),
    }
    check = "\n".join(f"{key}={value}" for key, value in sorted(fields.items()))
    secret = hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()
    fields["hash"] = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    return urlencode(fields, quote_via=quote)


def launch_url(url: str, data: str) -> str:
    """The Mini App's address as a Telegram client opens it."""
    fragment = urlencode(
        {
            "tgWebAppData": data,
            "tgWebAppVersion": "8.0",
            "tgWebAppPlatform": "web",
            "tgWebAppThemeParams": json.dumps(THEME, separators=(",", ":")),
        },
        quote_via=quote,
    )
    return f"{url.split('#', 1)[0]}#{fragment}"
