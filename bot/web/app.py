"""The Mini App: a family's cards on one page (`/app/`), and its API under `/app/api/`.

Every API request carries `Authorization: tma <initData>`, Telegram's signed init data, and
nothing else authenticates it: the signature is checked as Telegram documents it ("Validating
data received via the Mini App"), data older than `MAX_AGE` is refused, and the user in it sees
only the cards of their own private chat (chat id == user id). The page gets names, titles,
dates, branch names and counts, never a token, `uniqueId` or card secret: a renewable loan is
named by an opaque id stored as a single-use button (`bot.actions.buttons`), so a renewal is tried
at most once per id, as a tap in the chat is. The id is derived from the chat, card, loan and
due date (`renew_id`), so every view of the page hands out the same one and stores no new row.
Texts come from the chat's catalogue entries and `bot.texts.render`, so a hold's status, a
date or an amount reads on the page as it does in the chat.

The API's gate checks the caller and their limit (`bot.web.limits.PatronLimit`) before any body
is read; every input (the header's bytes, the body's JSON, the id's shape) is checked before
use and answered 400 when it is not what the page sends.
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import hashlib
import hmac
import html
import json
import logging
import re
import time
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote

from aiohttp import web
from aiohttp.typedefs import Handler

from bot.actions import buttons, chats, outcomes, renewing
from bot.actions import cards as card_actions
from bot.actions.cards import CardRead, read_chat_cards
from bot.actions.watches import of_chat as watches_of
from bot.library.deadline import Deadline
from bot.library.errors import (
    LibraryError,
)
from bot.library.models import parse_library_date
from bot.rules.renewals import due_key, refusal_for
from bot.rules.urgency import due_counts, hold_is_ready, sort_loans
from bot.services import Services
from bot.telegram.cards import RELOGIN_START
from bot.texts import LANGUAGES, Raw, pick_language, t
from bot.texts.cards import card_name
from bot.texts.formatting import format_date, join_and, shorten
from bot.texts.render import (
    debt_summary,
    hold_details,
    hold_status,
    loan_due,
    reason_text,
    render_debt,
    renewal_line,
    watch_line,
)
from bot.web.limits import PatronLimit

if TYPE_CHECKING:
    from collections.abc import Sequence

    from bot.actions.vocabulary import Card
    from bot.library.client import LibraryClient
    from bot.library.models import BorrowerStatus, Hold, Loan

log = logging.getLogger(__name__)

# Telegram's advice: init data is a session credential; an hour is enough to read a page.
MAX_AGE = 3600
# A clock a little ahead of ours is not a forgery.
SKEW = 60
# The stored button's action: only the Mini App's renew endpoint claims these.
RENEW_ACTION = renewing.PAGE_RENEW
NO_STORE = {"Cache-Control": "no-store", "X-Robots-Tag": "noindex"}
API = "/app/api/"
# A renew request is `{"id": "<16 characters>"}`; the server's own limit is for webhook updates.
API_BODY_BYTES = 4096
# The Telegram user an API request's init data names (set by the API's gate).
USER = web.RequestKey("tma_user", int)
# Texts the page shows, in the patron's language, sent with the data: its own words for what
# the chat has none of, the chat's (`borrower.`, `lists.`) for what both say.
TEXTS = {
    "title": "app.title",
    "loans": "app.loans",
    "holds": "app.holds",
    "fees": "borrower.debt.header",
    "timeline": "app.timeline",
    "nothing_due": "app.nothing_due",
    "no_cards": "app.no_cards",
    "no_loans": "lists.loans.none",
    "no_holds": "lists.holds.none",
    "no_fees": "lists.debt.none",
    "renew": "app.renew",
    "renewing": "app.renewing",
    "already": "app.already",
    "unknown": "app.unknown",
    "busy": "app.busy",
    "card_failed": "app.card_failed",
    "login": "lists.login_again",
    "unauthorized": "app.unauthorized",
    "loading": "app.loading",
    "watches": "shelf.watches_header",
}
# A stored title is kept short, as the chat's buttons keep theirs (`keyboards.PAYLOAD_TITLE`).
PAYLOAD_TITLE = 120
_TAG = re.compile(r"<[^>]+>")
# A renew id as the page got it: a stored button's id (`storage.callbacks.new_callback_id`).
_BUTTON_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# Loans' and holds' `titleId`s are record ids of the national bibliography (as /recommend has it).
_TITLE_ID = re.compile(r"^\d{6,12}$")
# A cover rarely changes; the cache is bounded so a busy process does not grow without end.
COVER_TTL = 24 * 3600.0
COVER_ENTRIES = 20_000
_STATIC = resources.files("bot.web") / "static" / "app"
_FILES = {
    "": ("index.html", "text/html"),
    "miniapp.js": ("miniapp.js", "text/javascript"),
    "miniapp.css": ("miniapp.css", "text/css"),
}


class Covers:
    """Cover URLs by pid, fetched with one `/v3/work` call per 20 pids (the client's) for the
    pids not known yet, kept in memory (a work without a cover is remembered as None too)."""

    def __init__(self, library: LibraryClient, scheme: str) -> None:
        self.library = library
        self.scheme = scheme
        self.known: dict[str, tuple[str | None, float]] = {}

    async def lookup(self, pids: Sequence[str], deadline: Deadline) -> dict[str, str | None]:
        now = time.monotonic()
        wanted = list(dict.fromkeys(pids))
        missing = [p for p in wanted if p not in self.known or self.known[p][1] < now]
        if missing:
            await self._fetch(missing, deadline, now)
        return {p: self.known[p][0] for p in wanted if p in self.known}

    async def _fetch(self, pids: list[str], deadline: Deadline, now: float) -> None:
        try:
            found = await deadline.run(self.library.work_public(pids))
        except (LibraryError, TimeoutError) as exc:
            log.warning("covers not read: %s", type(exc).__name__)
            return  # placeholders this time; asked again next time
        if len(self.known) + len(pids) > COVER_ENTRIES:
            self.known.clear()
        got = {work.pid: work for work in found if work.pid}
        for pid in pids:
            work = got.get(pid)
            url = (work.cover_url117 or work.cover_url_thumbnail) if work else None
            if url and url.startswith("//"):
                url = f"{self.scheme}:{url}"
            elif url and not url.startswith("https://"):
                url = None  # only the shape the notes describe
            self.known[pid] = (url, now + COVER_TTL)


def pid_of(title_id: str | None) -> str | None:
    text = (title_id or "").strip()
    return f"870970-basis:{text}" if _TITLE_ID.match(text) else None


def verify_init_data(init_data: str, bot_token: str, *, now: float | None = None) -> int | None:
    """The Telegram user id in `init_data` when its signature is Telegram's (the key is
    HMAC-SHA256 of the bot token under "WebAppData") and it is under an hour old; else None."""
    try:
        init_data.encode("utf-8")  # lone surrogates: bytes that were not UTF-8
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True)
    except ValueError:  # UnicodeEncodeError is one
        return None
    fields = dict(pairs)
    if len(fields) != len(pairs):
        return None  # a key twice: which one was signed?
    given = fields.pop("hash", "")
    check = "\n".join(f"{key}={value}" for key, value in sorted(fields.items()))
    secret = hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()
    expected = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(given.encode(), expected.encode()):
        return None
    try:
        signed_at = int(fields.get("auth_date", ""))
        user = json.loads(fields.get("user", ""))
        user_id = user["id"]
    except (ValueError, TypeError, KeyError):
        return None
    age = (time.time() if now is None else now) - signed_at
    if not -SKEW <= age <= MAX_AGE:
        return None
    if not isinstance(user_id, int) or isinstance(user_id, bool) or user_id <= 0:
        return None
    return user_id


def sign_init_data(fields: dict[str, str], bot_token: str) -> str:
    """`fields` as signed init data (what Telegram sends a Mini App): the demo and the tests."""
    check = "\n".join(f"{key}={value}" for key, value in sorted(fields.items()))
    secret = hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()
    digest = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    pairs = {**fields, "hash": digest}
    return "&".join(f"{key}={quote(value, safe='')}" for key, value in pairs.items())


def add_routes(app: web.Application, services_key: web.AppKey[Services]) -> None:
    """`/app/` (the page and its files) and `/app/api/...` on the bot's web server."""
    covers: list[Covers] = []

    def covers_of(services: Services) -> Covers:
        if not covers:
            # The sandbox serves covers over http; production's are fetched over https.
            http = (services.settings.PLATFORM_URL or "").startswith("http://")
            covers.append(Covers(services.library, "http" if http else "https"))
        return covers[0]

    async def page(request: web.Request) -> web.Response:
        return _file(request.match_info.get("name", ""))

    patrons = PatronLimit()

    @web.middleware
    async def gate(request: web.Request, handler: Handler) -> web.StreamResponse:
        """The API's caller, and their limit, before any body is read."""
        if not request.path.startswith(API):
            return await handler(request)
        try:
            user_id = _user(request, request.app[services_key])
        except web.HTTPException as refused:
            refused.force_close()  # a body the caller may be sending is not read
            raise
        if (request.content_length or 0) > API_BODY_BYTES:
            raise _closing_413()
        wait = patrons.admit(user_id)
        if wait is not None:
            chat = await chats.settings(request.app[services_key], user_id)
            lang = pick_language(chat.language, chat.telegram_language)
            raise patrons.too_many(wait, _plain(t(lang, "app.busy")))
        request[USER] = user_id
        try:
            return await handler(request)
        finally:
            patrons.release(user_id)

    async def overview(request: web.Request) -> web.Response:
        services = request.app[services_key]
        user_id = request[USER]
        data = await build_overview(services, user_id, covers_of(services))
        return web.json_response(data, headers=NO_STORE)

    async def renew(request: web.Request) -> web.Response:
        services = request.app[services_key]
        user_id = request[USER]
        try:
            body = await request.json()
            button = body["id"]
        except (ValueError, TypeError, KeyError, RecursionError):
            # ValueError: not JSON, or not UTF-8; RecursionError: nested past the parser.
            raise _bad_request() from None
        if not isinstance(button, str) or not _BUTTON_ID.match(button):
            raise _bad_request()
        answer = await renew_loan(services, user_id, button)
        return web.json_response(answer, headers=NO_STORE)

    app.middlewares.append(gate)
    app.router.add_get("/app/", page)
    app.router.add_get("/app/{name:miniapp\\.(?:js|css)}", page)
    app.router.add_get(f"{API}overview", overview)
    app.router.add_post(f"{API}renew", renew)


