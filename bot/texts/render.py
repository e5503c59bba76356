"""Loans, holds, debt and works as Telegram HTML entries, shared by commands and reminders.

Every value from the library is escaped here; words come from the `render.` catalogue. An
entry is bounded (long titles are shortened) so one entry always fits a message.
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Final

from bot.library.errors import ClientFault, LibraryError, Refused, TokenRejected
from bot.library.models import Copy, Debt, Hold, Loan, Work
from bot.rules.renewals import raw_reason
from bot.rules.urgency import due_counts, hold_is_ready, loan_urgency
from bot.texts import Raw, t
from bot.texts.formatting import (
    format_amount,
    format_date,
    is_zero_amount,
    parse_amount,
    relative_days,
    shorten,
)

if TYPE_CHECKING:
    from bot.library.models import RenewResult

TITLE_LIMIT: Final = 300
FIELD_LIMIT: Final = 200
MARKS: Final[Mapping[str, str]] = {"overdue": "🔴 ", "due_today": "🟡 ", "due_soon": "🟡 "}
READY_MARK: Final = "🟢 "
SEP: Final = " · "
# The platform's material types (Danish, compared case-insensitively) with a translation in
# the `material.` catalogue; any other is shown as the platform gave it.
MATERIAL_TYPES: Final[Mapping[str, str]] = {
    "bog": "material.book",
    "e-bog": "material.ebook",
    "ebog": "material.ebook",
    "billedbog": "material.picture_book",
    "tegneserie": "material.comic",
    "lydbog (net)": "material.audiobook_online",
    "netlydbog": "material.audiobook_online",
    "lydbog (cd)": "material.audiobook_cd",
    "lydbog (cd-mp3)": "material.audiobook_mp3",
    "film (dvd)": "material.film_dvd",
    "film (blu-ray)": "material.film_bluray",
    "film (net)": "material.film_online",
    "musik (cd)": "material.music_cd",
    "node": "material.sheet_music",
    "noder": "material.sheet_music",
    "tidsskrift": "material.periodical",
    "artikel": "material.article",
    "podcast": "material.podcast",
    "brætspil": "material.board_game",
}

__all__ = [
    "debt_summary",
    "debt_total",
    "hold_details",
    "hold_status",
    "holds_summary",
    "loan_due",
    "loans_summary",
    "material_type",
    "reason_text",
    "refused_line",
    "render_debt",
    "render_hold",
    "render_loan",
    "render_work",
    "renewal_line",
]


def _text(value: str | None, limit: int = FIELD_LIMIT) -> str:
    """Plain library text, shortened to `limit` characters, then HTML-escaped."""
    return html.escape(shorten(value or "", limit), quote=False)


def _title(value: str | None, lang: str) -> str:
    title = _text(value, TITLE_LIMIT)
    return f"<b>{title or t(lang, 'render.untitled')}</b>"


def _when(value: dt.date | str | None, today: dt.date, lang: str, key: str) -> str:
    """`key` filled with a date and, for a parsed date, how far it is from today."""
    if isinstance(value, dt.date):
        return t(
            lang,
            key,
            date=format_date(value, lang, today=today),
            relative=relative_days(value, today, lang),
        )
    return t(lang, f"{key}_text", date=format_date(value, lang, today=today))


def _line(*parts: str) -> str:
    return SEP.join(part for part in parts if part)


def render_loan(loan: Loan, today: dt.date, lang: str, cannot_renew: str | None = None) -> str:
    """Marked title, then creator and due date with days left or overdue (a date that could
    not be read is shown as sent, flagged); `cannot_renew` is why the library refused."""
    mark = MARKS.get(loan_urgency(loan, today), "")
    due = loan_due(loan.due_date, today, lang)
    entry = f"{mark}{_title(loan.title, lang)}\n{_line(_text(loan.creator), due)}"
    if cannot_renew:
        entry += "\n" + t(lang, "borrower.renew.cannot", reason=Raw(cannot_renew))
    return entry


def loan_due(due: dt.date | str | None, today: dt.date, lang: str) -> str:
    """ "due 3 Dec (in 5 days)": a loan's due date as its entry tells it (the Mini App too)."""
    if due is None:
        return t(lang, "render.loan.no_due")
    return _when(due, today, lang, "render.loan.due")


def loans_summary(
    loans: Sequence[Loan], today: dt.date, lang: str, within: int, refused: int = 0
) -> str:
    """ "17 overdue · 4 due within 3 days" (and how many can't be renewed): a list's first line."""
    overdue, soon = due_counts(loans, today, within)
    days = t(lang, "borrower.renew.days", days=within)
    parts = []
    if overdue:
        parts.append(t(lang, "borrower.summary.overdue", count=overdue))
    if soon:
        parts.append(t(lang, "borrower.summary.soon", count=soon, days=days))
    if not parts:
        parts.append(t(lang, "borrower.summary.calm", days=days))
    if refused:
        parts.append(t(lang, "borrower.summary.refused", count=refused))
    return SEP.join(parts)


