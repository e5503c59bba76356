"""/renew: the loans with a button each and "renew all"; each result is reported.

A list longer than a page (`RENEW_PER_PAGE`) opens with a summary and pages through one edited
message (◀ ▶); every loan's button is stored when the list is sent, so each page shows the
same buttons. The `renew` (`buttons.RenewLoan`) and `renewall` (`buttons.RenewAll`) buttons
are also put in reminder digests (`keyboards.renew_buttons`). Each loan is tried at most once per
message: a loan's button is single use (its stored row is claimed), and "renew all" claims the
rows of the message's loan buttons (of every page) before renewing those loans, so neither
renews what the other did. "Renew all" covers only the loans the message listed that are due
within the renewal window (`bot.rules.renewals.renew_window`), read fresh, and reports
the counts and only what was not renewed. Renewals are never retried. After a tap, the
message's keyboard is edited in place: ✅ and the new date, or ⛔ and the reason; a refusal is
remembered, so the loan is marked and gets no button again.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import html
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.constants import ParseMode
from telegram.error import BadRequest as TelegramBadRequest
from telegram.error import TelegramError
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from bot.library.deadline import Deadline
from bot.library.errors import (
    ClientFault,
    LibraryError,
    Refused,
    ServiceUnavailable,
    TokenRejected,
)
from bot.library.models import parse_library_date
from bot.rules.renewals import raw_reason, refusal_for, renew_window
from bot.rules.urgency import hold_is_ready, sort_loans
from bot.services import renewing
from bot.services.renewing import RenewedDue, Tried
from bot.telegram.buttons import ButtonId, ListPage, Payload, RenewAll, RenewLoan, decode
from bot.telegram.cards import card_name, tell_lapsed
from bot.telegram.context import Context
from bot.telegram.failures import answer_library_error
from bot.telegram.handlers.cardlists import (
    ALL,
    CardStatus,
    Shown,
    chat_cards,
    heading,
    read_cards,
    view_ids,
    view_payloads,
    view_rows,
)
from bot.telegram.keyboards import (
    SHORT_TITLE,
    claim_once,
    page_row,
    peek_callback,
    ref_button,
    renew_payload,
    store_payloads,
)
from bot.telegram.replies import NO_PREVIEW, plain, reply, send, send_messages
from bot.texts import Raw, t
from bot.texts.formatting import format_date, shorten, split_messages
from bot.texts.render import SEP, loans_summary, reason_text, refused_line, renewal_line

if TYPE_CHECKING:
    from bot.library.models import Hold, Loan, RenewResult
    from storage.store import Card, Refusal

log = logging.getLogger(__name__)

# The longest trip /away renews for (a loan period is rarely longer than a month or two).
MAX_AWAY_DAYS = 60
# Titles named in "left alone" (and in renewed loans sharing a date) before "…".
LEFT_ALONE_TITLES = 8
# Renewed loans sharing a new due date that get a line each; more get one line together.
RENEWED_ONE_BY_ONE = 3


def button_label(title: str, outcome: RenewResult | LibraryError, today: dt.date, lang: str) -> str:
    """The tapped loan's button after the answer (plain text: buttons are not HTML)."""
    short = Raw(shorten(title, SHORT_TITLE))
    if isinstance(outcome, Refused):
        reason = Raw(shorten(plain(reason_text(raw_reason(outcome), lang)), 40))
        return plain(t(lang, "borrower.renew.button_refused", title=short, reason=reason))
    if isinstance(outcome, ClientFault):
        return plain(t(lang, "borrower.renew.button_fault", title=short))
    if isinstance(outcome, LibraryError):
        return plain(t(lang, "borrower.renew.button_unknown", title=short))
    if outcome.return_date is None:
        return plain(t(lang, "borrower.renew.button_ok_no_date", title=short))
    date = Raw(format_date(outcome.return_date, lang, today=today))
    return plain(t(lang, "borrower.renew.button_ok", title=short, date=date))