def _file(name: str) -> web.Response:
    filename, kind = _FILES[name]
    body = (_STATIC / filename).read_bytes()
    headers = {
        "Content-Type": f"{kind}; charset=utf-8",
        "Cache-Control": "no-cache",
        # The page loads Telegram's script and the covers; nothing else runs or is framed in.
        "Content-Security-Policy": (
            "default-src 'self'; script-src 'self' https://telegram.org; "
            "img-src 'self' https: http: data:; style-src 'self'; connect-src 'self'; "
            "frame-ancestors *"
        ),
        "Referrer-Policy": "no-referrer",
    }
    return web.Response(body=body, headers=headers)


def _closing_413() -> web.HTTPRequestEntityTooLarge:
    refused = web.HTTPRequestEntityTooLarge(API_BODY_BYTES, API_BODY_BYTES + 1, headers=NO_STORE)
    refused.force_close()  # the body is not read
    return refused


def _bad_request() -> web.HTTPBadRequest:
    return web.HTTPBadRequest(
        text=json.dumps({"error": "malformed request"}),
        content_type="application/json",
        headers=NO_STORE,
    )


def _user(request: web.Request, services: Services) -> int:
    """The Telegram user the request's init data names; 400 for a header that is not UTF-8
    (no Telegram client sends one), else 401 unless the init data is signed and fresh."""
    header = request.headers.get("Authorization", "")
    try:
        # aiohttp keeps bytes that are not UTF-8 as lone surrogates, which cannot be encoded.
        header.encode("utf-8")
    except UnicodeEncodeError:
        raise _bad_request() from None
    scheme, _, data = header.partition(" ")
    token = services.settings.TELEGRAM_BOT_TOKEN
    user_id = None
    if scheme.lower() == "tma" and data and token is not None:
        user_id = verify_init_data(data.strip(), token.get_secret_value())
    if user_id is None:
        said = _plain(t(_claimed_language(data), "app.unauthorized"))
        raise web.HTTPUnauthorized(
            text=json.dumps({"error": "unauthorized", "text": said}),
            content_type="application/json",
            headers={"WWW-Authenticate": "tma", **NO_STORE},
        )
    return user_id


