"""The few HTML pages a patron's browser sees after logging in at the access service."""

from __future__ import annotations

import base64
import hashlib
import html

from aiohttp import web

from bot.texts import DEFAULT_LANGUAGE, LANGUAGES, t

CSS = (
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;"
    "background:#f4f5f7;color:#1d2433;line-height:1.5}"
    "main{max-width:28rem;margin:3rem auto;padding:1.5rem 1.75rem;background:#fff;"
    "border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.08)}"
    "h1{font-size:1.35rem;margin:0 0 .75rem}p{margin:.5rem 0}"
    "a.button{display:inline-block;margin:1rem 0 .5rem;padding:.7rem 1.2rem;border-radius:8px;"
    "background:#2481cc;color:#fff;text-decoration:none;font-weight:600}"
    "code{font-size:1.1rem;background:#eef1f5;padding:.15rem .4rem;border-radius:4px;"
    "user-select:all}"
    "@media (prefers-color-scheme:dark){body{background:#15181e;color:#e6e8eb}"
    "main{background:#1f232b}code{background:#2a2f39}}"
)
CSS_HASH = base64.b64encode(hashlib.sha256(CSS.encode()).digest()).decode()

SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "Pragma": "no-cache",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    # Nothing but our own inline style (pinned by hash); no scripts, frames or forms.
    "Content-Security-Policy": (
        f"default-src 'none'; style-src 'sha256-{CSS_HASH}'; base-uri 'none'; "
        "form-action 'none'; frame-ancestors 'none'"
    ),
}


def page_language(accept_language: str | None) -> str:
    """Danish or English from `Accept-Language`, by quality; Danish when neither is named."""
    best, best_q = DEFAULT_LANGUAGE, -1.0
    for position, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        primary = tag.strip().lower().split("-")[0]
        if primary not in LANGUAGES:
            continue
        q = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        # Earlier entries win ties, as browsers list them in preference order.
        score = q - position * 1e-6
        if q > 0 and score > best_q:
            best, best_q = primary, score
    return best


def render(
    lang: str,
    *,
    status: int,
    title_key: str,
    body_keys: tuple[str, ...] = (),
    button: tuple[str, str] | None = None,
    extra_html: str = "",
) -> web.Response:
    """A small, self-contained page; every dynamic value is escaped by `t` or here."""
    title = t(lang, title_key)
    paragraphs = "".join(f"<p>{t(lang, key)}</p>" for key in body_keys)
    link = ""
    if button is not None:
        label, href = button
        link = f'<p><a class="button" href="{html.escape(href)}">{html.escape(label)}</a></p>'
    document = (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        '<meta name="robots" content="noindex">'
        f"<title>{title}</title><style>{CSS}</style></head>"
        f"<body><main><h1>{title}</h1>{paragraphs}{link}{extra_html}</main></body></html>"
    )
    return web.Response(
        status=status,
        text=document,
        content_type="text/html",
        charset="utf-8",
        headers=SECURITY_HEADERS,
    )