def holds_summary(holds: Sequence[Hold], lang: str) -> str:
    """ "2 ready for pick-up · 9 waiting": a long list of holds' first line."""
    ready = sum(1 for hold in holds if hold_is_ready(hold))
    parts = []
    if ready:
        parts.append(t(lang, "borrower.summary.ready", count=ready))
    if len(holds) > ready:
        parts.append(t(lang, "borrower.summary.waiting", count=len(holds) - ready))
    return SEP.join(parts)


def hold_status(hold: Hold, lang: str) -> str:
    """ "Ready for pick-up", "Being processed", "In the queue · number 4": the one wording of
    a hold's state, in the chat's lists and on the Mini App."""
    status = hold.status.strip().casefold()
    position = (hold.hold_queue_position or "").strip()
    if hold_is_ready(hold):
        return t(lang, "render.hold.ready")
    if status == "in process":
        return t(lang, "render.hold.in_process")
    if status == "active" or (not status and position):
        if position:
            return t(lang, "render.hold.queue", position=position[:20])
        return t(lang, "render.hold.queue_unknown")
    return _text(hold.status)


def render_hold(hold: Hold, today: dt.date, lang: str, branch_names: Mapping[str, str]) -> str:
    """Title, creator and status in plain words, pick-up branch, and for a ready hold the
    pick-up number and last day to collect."""
    ready = hold_is_ready(hold)
    lines = [
        f"{READY_MARK if ready else ''}{_title(hold.title, lang)}",
        _line(_text(hold.creator), hold_status(hold, lang)),
        *hold_details(hold, today, lang, branch_names),
    ]
    return "\n".join(line for line in lines if line)


def hold_details(
    hold: Hold, today: dt.date, lang: str, branch_names: Mapping[str, str]
) -> list[str]:
    """A hold's lines after its status: the pick-up branch, and for a ready hold its pick-up
    number and last day to collect (empty lines left out)."""
    lines = []
    agency = (hold.pick_up_agency or "").strip()
    if agency:
        lines.append(t(lang, "render.hold.branch", branch=branch_names.get(agency) or agency))
    if hold_is_ready(hold):
        pickup_id = (hold.pick_up_id or "").strip()
        last_day = hold.pick_up_expiry_date
        lines.append(
            _line(
                t(lang, "render.hold.pickup_id", pickup_id=pickup_id[:40]) if pickup_id else "",
                _when(last_day, today, lang, "render.hold.last_day") if last_day else "",
            )
        )
    return [line for line in lines if line]


def render_debt(items: Sequence[Debt], today: dt.date, lang: str) -> list[str]:
    """One entry per fee that is owed (zero amounts are skipped): what it is for (the
    material, the only reason the data gives), when, how much."""
    entries = []
    for item in items:
        if is_zero_amount(item.amount):
            continue
        title = _text(item.title, TITLE_LIMIT)
        if title:
            what = t(lang, "render.debt.for", title=Raw(title))
            creator = _text(item.creator)
            what = _line(what, creator)
        else:
            what = t(lang, "render.debt.no_reason")
        when = format_date(item.date, lang, today=today) if item.date is not None else ""
        amount = html.escape(format_amount(item.amount, item.currency, lang)[:60], quote=False)
        entries.append(f"{what}\n{_line(html.escape(when, quote=False), amount)}")
    return entries


def debt_summary(items: Sequence[Debt], lang: str) -> str:
    """ "Total: 75,00 kr." of one card's fees ("" when there is no honest total)."""
    total = debt_total(items)
    if total is None:
        return ""
    return t(lang, "render.debt.total", amount=format_amount(total[0], total[1], lang))


def debt_total(items: Sequence[Debt]) -> tuple[str, str] | None:
    """(amount, currency) of everything owed, summed exactly; None when nothing is owed.

    Also None when no honest total exists (mixed currencies, an unreadable amount): callers
    then show the entries without a total.
    """
    total = Decimal(0)
    currencies: set[str] = set()
    for item in items:
        if is_zero_amount(item.amount):
            continue
        value = parse_amount(item.amount)
        if value is None:
            return None
        total += value
        currencies.add(item.currency.strip().upper() or "DKK")
    if not currencies or total == 0 or len(currencies) > 1:
        return None
    places = max(2, -int(total.as_tuple().exponent))
    return f"{total:.{places}f}", currencies.pop()


def material_type(value: str | None, lang: str) -> str:
    """The platform's (Danish) material type in `lang`, plain text; unknown ones as given."""
    key = MATERIAL_TYPES.get(" ".join((value or "").split()).casefold())
    return t(lang, key) if key else value or ""


def render_work(work: Work, lang: str) -> str:
    """Title, then creator, year and material type as far as they are known."""
    kind = material_type(work.type, lang)
    details = _line(_text(work.creator), _text(work.date, 20), _text(kind, 60))
    return f"{_title(work.title, lang)}\n{details}" if details else _title(work.title, lang)