def _claimed_language(init_data: str) -> str:
    """The language init data that did not verify says its user speaks: it picks only the
    words of the refusal, so the page's "open me from the bot" is in the patron's language."""
    try:
        user = json.loads(dict(parse_qsl(init_data.strip())).get("user", ""))
    except (ValueError, RecursionError):  # not JSON, not UTF-8, nested past the parser
        return pick_language(None, None)
    code = user.get("language_code") if isinstance(user, dict) else None
    return pick_language(None, code if isinstance(code, str) else None)


async def _hours_today(
    services: Services, branch: str, today: dt.date, lang: str, deadline: Deadline
) -> str | None:
    """A ready hold's branch hours today, from the library's dated hours (as the digest gives
    the last pick-up day's); where those do not say, the weekly hours as published."""
    dated = await services.branches.hours_on(services.library, branch, today, deadline)
    if dated:
        spans = ", ".join(f"{d.start_time}–{d.end_time}" for d in dated)
        when = format_date(today, lang, today=today)
        return _plain(t(lang, "notices.hours_on", day=when, hours=spans))
    return services.branches.opening_hours(branch, lang)


def _plain(text: str) -> str:
    """A catalogue text (Telegram HTML) as the page's plain text."""
    return html.unescape(_TAG.sub("", text))