def _loan_row(
    loan: Loan,
    lang: str,
    refusal: Refusal | None,
    button_id: str | None,
    used: set[str],
    today: dt.date,
) -> tuple[str | None, str | None]:
    """A loan on a /renew page: (the line saying why it has no button, None) when the library
    refused it or it was borrowed since the list was made; else (None, its button's label)."""
    title = _title(loan, lang)
    if refusal is not None:
        reason = Raw(reason_text(refusal.reason, lang))
        return t(lang, "borrower.renew.refused", title=title, reason=reason), None
    if button_id is None:
        return t(lang, "borrower.renew.not_listed", title=title), None
    key = "borrower.renew.button_tried" if button_id in used else "borrower.renew.button"
    due = Raw(format_date(loan.due_date, lang, today=today))
    return None, t(lang, key, title=Raw(shorten(title, SHORT_TITLE)), due=due)


def renew_all_label(lang: str, window: int) -> str:
    """ "Renew those due within 3 days": what the button does. It renews only the loans due
    within the window, as a renewal counts from today: renewing a loan due much later would
    spend one of its renewals and could even bring its due date forward."""
    if window <= 0:
        return t(lang, "borrower.renew.all_today")
    return t(lang, "borrower.renew.all_within", days=window)


def _title(loan: Loan, lang: str) -> str:
    return loan.title or t(lang, "render.untitled")


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


async def summary_change(
    context: Context,
    card: int,
    name: str | None,
    before: Sequence[Loan],
    after: Sequence[Loan],
    refused_before: Mapping[str, Refusal],
) -> Redraw:
    """The card's /renew summary before and after renewing (the refusals now remembered)."""
    lang, today = context.lang, context.today
    window = await _window(context, context.chat_id)
    refused_after = await context.services.store.renewal_refusals.refusals(
        context.chat_id, card=card
    )

    def line(loans: Sequence[Loan], refusals: Mapping[str, Refusal]) -> str:
        refused = sum(1 for loan in loans if refusal_for(loan, refusals) is not None)
        return loans_summary(loans, today, lang, window, refused)

    return Redraw(line(before, refused_before), line(after, refused_after), name)


def _renewed(loans: Sequence[Loan], done: RenewedDue) -> list[Loan]:
    """The loans with the new due dates the library gave."""
    moved = {
        tried.loan.loan_id: tried.outcome.return_date
        for tried in done.tried
        if not isinstance(tried.outcome, LibraryError) and tried.outcome.return_date is not None
    }
    return [
        loan.model_copy(update={"due_date": moved[loan.loan_id]}) if loan.loan_id in moved else loan
        for loan in loans
    ]


# Loans on a page of /renew, each with its button (or its ⛔ line).
RENEW_PER_PAGE = 10


async def renew_command(update: Update, context: Context) -> None:
    await list_renew(update, context)


async def _window(context: Context, chat_id: int) -> int:
    svc = context.services
    chat = await svc.store.chats.chat(chat_id)
    return renew_window(chat.reminders_enabled, chat.thresholds(svc.settings.REMINDER_DAYS))


async def renew_callback(update: Update, context: Context) -> None:
    """A loan's "renew" button (from /renew or a reminder digest), with its card's token."""
    lang = context.lang
    card = await _card_of(update, context, RenewLoan)
    claimed = await claim_once(update, context, "borrower.renew.already", tapped=card)
    if claimed is None:
        return
    account, ref = claimed
    chat_id = context.chat_id
    tapped = decode(ref.payload, RenewLoan)
    if tapped is None:
        await send(context.bot, chat_id, t(lang, "common.stale_button"))
        return
    title = tapped.title or t(lang, "render.untitled")
    loan_id = tapped.loan_id
    outcome: RenewResult | LibraryError
    try:
        outcome = await Deadline().run(context.services.library.renew(account.token, loan_id))
    except Refused as exc:
        outcome = exc
    except LibraryError as exc:
        if not isinstance(exc, TokenRejected):
            await edit_buttons(
                update, {_data(update): button_label(title, exc, context.today, lang)}
            )
        if isinstance(exc, ClientFault) or (
            isinstance(exc, ServiceUnavailable) and exc.status is None
        ):
            # Sent once and never answered readably (it may have gone through), or refused by
            # the platform as malformed (it did not, and the fault is ours): the loan's line
            # says which.
            await send(context.bot, chat_id, renewal_line(title, exc, context.today, lang))
            return
        await answer_library_error(update, context, exc, edit=False, card=account)
        return
    store = context.services.store
    await renewing.remember(store, chat_id, loan_id, tapped.due, outcome, account.number)
    # The new due date is on the loan's button; the list's summary line is redrawn.
    label = {_data(update): button_label(title, outcome, context.today, lang)}
    await edit_buttons(update, label, await _tap_summary(update, context, account, tapped))


