"""The HTML pages of the access service: the login form and the error page."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from sandbox.library.data import LIBRARIES, TestPatron

STYLE = """
*{box-sizing:border-box}
body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;
 background:#eef1f4;color:#1d2530}
main{max-width:440px;margin:40px auto;padding:0 16px}
.card{background:#fff;border-radius:12px;box-shadow:0 2px 12px rgba(0,0,0,.08);padding:28px}
h1{font-size:22px;margin:0 0 2px}
.en{color:#69737f;font-size:13px;font-weight:normal;display:block}
label{display:block;margin:16px 0 4px;font-weight:600}
input,select{width:100%;padding:10px 12px;font-size:16px;border:1px solid #b9c2cc;border-radius:8px}
.buttons{display:flex;gap:12px;margin-top:22px}
button{flex:1;padding:11px;font-size:16px;border-radius:8px;border:0;cursor:pointer}
.login{background:#1b5e9c;color:#fff}.deny{background:#e3e7ec;color:#1d2530}
.error{background:#fdecea;color:#8a1c13;border-radius:8px;padding:10px 12px;margin:12px 0 0}
.sso{background:#eaf3fb;border-radius:8px;padding:10px 12px;margin:12px 0 0}
.hint{margin-top:20px;font-size:14px;color:#3d4753}
.hint table{width:100%;border-collapse:collapse;margin-top:6px}
.hint td{padding:4px 6px;border-top:1px solid #e3e7ec;vertical-align:top}
.library{color:#1b5e9c}
code{font-size:13px}
.brand{font-size:13px;color:#69737f;margin-bottom:14px}
"""


def _page(title: str, body: str) -> str:
    return (
        "<!doctype html><html lang=da><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>"
        f"<body><main>{body}</main></body></html>"
    )


def login_page(
    *,
    fields: dict[str, str],
    patrons: Sequence[TestPatron],
    agency: str = "",
    user_id: str = "",
    error: str | None = None,
    sso_name: str | None = None,
    action: str = "/oauth/authorize",
) -> str:
    """The login form; `fields` are the hidden parameters (OAuth's, or the earlier flow's
    token and return address) posted back to `action`."""
    hidden = "".join(
        f'<input type=hidden name="{escape(name)}" value="{escape(value)}">'
        for name, value in fields.items()
    )
    options = "".join(
        f'<option value="{agency_id}"{" selected" if agency_id == agency else ""}>'
        f"{escape(name)} ({agency_id})</option>"
        for agency_id, name, _ in LIBRARIES
    )
    notice = ""
    if error:
        notice = f"<p class=error role=alert>{escape(error)}</p>"
    sso = ""
    if sso_name:
        sso = (
            f"<div class=sso>Du er allerede logget ind som <b>{escape(sso_name)}</b>."
            "<span class=en>You are already logged in.</span>"
            f'<form method=post action="{escape(action)}">{hidden}'
            "<div class=buttons><button class=login name=action value=continue>"
            "Fortsæt / Continue</button></div></form></div>"
        )
    library_names = {agency_id: name for agency_id, name, _ in LIBRARIES}
    rows = "".join(
        f"<tr><td><code>{escape(p.user_id)}</code></td><td><code>{escape(p.pin)}</code></td>"
        f"<td>{escape(p.name)} <small class=library>"
        f"{escape(library_names.get(p.agency, p.agency))} ({escape(p.agency)})</small>"
        f"<br><small>{escape(p.description)}</small></td></tr>"
        for p in patrons
    )
    body = f"""
<div class=card>
<div class=brand>Bibliotekernes login (sandkasse) · Library login (sandbox)</div>
<h1>Log ind med dit bibliotek<span class=en>Log in with your library</span></h1>
{notice}{sso}
<form method=post action="{escape(action)}">{hidden}
<label for=agency>Bibliotek <span class=en>Library</span></label>
<select id=agency name=agency>{options}</select>
<label for=user_id>Låner-id eller CPR-nummer <span class=en>User id</span></label>
<input id=user_id name=user_id value="{escape(user_id)}" autocomplete=username
 inputmode=numeric required>
<label for=pin>Pinkode <span class=en>PIN</span></label>
<input id=pin name=pin type=password autocomplete=current-password inputmode=numeric>
<div class=buttons>
<button class=login type=submit name=action value=login>Log ind<span class=en>Log in</span></button>
<button class=deny type=submit name=action value=deny formnovalidate>Afvis
<span class=en>Deny</span></button>
</div></form>
<div class=hint><b>Testlånere</b> (vælg deres bibliotek ovenfor)
<span class=en>Test patrons (choose their library above)</span>
<table>{rows}</table></div>
</div>"""
    return _page("Log ind · Log in", body)


def error_page(message_da: str, message_en: str) -> str:
    body = (
        "<div class=card><div class=brand>Bibliotekernes login (sandkasse)</div>"
        f"<h1>Der opstod en fejl<span class=en>Something went wrong</span></h1>"
        f"<p class=error>{escape(message_da)}<span class=en>{escape(message_en)}</span></p></div>"
    )
    return _page("Fejl · Error", body)


def logged_out_page() -> str:
    body = (
        "<div class=card><h1>Du er logget ud<span class=en>You are logged out</span></h1>"
        "<p>Du kan lukke vinduet. <span class=en>You can close this window.</span></p></div>"
    )
    return _page("Logget ud · Logged out", body)


def ticket_page(token: str, ticket_id: int) -> str:
    """After an earlier-flow login without a return address: the session to fetch a ticket for."""
    body = (
        "<div class=card><div class=brand>Bibliotekernes login (sandkasse)</div>"
        "<h1>Du er logget ind<span class=en>You are logged in</span></h1>"
        f"<p>token: <code id=tickettoken>{escape(token)}</code><br>"
        f"id: <code id=ticketid>{ticket_id}</code></p>"
        f"<p><code>GET /getTicket/{escape(token)}/{ticket_id}</code></p></div>"
    )
    return _page("Logget ind · Logged in", body)