def _iso(value: object) -> str | None:
    return value.isoformat() if isinstance(value, dt.date) else None


async def build_overview(services: Services, user_id: int, covers: Covers) -> dict[str, Any]:
    """The page's data: every card of the user's private chat, read side by side by the same
    action as the chat's lists (`bot.actions.cards.read_chat_cards`), in the words the chat
    uses (`bot.texts.render`): statuses, dates and amounts are rendered here. A lapsed card is
    shown by its name, with a login link of its own."""
    chat = await chats.settings(services, user_id)
    lang = pick_language(chat.language, chat.telegram_language)
    deadline = Deadline()
    today = dt.datetime.now(services.settings.timezone).date()
    every = await card_actions.of_chat(services, user_id, lapsed=True)
    cards = (await read_chat_cards(services, every, deadline=deadline, chat=chat)).reads

    async def one(card: CardRead) -> dict[str, Any]:
        return await _card(services, user_id, card, lang, today)

    shown = list(await asyncio.gather(*(one(read) for read in cards)))
    tz = services.settings.timezone
    watches = await watches_of(services, user_id)
    for read, view in zip(cards, shown, strict=True):
        view["watches"] = [
            _plain(watch_line(w.title, w.branch, w.created_at.astimezone(tz).date(), today, lang))
            for w in watches
            if w.number == read.number
        ]
    rows = [row for view in shown for row in (*view.get("loans", ()), *view.get("holds", ()))]
    pids = [row["pid"] for row in rows if row["pid"]]
    found = await covers.lookup(pids, deadline) if pids else {}
    for row in rows:
        row["cover"] = found.get(row.pop("pid") or "")
    holds = [row for view in shown for row in view.get("holds", ())]
    branches = [row["hold"].pick_up_agency for row in holds if row["hold"].pick_up_agency]
    names = await services.branches.lookup(services.library, branches, deadline) if branches else {}
    for row in holds:
        hold: Hold = row.pop("hold")
        row["lines"] = [_plain(line) for line in hold_details(hold, today, lang, names)]
        if hold.pick_up_agency and row["ready"]:
            row["hours"] = await _hours_today(services, hold.pick_up_agency, today, lang, deadline)
    texts = {name: _plain(t(lang, key)) for name, key in TEXTS.items()}
    # Overdue loans are before the strip's first day: told above it, in the chat's words.
    loans = [loan for read in cards if read.status is not None for loan in read.status.loans]
    overdue, _ = due_counts(loans, today, 0)
    if overdue:
        texts["overdue"] = _plain(f"🔴 {t(lang, 'borrower.summary.overdue', count=overdue)}")
    known = [view["name"] for view in shown if not view["error"]]
    if len(known) < len(shown):
        # The strip counts the loans of the cards read only: it names them, and with none read
        # it is left out rather than saying that nothing is due.
        texts["nothing_due"] = (
            _plain(t(lang, "app.nothing_due_on", cards=join_and(known, lang))) if known else ""
        )
    return {
        "lang": lang if lang in LANGUAGES else "en",
        "today": today.isoformat(),
        "texts": texts,
        "cards": shown,
    }