async def _tap_summary(
    update: Update, context: Context, account: Card, tapped: RenewLoan
) -> Redraw | None:
    """The list's summary before and after one loan's renewal, from the status read again (the
    renewal moved one date, a refusal added one ⛔); None when it cannot be read now."""
    try:
        status = await Deadline().run(context.services.library.user(account.token))
    except LibraryError:
        return None
    store = context.services.store
    refusals = await store.renewal_refusals.refusals(context.chat_id, card=account.number)
    before_refusals = {key: value for key, value in refusals.items() if key != tapped.loan_id}
    old = parse_library_date(tapped.due) or tapped.due
    before = [
        loan.model_copy(update={"due_date": old}) if loan.loan_id == tapped.loan_id else loan
        for loan in status.loans
    ]
    several = len(await chat_cards(update, context)) > 1
    name = card_name(account, context.lang) if several else None
    return await summary_change(
        context, account.number, name, before, status.loans, before_refusals
    )


def _data(update: Update) -> str:
    query = update.callback_query
    return str(query.data or "") if query is not None else ""


def _sibling_ids(update: Update) -> list[str]:
    """The stored ids of the loan buttons in the tapped message."""
    query = update.callback_query
    message = query.message if query is not None else None
    if not isinstance(message, Message) or message.reply_markup is None:
        return []
    return [
        button.callback_data.partition(":")[2]
        for row in message.reply_markup.inline_keyboard
        for button in row
        if isinstance(button.callback_data, str)
        and button.callback_data.startswith(f"{RenewLoan.ACTION}:")
    ]


async def renew_all_callback(update: Update, context: Context) -> None:
    """ "Renew all": the message's loans of its card due within the window, each at most once."""
    lang = context.lang
    card = await _card_of(update, context, RenewAll)
    claimed = await claim_once(update, context, "borrower.renew.already", tapped=card)
    if claimed is None:
        return
    account, ref = claimed
    svc = context.services
    chat_id = context.chat_id
    deadline = Deadline()
    library = svc.library
    try:
        status = await deadline.run(library.user(account.token))
    except LibraryError as exc:
        await answer_library_error(update, context, exc, edit=False, card=account)
        return
    if not status.loans:
        await send(context.bot, chat_id, t(lang, "borrower.renew.empty"))
        return
    tapped = decode(ref.payload, RenewAll) or RenewAll()
    listed = set(tapped.loans) if tapped.loans is not None else None
    window = await _window(context, chat_id)
    # A paged /renew names its loan buttons (every page's); a digest's are all in its keyboard.
    sibling_ids = list(tapped.buttons) if tapped.buttons is not None else _sibling_ids(update)
    siblings = {
        button.loan_id: row
        for row in await svc.store.callbacks.callbacks_many(sibling_ids, chat_id)
        if (button := decode(row.payload, RenewLoan)) is not None
    }
    today = context.today
    refused_before = await svc.store.renewal_refusals.refusals(chat_id, card=account.number)
    done = await renewing.renew_due(
        svc.store,
        library,
        chat_id=chat_id,
        card=account.number,
        token=account.token,
        status=status,
        window=window,
        today=today,
        deadline=deadline,
        listed=listed,
        siblings=siblings,
    )
    if isinstance(done, TokenRejected):
        await answer_library_error(update, context, done, edit=False, card=account)
        return
    lines, labels = renewed_lines(done, lang, today)
    several = len(await chat_cards(update, context)) > 1
    name = card_name(account, lang) if several else None
    after = _renewed(status.loans, done)
    summary = await summary_change(
        context, account.number, name, status.loans, after, refused_before
    )
    await edit_buttons(update, labels, summary)
    header = t(lang, "borrower.renew.results")
    if several:
        header = f"{header}\n{heading(lang, card_name(account, lang))}"
    messages = split_messages(lines, header=header, separator="\n")
    await send_messages(update, context, messages)


