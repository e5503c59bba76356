"""The chat's words for renewing (`bot.actions.renewing`'s results): a tapped loan's button
after the answer, "renew all"'s label, the lines of what renewing the due loans did, and the
tapped message's buttons and summary redrawn in place."""

from __future__ import annotations

import datetime as dt
import html
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.constants import ParseMode
from telegram.error import BadRequest as TelegramBadRequest
from telegram.error import TelegramError

from bot.library.errors import ClientFault, LibraryError, Refused, TokenRejected
from bot.rules.renewals import raw_reason
from bot.telegram.buttons import RenewLoan
from bot.telegram.keyboards import SHORT_TITLE
from bot.telegram.replies import NO_PREVIEW, plain
from bot.texts import Raw, t
from bot.texts.formatting import format_date, shorten
from bot.texts.render import SEP, reason_text, refused_line, renewal_line

if TYPE_CHECKING:
    from bot.actions.renewing import RenewedDue, Tried
    from bot.library.models import Loan, RenewResult

log = logging.getLogger(__name__)

# Titles named in "left alone" (and in renewed loans sharing a date) before "…".
LEFT_ALONE_TITLES = 8
# Renewed loans sharing a new due date that get a line each; more get one line together.
RENEWED_ONE_BY_ONE = 3


def _title(loan: Loan, lang: str) -> str:
    return loan.title or t(lang, "render.untitled")


def button_label(
    title: str,
    outcome: RenewResult | LibraryError,
    today: dt.date,
    lang: str,
    due: dt.date | str | None = None,
) -> str:
    """The tapped loan's button after the answer (plain text: buttons are not HTML); `due`,
    the date the loan had, says a renewal that left it there."""
    short = Raw(shorten(title, SHORT_TITLE))
    if isinstance(outcome, Refused):
        reason = Raw(shorten(plain(reason_text(raw_reason(outcome), lang)), 40))
        return plain(t(lang, "borrower.renew.button_refused", title=short, reason=reason))
    if isinstance(outcome, ClientFault):
        return plain(t(lang, "borrower.renew.button_fault", title=short))
    if isinstance(outcome, TokenRejected):
        return plain(t(lang, "borrower.renew.button_lapsed", title=short))
    if isinstance(outcome, LibraryError):
        key = "button_unknown" if outcome.outcome_unknown else "button_not_done"
        return plain(t(lang, f"borrower.renew.{key}", title=short))
    if outcome.return_date is None:
        return plain(t(lang, "borrower.renew.button_ok_no_date", title=short))
    date = Raw(format_date(outcome.return_date, lang, today=today))
    key = "button_ok_same" if outcome.return_date == due else "button_ok"
    return plain(t(lang, f"borrower.renew.{key}", title=short, date=date))


def renew_all_label(lang: str, window: int) -> str:
    """ "Renew those due within 3 days": what the button does. It renews only the loans due
    within the window, as a renewal counts from today: renewing a loan due much later would
    spend one of its renewals and could even bring its due date forward."""
    if window <= 0:
        return t(lang, "borrower.renew.all_today")
    return t(lang, "borrower.renew.all_within", days=window)


async def edit_buttons(
    update: Update, labels: Mapping[str, str], summary: Redraw | None = None
) -> None:
    """Relabel the tapped message's buttons in place (callback data -> new label), and redraw
    its summary line of the card when the renewals moved it (a /renew list has one)."""
    query = update.callback_query
    message = query.message if query is not None else None
    if not isinstance(message, Message) or message.reply_markup is None:
        return
    text = summary.apply(message) if summary is not None else None
    if not labels and text is None:
        return
    rows = [
        [
            InlineKeyboardButton(labels[b.callback_data], callback_data=b.callback_data)
            if isinstance(b.callback_data, str) and b.callback_data in labels
            else b
            for b in row
        ]
        for row in message.reply_markup.inline_keyboard
    ]
    try:
        if text is not None:
            await message.edit_text(
                text,
                parse_mode=ParseMode.HTML,
                link_preview_options=NO_PREVIEW,
                reply_markup=InlineKeyboardMarkup(rows),
            )
        else:
            await message.edit_reply_markup(InlineKeyboardMarkup(rows))
    except TelegramBadRequest as exc:
        if "not modified" not in exc.message.lower():
            log.warning("renew buttons not updated: %s", exc.message)
    except TelegramError as exc:
        log.warning("renew buttons not updated: %s", type(exc).__name__)