def renewal_line(
    title: str,
    outcome: RenewResult | LibraryError,
    today: dt.date,
    lang: str,
    *,
    due: dt.date | str | None = None,
) -> str:
    """One loan's renewal as a line: new due date (or that it stayed `due`: a renewal counts
    from today), the refusal in words (with the date it is still `due`, when known), no answer,
    or not done; the chat's and the Mini App's."""
    title = shorten(title, TITLE_LIMIT)
    if isinstance(outcome, Refused):
        return refused_line(title, raw_reason(outcome), due, today, lang)
    if isinstance(outcome, ClientFault):
        return t(lang, "borrower.renew.fault", title=title)
    if isinstance(outcome, TokenRejected):
        return t(lang, "borrower.renew.lapsed", title=title)
    if isinstance(outcome, LibraryError):
        key = "borrower.renew.no_answer" if outcome.outcome_unknown else "borrower.renew.not_done"
        return t(lang, key, title=title)
    if outcome.return_date is None:
        return t(lang, "borrower.renew.ok_no_date", title=title)
    date = format_date(outcome.return_date, lang, today=today)
    key = "borrower.renew.ok_same" if outcome.return_date == due else "borrower.renew.ok"
    return t(lang, key, title=title, date=date)


def refused_line(
    title: str, reason: str, due: dt.date | str | None, today: dt.date, lang: str
) -> str:
    """ "⛔ Title, due 3 Dec: can't be renewed – reason": what the patron must return when."""
    title = shorten(title, TITLE_LIMIT)
    text = Raw(reason_text(reason, lang))
    if not due:
        return t(lang, "borrower.renew.refused", title=title, reason=text)
    date = format_date(due, lang, today=today)
    return t(lang, "borrower.renew.refused_due", title=title, reason=text, date=date)


# Substrings of refusal texts seen from library systems (NCIP problem types among them), and
# what they mean in plain words; anything else is quoted as the library sent it.
REASONS: tuple[tuple[str, str], ...] = (
    ("outstanding request", "borrower.renew.reason.reserved"),
    ("reserv", "borrower.renew.reason.reserved"),
    ("hold", "borrower.renew.reason.reserved"),
    ("maximum renewals", "borrower.renew.reason.max"),
    ("max", "borrower.renew.reason.max"),
    ("limit", "borrower.renew.reason.max"),
    ("too early", "borrower.renew.reason.too_early"),
    ("too_early", "borrower.renew.reason.too_early"),
    ("not renewable", "borrower.renew.reason.not_renewable"),
    ("not_renewable", "borrower.renew.reason.not_renewable"),
    ("debt", "borrower.renew.reason.debt"),
    ("fee", "borrower.renew.reason.debt"),
    ("unknown loan", "borrower.renew.reason.not_found"),
    ("not found", "borrower.renew.reason.not_found"),
    ("not_found", "borrower.renew.reason.not_found"),
)


REASON_LIMIT = 120


def reason_text(raw: str, lang: str) -> str:
    """Why a renewal was refused: plain words for a known text, else the text quoted."""
    lowered = raw.lower().replace("-", " ")
    for needle, key in REASONS:
        if needle in lowered:
            return t(lang, key)
    if not raw.strip():
        return t(lang, "borrower.renew.reason.unknown")
    return t(lang, "borrower.renew.reason.code", code=shorten(raw, REASON_LIMIT))


def render_copies(copies: Sequence[Copy], lang: str) -> list[str]:
    """Where a title stands at one library: each branch with a copy on the shelf and its place
    (department › location › sub-location), each with a copy only to read there, then how many
    more are lent out. Empty when the library has no copy."""
    shelved: dict[str, list[str]] = {}
    reading: dict[str, list[str]] = {}
    for copy in copies:
        if copy.on_shelf:
            shelved.setdefault(copy.branch, copy.place)
        elif copy.not_for_loan:
            reading.setdefault(copy.branch, copy.place)
    lines = [
        t(lang, "shelf.on_shelf", branch=branch, place=" › ".join(place))
        if place
        else t(lang, "shelf.on_shelf_here", branch=branch)
        for branch, place in sorted(shelved.items())
    ]
    lines += [
        t(lang, "shelf.not_for_loan", branch=branch, place=" › ".join(place))
        for branch, place in sorted(reading.items())
        if branch not in shelved
    ]
    elsewhere = sum(1 for copy in copies if not copy.on_shelf and not copy.not_for_loan)
    if elsewhere:
        lines.append(t(lang, "shelf.lent_out", count=elsewhere))
    return lines


def watch_line(title: str, branch: str, since: dt.date, today: dt.date, lang: str) -> str:
    """A shelf watch as /watches and the Mini App list it: the title, the branch, since when."""
    return t(
        lang,
        "shelf.watches_line",
        title=title,
        branch=branch,
        date=format_date(since, lang, today=today),
    )