def renewed_lines(done: RenewedDue, lang: str, today: dt.date) -> tuple[list[str], dict[str, str]]:
    """What renewing the due loans did, as lines: the counts (refusals remembered from before
    counted with the new ones, so counts and lines agree), each renewed loan with its new due
    date, then what needs the patron's attention with its due date; and the new labels of the
    loan buttons claimed on the way (callback data -> label)."""
    trouble: list[str] = []
    labels: dict[str, str] = {}
    counts = {"ok": 0, "refused": 0, "fault": 0, "unknown": 0}
    for tried in done.tried:
        counts[tried.kind] += 1
        title = _title(tried.loan, lang)
        if tried.kind != "ok":
            trouble.append(renewal_line(title, tried.outcome, today, lang, due=tried.loan.due_date))
        if tried.button is not None:
            labels[f"{RenewLoan.ACTION}:{tried.button}"] = button_label(
                title, tried.outcome, today, lang
            )
    for skipped in done.skipped:
        title = _title(skipped.loan, lang)
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
    later = done.later
    if later:
        names = ", ".join(shorten(_title(loan, lang), 40) for loan in later[:LEFT_ALONE_TITLES])
        if len(later) > LEFT_ALONE_TITLES:
            names += ", …"
        within = t(lang, "borrower.renew.days", days=done.window)
        lines.append(
            t(lang, "borrower.renew.left_alone", count=len(later), days=within, titles=names)
        )
    if not done.tried and not done.skipped:
        lines = [t(lang, "borrower.renew.nothing_due", days=done.window)]
    return lines, labels


def _renewed_lines(done: RenewedDue, lang: str, today: dt.date) -> list[str]:
    """The renewed loans' new due dates: a line per loan while few share a date, else one line
    per date naming the titles (a renewal counts from today, so most share one)."""
    by_date: dict[dt.date | str | None, list[Tried]] = {}
    for tried in done.tried:
        if tried.kind == "ok" and not isinstance(tried.outcome, LibraryError):
            by_date.setdefault(tried.outcome.return_date, []).append(tried)
    lines: list[str] = []
    for date, group in by_date.items():
        if not isinstance(date, dt.date) or len(group) <= RENEWED_ONE_BY_ONE:
            lines += [
                renewal_line(_title(tried.loan, lang), tried.outcome, today, lang)
                for tried in group
            ]
            continue
        titles = [shorten(_title(tried.loan, lang), 40) for tried in group]
        names = ", ".join(titles[:LEFT_ALONE_TITLES])
        if len(titles) > LEFT_ALONE_TITLES:
            names += ", …"
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


def away_days(words: Sequence[str]) -> int | None:
    """`/away <days>`: a whole number of days from 1 to `MAX_AWAY_DAYS`, else None."""
    if len(words) != 1 or not words[0].isascii() or not words[0].isdigit():
        return None
    days = int(words[0])
    return days if 1 <= days <= MAX_AWAY_DAYS else None