def _login_link(services: Services) -> str:
    """The lapsed cards' "log in again": the chat, which names them with a login button each
    (`RELOGIN_START`), so a page view makes no login state."""
    return services.chat_link(RELOGIN_START)


async def _card(
    services: Services,
    user_id: int,
    read: CardRead,
    lang: str,
    today: dt.date,
) -> dict[str, Any]:
    card = read.card
    name = card_name(card, lang)  # plain text already: a name may hold "<" or "&"
    if read.state == "lapsed":
        # As the chat: the card stays, by its name, with its own login.
        text = _plain(t(lang, "lists.card_lapsed", name=name))
        return {"name": name, "error": text, "login": _login_link(services)}
    if read.status is None:
        error = type(read.error).__name__ if read.error is not None else "none"
        log.warning("overview: card %s not read (%s)", card.number, error)
        return {"name": name, "error": _plain(t(lang, "app.card_failed"))}
    lists = await _lists(services, user_id, card, read.status, lang, today)
    return {"name": name, "error": None, **lists}


def renew_id(chat_id: int, card_id: str, loan_id: str, due: str) -> str:
    """A loan's renew id on the page: the same for the same chat, card, loan and due date, so
    every view hands out (and stores) one id per loan; a renewal moves the due date and so
    gives the next one. Unguessable: the card's identity is random and never leaves here."""
    key = "\0".join((str(chat_id), card_id, loan_id, due)).encode()
    return base64.urlsafe_b64encode(hashlib.sha256(key).digest()[:12]).decode()