@dataclass(frozen=True)
class Redraw:
    """A card's summary line before and after renewing (`loans_summary`), and the card's name
    when the list has a section per card (whose summary follows the card's heading)."""

    before: str
    after: str
    name: str | None = None

    def apply(self, message: Message) -> str | None:
        """The message's text with the card's summary redrawn; None when there is nothing to
        redraw (unchanged, or not a /renew list: a digest has no summary)."""
        if self.before == self.after or not message.text:
            return None
        text = message.text_html
        start = 0
        if self.name is not None:
            start = text.find(html.escape(self.name, quote=False))
            if start < 0:
                return None
        at = text.find(self.before, start)
        if at < 0:
            return None
        return f"{text[:at]}{self.after}{text[at + len(self.before) :]}"


def renewed_lines(done: RenewedDue, lang: str, today: dt.date) -> tuple[list[str], dict[str, str]]:
    """What renewing the due loans did, as lines: the counts (refusals remembered from before
    counted with the new ones, so counts and lines agree), each renewed loan with its new due
    date, then what needs the patron's attention with its due date; and the new labels of the
    loan buttons claimed on the way (callback data -> label)."""
    trouble: list[str] = []
    labels: dict[str, str] = {}
    counts = {"ok": 0, "refused": 0, "fault": 0, "unknown": 0, "not_done": 0}
    for tried in done.tried:
        counts[tried.kind] += 1
        title = _title(tried.loan, lang)
        if tried.kind != "ok":
            trouble.append(renewal_line(title, tried.outcome, today, lang, due=tried.loan.due_date))
        if tried.button is not None:
            labels[f"{RenewLoan.ACTION}:{tried.button}"] = button_label(
                title, tried.outcome, today, lang, tried.loan.due_date
            )
    today_ = [skipped.loan for skipped in done.skipped if skipped.why == "renewed_today"]
    for skipped in done.skipped:
        title = _title(skipped.loan, lang)
        if skipped.why == "renewed_today":
            continue  # one line for them all, below
        if skipped.why == "refused":
            counts["refused"] += 1
            trouble.append(refused_line(title, skipped.reason, skipped.loan.due_date, today, lang))
        elif skipped.why == "unreadable":
            trouble.append(t(lang, "borrower.renew.left_unreadable", title=title, date=skipped.due))
        else:
            trouble.append(t(lang, "borrower.renew.tried_here", title=title))
    renewed = _renewed_lines(done, lang, today)
    lines = [*renewed, *trouble]
    if any(counts.values()):
        lines.insert(0, _counts(counts, lang))
    if today_:
        names = _names(today_, lang)
        lines.append(t(lang, "borrower.renew.renewed_today", count=len(today_), titles=names))
    later = done.later
    if later:
        within = t(lang, "borrower.renew.days", days=done.window)
        lines.append(
            t(
                lang,
                "borrower.renew.left_alone",
                count=len(later),
                days=within,
                titles=_names(later, lang),
            )
        )
    if not done.tried and not done.skipped:
        lines = [t(lang, "borrower.renew.nothing_due", days=done.window)]
    return lines, labels


def _names(loans: Sequence[Loan], lang: str) -> str:
    """The first few loans' titles, shortened, and "…" for the rest."""
    names = ", ".join(shorten(_title(loan, lang), 40) for loan in loans[:LEFT_ALONE_TITLES])
    return names + ", …" if len(loans) > LEFT_ALONE_TITLES else names


def _renewed_lines(done: RenewedDue, lang: str, today: dt.date) -> list[str]:
    """The renewed loans' new due dates: a line per loan while few share a date, else one line
    per date naming the titles (a renewal counts from today, so most share one)."""
    by_date: dict[dt.date | str | None, list[Tried]] = {}
    lines: list[str] = []
    for tried in done.tried:
        if tried.kind == "ok" and not isinstance(tried.outcome, LibraryError):
            if tried.outcome.return_date == tried.loan.due_date:  # renewed, yet not moved
                title = _title(tried.loan, lang)
                lines.append(
                    renewal_line(title, tried.outcome, today, lang, due=tried.loan.due_date)
                )
                continue
            by_date.setdefault(tried.outcome.return_date, []).append(tried)
    for date, group in by_date.items():
        if not isinstance(date, dt.date) or len(group) <= RENEWED_ONE_BY_ONE:
            lines += [
                renewal_line(_title(tried.loan, lang), tried.outcome, today, lang)
                for tried in group
            ]
            continue
        names = _names([tried.loan for tried in group], lang)
        day = format_date(date, lang, today=today)
        lines.append(t(lang, "borrower.renew.ok_many", count=len(group), date=day, titles=names))
    return lines


def _counts(counts: Mapping[str, int], lang: str) -> str:
    """ "✅ 30 renewed · ⛔ 2 refused · ⚠️ 1 without an answer" (the kinds that happened)."""
    parts = [
        t(lang, f"borrower.renew.count_{kind}", count=count)
        for kind, count in counts.items()
        if count
    ]
    return SEP.join(parts)