async def away_command(update: Update, context: Context) -> None:
    """`/away <days>`: before a trip, renew every loan due within that many days (each at most
    once, as "renew all" does), each card's with its own token, the cards side by side, and say
    what could not be renewed, and why (with several cards, in a section per card)."""
    lang = context.lang
    days = away_days(context.args or [])
    if days is None:
        await reply(update, context, t(lang, "notices.away.usage", max=MAX_AWAY_DAYS))
        return
    deadline = Deadline()
    shown = await read_cards(context, deadline=deadline)
    if shown is None:
        return
    statuses = shown.statuses
    if shown.single and not any(card.status and card.status.loans for card in statuses):
        await reply(update, context, t(lang, "borrower.renew.empty"))
        return
    chat_id = context.chat_id

    async def renew_card(card: CardStatus) -> list[str] | None:
        trouble = card.trouble(lang)
        if trouble is not None or card.status is None:
            return [trouble or ""]
        if not card.status.loans:
            return [t(lang, "lists.loans.none")]
        svc = context.services
        today = context.today
        done = await renewing.renew_due(
            svc.store,
            svc.library,
            chat_id=chat_id,
            card=card.card,
            token=card.account.token,
            status=card.status,
            window=days,
            today=today,
            deadline=deadline,
        )
        if isinstance(done, TokenRejected):
            if await context.services.store.lapse_card(card.account) is not None:
                lapsed.append(card.account)
            return None if shown.single else [t(lang, "lists.card_lapsed", name=card.name)]
        lapsing = await _lapsing(card.status.orders, today, days, context, deadline)
        return renewed_lines(done, lang, today)[0] + lapsing

    lapsed: list[Card] = []
    results = await asyncio.gather(*(renew_card(card) for card in statuses))
    # Every card whose login lapsed while renewing, named in one message.
    await tell_lapsed(context, lapsed, lang)
    lines: list[str] = []
    for card, found in zip(statuses, results, strict=True):
        if found is None:
            return  # the one card's token was refused: `tell_lapsed` told the patron
        if not shown.single:
            lines.append(("\n" if lines else "") + heading(lang, card.name))
        lines.extend(found)
    header = t(lang, "notices.away.header", count=days)
    await send_messages(update, context, split_messages(lines, header=header, separator="\n"))


async def _lapsing(
    holds: Sequence[Hold], today: dt.date, days: int, context: Context, deadline: Deadline
) -> list[str]:
    """The ready holds whose last pick-up day comes before the patron is back: one line each,
    so they can be collected before leaving."""
    lang = context.lang
    back = today + dt.timedelta(days=days)
    found = [
        (hold, last)
        for hold in holds
        if hold_is_ready(hold)
        and isinstance(last := hold.pick_up_expiry_date, dt.date)
        and last < back
    ]
    if not found:
        return []
    svc = context.services
    names = await svc.branches.lookup(svc.library, [h.pick_up_agency for h, _ in found], deadline)
    lines: list[str] = []
    for hold, last in found:
        place = hold.pick_up_agency or ""
        branch = names.get(place) or place or "?"
        date = format_date(last, lang, today=today)
        title = hold.title or t(lang, "render.untitled")
        lines.append(t(lang, "notices.away.lapses", title=title, branch=branch, date=date))
    return lines


# --- several cards ---------------------------------------------------------------------------


async def _card_of(
    update: Update, context: Context, kind: type[RenewLoan] | type[RenewAll]
) -> RenewLoan | RenewAll | None:
    """The tapped renew button, which names the card it acts for."""
    peek = await peek_callback(update, context)
    return decode(peek.payload, kind) if peek is not None else None


def _loan_key(listing: ListPage, card: int, loan_id: str) -> str:
    """A loan's key in `ListPage.buttons`: with several cards "<card>:<loan id>" (loan ids are
    the library's own, so two cards' could be the same); a one-card list keys by loan id."""
    return loan_id if listing.views is None else f"{card}:{loan_id}"