async def _lists(
    services: Services,
    user_id: int,
    card: Card,
    status: BorrowerStatus,
    lang: str,
    today: dt.date,
) -> dict[str, Any]:
    refusals = await renewing.refusals(services, user_id, card.number)
    loans = sort_loans(status.loans)
    renewed = await renewing.renewed_today(services, card, loans)
    untitled = _plain(t(lang, "render.untitled"))
    cid = card.card_id
    button: dict[str, str] = {}
    kept: list[tuple[str, str, dict[str, Any]]] = []
    for loan in loans:
        if loan.loan_id in renewed:
            continue  # renewed today: told so, with no button
        if cid and refusal_for(loan, refusals) is None and isinstance(loan.due_date, dt.date):
            due = due_key(loan)
            ref = renew_id(user_id, cid, loan.loan_id, due)
            button[loan.loan_id] = ref
            payload = {
                "cid": cid,
                "loan_id": loan.loan_id,
                "due": due,
                "title": shorten(loan.title or untitled, PAYLOAD_TITLE),
            }
            kept.append((ref, RENEW_ACTION, payload))
    used = await buttons.keep(services, user_id, kept)

    def loan_row(loan: Loan) -> dict[str, Any]:
        refusal = refusal_for(loan, refusals)
        ref = button.get(loan.loan_id)
        return {
            "title": loan.title or untitled,
            "creator": loan.creator,
            "pid": pid_of(loan.title_id),
            "due": _iso(loan.due_date),
            "due_text": _plain(loan_due(loan.due_date, today, lang)),
            "renew": ref,
            "tried": bool(ref and used.get(ref)) or loan.loan_id in renewed,
            "refused": (
                _plain(
                    t(lang, "borrower.renew.cannot", reason=Raw(reason_text(refusal.reason, lang)))
                )
                if refusal
                else None
            ),
        }

    def hold_row(hold: Hold) -> dict[str, Any]:
        return {
            "title": hold.title or untitled,
            "creator": hold.creator,
            "pid": pid_of(hold.title_id),
            "ready": hold_is_ready(hold),
            "status": _plain(hold_status(hold, lang)),
            "hold": hold,  # its branch's name is looked up for every card at once
            "hours": None,
        }

    fees = render_debt(status.debt, today, lang)
    return {
        "loans": [loan_row(loan) for loan in loans],
        "holds": [hold_row(hold) for hold in status.orders],
        # The chat's entries, as `/debt` shows them: what for, then when and how much.
        "fees": [
            {"title": _plain(what), "amount": _plain(rest)}
            for what, _, rest in (entry.partition("\n") for entry in fees)
        ],
        "fees_total": _plain(debt_summary(status.debt, lang)) or None,
    }


async def renew_loan(services: Services, user_id: int, button: str) -> dict[str, Any]:
    """Renew the loan behind a page's renew id with the chat's action (`renewing.renew_loan`):
    at most once, the card found by its identity and its login checked before the id is
    claimed, the answer remembered, a renewal or refusal retiring every id the page gave for
    that loan. The answer's `result` names the outcome and its `text` is the chat's line."""
    chat = await chats.settings(services, user_id)
    lang = pick_language(chat.language, chat.telegram_language)
    today = dt.datetime.now(services.settings.timezone).date()
    result = await renewing.renew_loan(
        services, chat_id=user_id, button=button, action=RENEW_ACTION, reusable=True
    )
    return renewal_answer(result, lang, today)


def renewal_answer(result: renewing.LoanRenewal, lang: str, today: dt.date) -> dict[str, Any]:
    """The page's answer for a renewal's result."""

    def answer(kind: str, text: str, **extra: Any) -> dict[str, Any]:
        return {"result": kind, "text": _plain(text), **extra}

    if isinstance(result, outcomes.Already):
        return answer("already", t(lang, "app.already"))
    if isinstance(result, outcomes.CardGone):
        return answer("gone", t(lang, "cards.gone"))
    if isinstance(result, outcomes.LoginLapsed):
        return answer("login", t(lang, "app.card_login"))
    if isinstance(result, renewing.NotSent | renewing.Failed):
        return answer("failed", t(lang, "app.failed"))
    title = result.title or t(lang, "render.untitled")
    if isinstance(result, renewing.NoAnswer):
        return answer("unknown", renewal_line(title, result.error, today, lang))
    if isinstance(result, renewing.OurFault):
        return answer("fault", renewal_line(title, result.error, today, lang))
    if isinstance(result, renewing.RenewRefused):
        was = parse_library_date(result.due) or None
        reason = Raw(reason_text(result.reason, lang))
        return answer(
            "refused",
            renewal_line(title, result.error, today, lang, due=was),
            refused=_plain(t(lang, "borrower.renew.cannot", reason=reason)),
        )
    new_due = result.new_due
    return answer(
        "renewed",
        renewal_line(title, result.result, today, lang, due=parse_library_date(result.due) or None),
        due=_iso(new_due),
        due_text=_plain(loan_due(new_due, today, lang)) if new_due else None,
    )