async def list_renew(
    update: Update,
    context: Context,
    listing: ListPage | None = None,
    page: int = 0,
    ref_id: str | None = None,
) -> None:
    """/renew: the loans, "renew all" and each open loan's button, a section per card (or the
    card the view shows) when the chat has several. The message's buttons are stored when it is
    first sent (`listing` None); a page or view tap shows them again, the loans read fresh."""
    view = listing.card if listing is not None else None
    shown = await read_cards(context, view)
    if shown is None:
        return
    store = context.services.store
    chat_id = context.chat_id
    statuses = shown.statuses
    refusals = {
        card.card: await store.renewal_refusals.refusals(chat_id, card=card.card)
        for card in statuses
    }
    if (listing is None or shown.single) and (
        not any(card.status and card.status.loans for card in statuses)
        and all(card.status is not None for card in statuses)
    ):
        await reply(update, context, t(context.lang, "borrower.renew.empty"))
        return
    fresh = listing is None
    if listing is None:
        listing, ref_id = await _store_renew(update, context, shown, refusals)
    await _show_renew(update, context, shown, refusals, listing, page, ref_id, fresh=fresh)


async def _store_renew(
    update: Update,
    context: Context,
    shown: Shown,
    refusals: Mapping[int, Mapping[str, Refusal]],
) -> tuple[ListPage, str | None]:
    """Store a new /renew: each card's "renew all" and loan buttons, and what pages it (with
    several cards the views, with one card a `ListPage` once it has more than a page). The
    message's listing, and the stored id ◀ ▶ of a one-card list point at.

    Every button of the message is stored now, whichever page shows it, so a loan has one
    single-use button however the patron pages. "Renew all" lists every loan, refused ones too,
    so it can say what it left alone, and knows every loan button to claim.
    """
    lang = context.lang
    keys = ListPage("renew", views=None if shown.single else {})
    payloads: list[Payload] = []
    mapped: dict[str, str] = {}
    heads: dict[str, str] = {}
    loans_listed = 0
    for card in shown.statuses:
        if card.status is None or not card.status.loans:
            continue
        loans = sort_loans(card.status.loans)
        loans_listed += len(loans)
        open_loans = [loan for loan in loans if refusal_for(loan, refusals[card.card]) is None]
        head = len(payloads)
        buttons = tuple(ButtonId.of(head + 1 + n) for n in range(len(open_loans)))
        heads[str(card.card)] = ButtonId.of(head)
        mapped.update(
            zip(
                (_loan_key(keys, card.card, loan.loan_id) for loan in open_loans),
                buttons,
                strict=True,
            )
        )
        cid = card.account.card_id
        payloads.append(RenewAll(tuple(loan.loan_id for loan in loans), buttons, card.card, cid))
        payloads.extend(renew_payload(loan, lang, card.card, cid) for loan in open_loans)
    if shown.single:
        # The row the ◀ ▶ buttons point at.
        paged = loans_listed > RENEW_PER_PAGE
        [renew_all] = heads.values()
        tail = [ListPage("renew", mapped, renew_all)] if paged else []
        ids = await store_payloads(update, context, [*payloads, *tail])
        stored = {key: ids[int(index)] for key, index in mapped.items()}
        listing = ListPage("renew", stored, ids[int(renew_all)])
        return listing, ids[-1] if paged else None
    cards = shown.cards
    views = view_payloads("renew", cards, offset=len(payloads), buttons=mapped, heads=heads)
    ids = await store_payloads(update, context, [*payloads, *views])
    views_of = {key: ids[int(index)] for key, index in view_ids(cards, len(payloads)).items()}
    listing = ListPage(
        "renew",
        {key: ids[int(index)] for key, index in mapped.items()},
        card=None,
        views=views_of,
        heads={key: ids[int(index)] for key, index in heads.items()},
    )
    return listing, None


async def _show_renew(
    update: Update,
    context: Context,
    shown: Shown,
    refusals: Mapping[int, Mapping[str, Refusal]],
    listing: ListPage,
    page: int,
    ref_id: str | None,
    *,
    fresh: bool,
) -> None:
    """One page of a /renew: with several cards a section per card, with one the card's summary
    under the header and the loans without a button under it."""
    lang, statuses = context.lang, shown.statuses
    store = context.services.store
    chat_id = context.chat_id
    today = context.today
    window = await _window(context, chat_id)
    mapped = listing.buttons or {}
    if listing.views is None:  # a one-card list: its one "renew all"
        heads = {str(card.card): listing.head for card in statuses[:1] if listing.head}
    else:
        heads = listing.heads or {}
    several = len(statuses) > 1
    every = [
        (card, loan)
        for card in statuses
        if card.status is not None
        for loan in sort_loans(card.status.loans)
    ]
    pages = max(1, -(-len(every) // RENEW_PER_PAGE))
    page = max(0, min(page, pages - 1))
    on_this_page = every[page * RENEW_PER_PAGE : (page + 1) * RENEW_PER_PAGE]
    used: set[str] = set()
    if not fresh:
        wanted = [
            mapped[key]
            for card, loan in on_this_page
            if (key := _loan_key(listing, card.card, loan.loan_id)) in mapped
        ]
        used = {
            row.id for row in await store.callbacks.callbacks_many(wanted, chat_id) if row.used_at
        }
    buttons: list[list[InlineKeyboardButton]] = []
    for card in statuses:
        head = heads.get(str(card.card))
        if head is not None and card.status is not None and card.status.loans:
            label = renew_all_label(lang, window)
            if several:
                label = t(lang, "lists.renew.all_of", label=label, name=card.name)
            buttons.append([ref_button(plain(label), RenewAll.ACTION, head)])
    lines: dict[int, list[str]] = {card.card: [] for card in statuses}
    for card, loan in on_this_page:
        button_id = mapped.get(_loan_key(listing, card.card, loan.loan_id))
        refusal = refusal_for(loan, refusals[card.card])
        line, text = _loan_row(loan, lang, refusal, button_id, used, today)
        if line is not None:
            lines[card.card].append(line)
            continue
        if button_id is None or text is None:
            continue
        if several:
            text = t(lang, "lists.button_of", label=text, name=card.name)
        buttons.append([ref_button(plain(text), RenewLoan.ACTION, button_id)])
    on_page = {card.card for card, _ in on_this_page}
    parts: list[str] = [t(lang, "borrower.renew.header", count=len(every))]
    for card in statuses:
        trouble = card.trouble(lang)
        if trouble is not None or card.status is None:
            parts.append(f"{heading(lang, card.name)}\n{trouble or ''}")
            continue
        loans = card.status.loans
        if not loans:
            parts.append(f"{heading(lang, card.name)}\n{t(lang, 'lists.loans.none')}")
            continue
        if card.card not in on_page:
            continue
        refused = sum(1 for loan in loans if refusal_for(loan, refusals[card.card]) is not None)
        summary = loans_summary(loans, today, lang, window, refused)
        if shown.single:
            parts[0] = f"{parts[0]}\n{summary}"
            parts.extend(["\n".join(lines[card.card])] if lines[card.card] else [])
            continue
        lead = SEP.join((t(lang, "lists.loans.count", count=len(loans)), summary))
        parts.append("\n".join((heading(lang, card.name), lead, *lines[card.card])))
    if listing.views is None:  # a one-card list pages through its own stored row
        if pages > 1 and ref_id is not None:
            buttons.append(page_row(lang, ref_id, page, pages))
    else:
        views = listing.views or {}
        if pages > 1:
            buttons.append(page_row(lang, views[str(listing.card or ALL)], page, pages))
        buttons.extend(view_rows(lang, shown.cards, views, listing.card))
    [text, *_] = split_messages(["\n\n".join(parts)])
    await reply(update, context, text, buttons=buttons)


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("renew", renew_command),
        CommandHandler("away", away_command),
        CallbackQueryHandler(renew_callback, pattern=rf"^{RenewLoan.ACTION}:"),
        CallbackQueryHandler(renew_all_callback, pattern=rf"^{RenewAll.ACTION}:"),
    ]
