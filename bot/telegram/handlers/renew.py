"""/renew: the loans with a button each and "renew all"; each result is reported.

A list longer than a page (`RENEW_PER_PAGE`) opens with a summary and pages through one edited
message (◀ ▶); every loan's button is stored when the list is sent, so each page shows the
same buttons. The `renew` (`buttons.RenewLoan`) and `renewall` (`buttons.RenewAll`) buttons
are also put in reminder digests (`ui.renew_buttons`). Each loan is tried at most once per
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
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.error import BadRequest as TelegramBadRequest
from telegram.error import TelegramError
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from bot.library.deadline import Deadline
from bot.library.errors import LibraryError, Refused, ServiceUnavailable, TokenRejected
from bot.rules.renewals import due_key, raw_reason, refusal_for, renew_window
from bot.rules.urgency import sort_loans
from bot.services import calendar, services
from bot.telegram.buttons import ButtonId, ListPage, Payload, RenewAll, RenewLoan, decode
from bot.telegram.cards import card_name, require_cards
from bot.telegram.handlers.cardlists import (
    ALL,
    CardStatus,
    answer_card_error,
    card_number,
    chat_cards,
    fetch_cards,
    for_card,
    forget_card,
    heading,
    kept_cards,
    only_card,
    shown_cards,
    view_ids,
    view_payloads,
    view_rows,
)
from bot.telegram.handlers.common import borrower_status, loans_status
from bot.telegram.ui import (
    SHORT_TITLE,
    Context,
    answer_library_error,
    chat_and_lang,
    chat_id_of,
    claim_once,
    lang_of,
    page_row,
    peek_callback,
    plain,
    ref_button,
    renew_payload,
    reply,
    require_account,
    send,
    send_messages,
    store_payloads,
    today_in,
)
from bot.texts import Raw, t
from bot.texts.formatting import format_date, shorten, split_messages
from bot.texts.render import SEP, loans_summary, reason_text

if TYPE_CHECKING:
    from bot.library.models import BorrowerStatus, Loan, RenewResult
    from storage.store import Account, CallbackRef, Refusal

log = logging.getLogger(__name__)

# Renewals in flight at once for "renew all": quick for 60+ loans, gentle on the platform.
RENEW_CONCURRENCY = 6
# The longest trip /away renews for (a loan period is rarely longer than a month or two).
MAX_AWAY_DAYS = 60
# Titles named in "left alone" before "…".
LEFT_ALONE_TITLES = 8


def result_line(
    title: str,
    outcome: RenewResult | LibraryError,
    today: dt.date,
    lang: str,
) -> str:
    """One loan's renewal as a line: new due date, the refusal in words, or no answer."""
    if isinstance(outcome, Refused):
        reason = reason_text(raw_reason(outcome), lang)
        return t(lang, "borrower.renew.refused", title=title, reason=Raw(reason))
    if isinstance(outcome, LibraryError):
        return t(lang, "borrower.renew.no_answer", title=title)
    if outcome.return_date is None:
        return t(lang, "borrower.renew.ok_no_date", title=title)
    date = format_date(outcome.return_date, lang, today=today)
    return t(lang, "borrower.renew.ok", title=title, date=date)


def button_label(title: str, outcome: RenewResult | LibraryError, today: dt.date, lang: str) -> str:
    """The tapped loan's button after the answer (plain text: buttons are not HTML)."""
    short = Raw(shorten(title, SHORT_TITLE))
    if isinstance(outcome, Refused):
        reason = Raw(shorten(plain(reason_text(raw_reason(outcome), lang)), 40))
        return plain(t(lang, "borrower.renew.button_refused", title=short, reason=reason))
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


def _title(loan: Loan, lang: str) -> str:
    return loan.title or t(lang, "render.untitled")


async def remember(
    context: Context,
    chat_id: int,
    loan_id: str,
    due: str,
    outcome: RenewResult | LibraryError,
    card: int = 1,
) -> None:
    """Keep a refusal (so the loan is marked and offered no button); forget it on success."""
    store = services(context).store
    if isinstance(outcome, Refused):
        await store.record_refusal(chat_id, loan_id, due, raw_reason(outcome), card=card)
    elif not isinstance(outcome, LibraryError):
        await store.clear_refusal(chat_id, loan_id, card=card)
        if isinstance(outcome.return_date, dt.date):
            await calendar.renewed(store, chat_id, loan_id, outcome.return_date, card)


async def edit_buttons(update: Update, labels: Mapping[str, str]) -> None:
    """Relabel the tapped message's buttons in place (callback data -> new label)."""
    query = update.callback_query
    message = query.message if query is not None else None
    if not labels or not isinstance(message, Message) or message.reply_markup is None:
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
        await message.edit_reply_markup(InlineKeyboardMarkup(rows))
    except TelegramBadRequest as exc:
        if "not modified" not in exc.message.lower():
            log.warning("renew buttons not updated: %s", exc.message)
    except TelegramError as exc:
        log.warning("renew buttons not updated: %s", type(exc).__name__)


# Loans on a page of /renew, each with its button (or its ⛔ line).
RENEW_PER_PAGE = 10


async def renew_command(update: Update, context: Context) -> None:
    cards = await chat_cards(update, context)
    if len(cards) > 1:
        await card_renew(update, context)
        return
    card = card_number(cards)
    started = await loans_status(update, context, "borrower.renew.empty", cards=cards)
    if started is None:
        return
    lang, status = started
    svc = services(context)
    today = today_in(context)
    loans = sort_loans(status.loans)
    refusals = await svc.store.refusals(chat_id_of(update), card)
    open_loans = [loan for loan in loans if refusal_for(loan, refusals) is None]
    # Every button of the message is stored now, whichever page shows it, so a loan has one
    # single-use button however the patron pages. "Renew all" lists every loan, refused ones
    # too, so it can say what it left alone, and knows every loan button to claim.
    loan_buttons = tuple(ButtonId.of(1 + index) for index in range(len(open_loans)))
    mapped: dict[str, str] = dict(
        zip((loan.loan_id for loan in open_loans), loan_buttons, strict=True)
    )
    payloads: list[Payload] = [
        RenewAll(tuple(loan.loan_id for loan in loans), loan_buttons, card),
        *(renew_payload(loan, lang, card) for loan in open_loans),
    ]
    paged = len(loans) > RENEW_PER_PAGE
    if paged:  # the row the ◀ ▶ buttons point at
        payloads.append(ListPage("renew", mapped, ButtonId.of(0)))
    ids = await store_payloads(update, context, payloads)
    listing = ListPage("renew", {loan_id: ids[int(i)] for loan_id, i in mapped.items()}, ids[0])
    ref_id = ids[-1] if paged else None
    await _show(update, context, lang, status.loans, 0, ref_id, listing, today, fresh=True)


async def show_page(
    update: Update, context: Context, page: int, ref_id: str, listing: ListPage
) -> None:
    """Page `page` of a /renew message, the loans read fresh, its stored buttons kept."""
    started = await loans_status(update, context, "borrower.renew.empty", edit=False)
    if started is None:
        return
    lang, status = started
    await _show(update, context, lang, status.loans, page, ref_id, listing, today_in(context))


async def _show(
    update: Update,
    context: Context,
    lang: str,
    loans: Sequence[Loan],
    page: int,
    ref_id: str | None,
    listing: ListPage,
    today: dt.date,
    *,
    fresh: bool = False,
) -> None:
    svc = services(context)
    chat_id = chat_id_of(update)
    ordered = sort_loans(loans)
    refusals = await svc.store.refusals(chat_id, await only_card(update, context))
    mapped = listing.buttons or {}
    pages = max(1, -(-len(ordered) // RENEW_PER_PAGE))
    page = max(0, min(page, pages - 1))
    shown = ordered[page * RENEW_PER_PAGE : (page + 1) * RENEW_PER_PAGE]
    used: set[str] = set()
    if not fresh:
        wanted = [mapped[loan.loan_id] for loan in shown if loan.loan_id in mapped]
        rows = await svc.store.callbacks_many(wanted, chat_id)
        used = {row.id for row in rows if row.used_at is not None}
    lines: list[str] = []
    buttons: list[list[InlineKeyboardButton]] = []
    if listing.head is not None:
        buttons.append([ref_button(t(lang, "borrower.renew.all"), RenewAll.ACTION, listing.head)])
    for loan in shown:
        button_id = mapped.get(loan.loan_id)
        line, label = _loan_row(loan, lang, refusal_for(loan, refusals), button_id, used, today)
        if line is not None:
            lines.append(line)
        elif button_id is not None and label is not None:
            buttons.append([ref_button(plain(label), RenewLoan.ACTION, button_id)])
    if pages > 1 and ref_id is not None:
        buttons.append(page_row(lang, ref_id, page, pages))
    refused = sum(1 for loan in ordered if refusal_for(loan, refusals) is not None)
    window = await _window(context, chat_id)
    header = "\n".join(
        (
            t(lang, "borrower.renew.header", count=len(ordered)),
            loans_summary(ordered, today, lang, window, refused),
        )
    )
    text = "\n\n".join((header, "\n".join(lines))) if lines else header
    [text, *_] = split_messages([text])  # bounded by the page size; never over the limit
    await reply(update, context, text, buttons=buttons)


async def _window(context: Context, chat_id: int) -> int:
    svc = services(context)
    chat = await svc.store.chat(chat_id)
    return renew_window(chat.reminders_enabled, chat.thresholds(svc.settings.REMINDER_DAYS))


async def renew_callback(update: Update, context: Context) -> None:
    """A loan's "renew" button (from /renew or a reminder digest), with its card's token."""
    lang = await lang_of(update, context)
    card = await _card_of(update, context, RenewLoan)
    claimed = await claim_once(
        update, context, lang, "borrower.renew.already", require=for_card(card)
    )
    if claimed is None:
        return
    account, ref = claimed
    chat_id = chat_id_of(update)
    tapped = decode(ref.payload, RenewLoan)
    if tapped is None:
        await send(context.bot, chat_id, t(lang, "common.stale_button"))
        return
    title = tapped.title or t(lang, "render.untitled")
    loan_id = tapped.loan_id
    outcome: RenewResult | LibraryError
    try:
        outcome = await Deadline().run(services(context).library.renew(account.token, loan_id))
    except Refused as exc:
        outcome = exc
    except LibraryError as exc:
        if not isinstance(exc, TokenRejected):
            await edit_buttons(
                update, {_data(update): button_label(title, exc, today_in(context), lang)}
            )
        if isinstance(exc, ServiceUnavailable) and exc.status is None:
            # Sent once and never answered readably: it may have gone through.
            await send(context.bot, chat_id, result_line(title, exc, today_in(context), lang))
            return
        await answer_card_error(update, context, exc, lang, account)
        return
    await remember(context, chat_id, loan_id, tapped.due, outcome, account.card)
    await edit_buttons(
        update, {_data(update): button_label(title, outcome, today_in(context), lang)}
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
    lang = await lang_of(update, context)
    card = await _card_of(update, context, RenewAll)
    claimed = await claim_once(
        update, context, lang, "borrower.renew.already", require=for_card(card)
    )
    if claimed is None:
        return
    account, ref = claimed
    svc = services(context)
    chat_id = chat_id_of(update)
    deadline = Deadline()
    library = svc.library
    try:
        status = await deadline.run(library.user(account.token))
    except LibraryError as exc:
        await answer_card_error(update, context, exc, lang, account)
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
        for row in await svc.store.callbacks_many(sibling_ids, chat_id)
        if (button := decode(row.payload, RenewLoan)) is not None
    }
    done = await renew_due(
        context,
        chat_id,
        account.token,
        status,
        lang,
        window=window,
        deadline=deadline,
        listed=listed,
        siblings=siblings,
        card=account.card,
    )
    if isinstance(done, TokenRejected):
        await answer_card_error(update, context, done, lang, account)
        return
    lines, labels = done
    await edit_buttons(update, labels)
    header = t(lang, "borrower.renew.results")
    if len(await chat_cards(update, context)) > 1:
        header = f"{header}\n{heading(lang, card_name(account, lang))}"
    messages = split_messages(lines, header=header, separator="\n")
    await send_messages(update, context, messages)


async def renew_due(
    context: Context,
    chat_id: int,
    token: str,
    status: BorrowerStatus,
    lang: str,
    *,
    window: int,
    deadline: Deadline,
    listed: set[str] | None = None,
    siblings: Mapping[str, CallbackRef] | None = None,
    card: int = 1,
) -> tuple[list[str], dict[str, str]] | TokenRejected:
    """Renew the loans due within `window` days (of `listed`, when given), each at most once:
    the result lines (renewed, refused and why, unknown), and new labels for the loan buttons
    claimed from `siblings` (loan id -> its button in the tapped message). The loans are card
    `card`'s, and `token` is its token."""
    svc = services(context)
    library = svc.library
    refusals = await svc.store.refusals(chat_id, card=card)
    siblings = siblings or {}
    today = today_in(context)
    todo: list[tuple[Loan, str | None]] = []  # the loan, and its button's data if it has one
    notes: list[str] = []
    later: list[Loan] = []
    for loan in sort_loans(status.loans):
        if listed is not None and loan.loan_id not in listed:
            continue  # not in this message: a newer loan is not "all" of an older list
        title = _title(loan, lang)
        found: Refusal | None = refusal_for(loan, refusals)
        if found is not None:
            reason = reason_text(found.reason, lang)
            notes.append(t(lang, "borrower.renew.refused", title=title, reason=Raw(reason)))
            continue
        due = loan.due_date
        if not isinstance(due, dt.date):
            if due:
                notes.append(t(lang, "borrower.renew.left_unreadable", title=title, date=due))
            continue
        if (due - today).days > window:
            later.append(loan)
            continue
        sibling = siblings.get(loan.loan_id)
        if sibling is not None:
            if await svc.store.claim_callback(sibling.id, chat_id) is None:
                notes.append(t(lang, "borrower.renew.tried_here", title=title))
                continue
            todo.append((loan, f"{RenewLoan.ACTION}:{sibling.id}"))
        else:
            todo.append((loan, None))
    outcomes = await _renew_each(token, [loan for loan, _ in todo], library, deadline)
    if isinstance(outcomes, TokenRejected):
        return outcomes
    # The counts, then only what needs the patron's attention: the renewed loans' new dates
    # are on their buttons and in /loans.
    lines: list[str] = []
    labels: dict[str, str] = {}
    counts = {"ok": 0, "refused": 0, "unknown": 0}
    for (loan, data), outcome in zip(todo, outcomes, strict=True):
        title = _title(loan, lang)
        await remember(context, chat_id, loan.loan_id, due_key(loan), outcome, card)
        if isinstance(outcome, Refused):
            counts["refused"] += 1
        elif isinstance(outcome, LibraryError):
            counts["unknown"] += 1
        else:
            counts["ok"] += 1
            continue
        lines.append(result_line(title, outcome, today, lang))
        if data is not None:
            labels[data] = button_label(title, outcome, today, lang)
    for (loan, data), outcome in zip(todo, outcomes, strict=True):
        if data is not None and data not in labels:
            labels[data] = button_label(_title(loan, lang), outcome, today, lang)
    if todo:
        lines.insert(0, _counts(counts, lang))
    lines.extend(notes)
    if later:
        names = ", ".join(shorten(_title(loan, lang), 40) for loan in later[:LEFT_ALONE_TITLES])
        if len(later) > LEFT_ALONE_TITLES:
            names += ", …"
        within = t(lang, "borrower.renew.days", days=window)
        lines.append(
            t(lang, "borrower.renew.left_alone", count=len(later), days=within, titles=names)
        )
    if not todo and not notes:
        lines = [t(lang, "borrower.renew.nothing_due", days=window)]
    return lines, labels


def _counts(counts: Mapping[str, int], lang: str) -> str:
    """ "✅ 30 renewed · ⛔ 2 refused · ⚠️ 1 without an answer" (the kinds that happened)."""
    parts = [
        t(lang, f"borrower.renew.count_{kind}", count=count)
        for kind, count in counts.items()
        if count
    ]
    return SEP.join(parts)


async def _renew_each(
    token: str, loans: Sequence[Loan], library: Any, deadline: Deadline
) -> list[RenewResult | LibraryError] | TokenRejected:
    """Renew each loan once, a few at a time; a loan without an answer in time is unknown."""
    gate = asyncio.Semaphore(RENEW_CONCURRENCY)

    async def renew_one(loan: Loan) -> RenewResult | LibraryError:
        async with gate:
            try:
                result: RenewResult = await library.renew(token, loan.loan_id)
            except TokenRejected:
                raise
            except LibraryError as exc:
                return exc
            return result

    if not loans:
        return []
    tasks = [asyncio.create_task(renew_one(loan)) for loan in loans]
    done, pending = await asyncio.wait(tasks, timeout=deadline.remaining())
    for task in pending:
        task.cancel()
    for task in done:
        error = task.exception()
        if isinstance(error, TokenRejected):
            return error
        if error is not None:
            raise error
    return [
        task.result() if task in done else ServiceUnavailable("no answer in time", code="timeout")
        for task in tasks
    ]


def away_days(words: Sequence[str]) -> int | None:
    """`/away <days>`: a whole number of days from 1 to `MAX_AWAY_DAYS`, else None."""
    if len(words) != 1 or not words[0].isascii() or not words[0].isdigit():
        return None
    days = int(words[0])
    return days if 1 <= days <= MAX_AWAY_DAYS else None


async def away_command(update: Update, context: Context) -> None:
    """`/away <days>`: before a trip, renew every loan due within that many days (each at most
    once, as "renew all" does) and say what could not be renewed, and why."""
    lang = await lang_of(update, context)
    days = away_days(context.args or [])
    if days is None:
        await reply(update, context, t(lang, "notices.away.usage", max=MAX_AWAY_DAYS))
        return
    if len(await chat_cards(update, context)) > 1:
        await _away_cards(update, context, lang, days)
        return
    account = await require_account(update, context)
    if account is None:
        return
    deadline = Deadline()
    chat_id = chat_id_of(update)
    status = await borrower_status(update, context, account, lang, deadline)
    if status is None:
        return
    if not status.loans:
        await reply(update, context, t(lang, "borrower.renew.empty"))
        return
    done = await renew_due(
        context,
        chat_id,
        account.token,
        status,
        lang,
        window=days,
        deadline=deadline,
        card=account.card,
    )
    if isinstance(done, TokenRejected):
        await answer_library_error(update, context, done, lang, edit=False, card=account.card)
        return
    lines, _ = done
    header = t(lang, "notices.away.header", count=days)
    await send_messages(update, context, split_messages(lines, header=header, separator="\n"))


# --- several cards ---------------------------------------------------------------------------


async def _card_of(update: Update, context: Context, kind: type[RenewLoan] | type[RenewAll]) -> int:
    """The card a tapped renew button acts for (a button stored before cards: card 1)."""
    peek = await peek_callback(update, context)
    tapped = decode(peek.payload, kind) if peek is not None else None
    return tapped.card if tapped is not None else 1


def _loan_key(card: int, loan_id: str) -> str:
    """A loan's key in a /renew of several cards (`ListPage.buttons`): loan ids are the library's
    own, so two cards' could be the same."""
    return f"{card}:{loan_id}"


async def card_renew(
    update: Update, context: Context, listing: ListPage | None = None, page: int = 0
) -> None:
    """/renew with several cards: a section per card (or the card the view shows), "renew all"
    per card and each open loan's button with its card. The message's buttons are stored when it
    is first sent (`listing` None); a page or view tap shows them again, the loans read fresh."""
    chat, lang = await chat_and_lang(update, context)
    cards = await require_cards(update, context)
    if not cards:
        return
    view = listing.card if listing is not None else None
    statuses = await fetch_cards(context, shown_cards(cards, view), lang, Deadline(), chat)
    store = services(context).store
    chat_id = chat_id_of(update)
    refusals = {card.card: await store.refusals(chat_id, card=card.card) for card in statuses}
    if listing is None:
        if not any(card.status and card.status.loans for card in statuses) and all(
            card.status is not None for card in statuses
        ):
            await reply(update, context, t(lang, "borrower.renew.empty"))
            return
        listing = await _store_renew(update, context, lang, cards, statuses, refusals)
        fresh = True
    else:
        fresh = False
    cards = kept_cards(cards, statuses)
    await _show_cards(update, context, lang, cards, statuses, refusals, listing, page, fresh=fresh)


async def _store_renew(
    update: Update,
    context: Context,
    lang: str,
    cards: Sequence[Account],
    statuses: Sequence[CardStatus],
    refusals: Mapping[int, Mapping[str, Refusal]],
) -> ListPage:
    """Store a new /renew of several cards: each card's "renew all" and loan buttons, and the
    views; the view of every card, as stored."""
    payloads: list[Payload] = []
    mapped: dict[str, str] = {}
    heads: dict[str, str] = {}
    for card in statuses:
        if card.status is None or not card.status.loans:
            continue
        loans = sort_loans(card.status.loans)
        open_loans = [loan for loan in loans if refusal_for(loan, refusals[card.card]) is None]
        head = len(payloads)
        buttons = tuple(ButtonId.of(head + 1 + n) for n in range(len(open_loans)))
        heads[str(card.card)] = ButtonId.of(head)
        mapped.update(
            zip((_loan_key(card.card, loan.loan_id) for loan in open_loans), buttons, strict=True)
        )
        payloads.append(RenewAll(tuple(loan.loan_id for loan in loans), buttons, card.card))
        payloads.extend(renew_payload(loan, lang, card.card) for loan in open_loans)
    views = view_payloads("renew", cards, offset=len(payloads), buttons=mapped, heads=heads)
    ids = await store_payloads(update, context, [*payloads, *views])
    views_of = {key: ids[int(index)] for key, index in view_ids(cards, len(payloads)).items()}
    return ListPage(
        "renew",
        {key: ids[int(index)] for key, index in mapped.items()},
        card=None,
        views=views_of,
        heads={key: ids[int(index)] for key, index in heads.items()},
    )


async def _show_cards(
    update: Update,
    context: Context,
    lang: str,
    cards: Sequence[Account],
    statuses: Sequence[CardStatus],
    refusals: Mapping[int, Mapping[str, Refusal]],
    listing: ListPage,
    page: int,
    *,
    fresh: bool,
) -> None:
    """One page of a /renew of several cards."""
    store = services(context).store
    chat_id = chat_id_of(update)
    today = today_in(context)
    window = await _window(context, chat_id)
    mapped = listing.buttons or {}
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
    shown = every[page * RENEW_PER_PAGE : (page + 1) * RENEW_PER_PAGE]
    used: set[str] = set()
    if not fresh:
        wanted = [
            mapped[key]
            for card, loan in shown
            if (key := _loan_key(card.card, loan.loan_id)) in mapped
        ]
        used = {row.id for row in await store.callbacks_many(wanted, chat_id) if row.used_at}
    buttons: list[list[InlineKeyboardButton]] = []
    for card in statuses:
        head = heads.get(str(card.card))
        if head is not None and card.status is not None and card.status.loans:
            label = t(lang, "borrower.renew.all")
            if several:
                label = t(lang, "lists.renew.all_of", label=label, name=card.name)
            buttons.append([ref_button(plain(label), RenewAll.ACTION, head)])
    lines: dict[int, list[str]] = {card.card: [] for card in statuses}
    for card, loan in shown:
        button_id = mapped.get(_loan_key(card.card, loan.loan_id))
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
    on_page = {card.card for card, _ in shown}
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
        lead = SEP.join((t(lang, "lists.loans.count", count=len(loans)), summary))
        parts.append("\n".join((heading(lang, card.name), lead, *lines[card.card])))
    views = listing.views or {}
    if pages > 1:
        buttons.append(page_row(lang, views[str(listing.card or ALL)], page, pages))
    buttons.extend(view_rows(lang, cards, views, listing.card))
    [text, *_] = split_messages(["\n\n".join(parts)])
    await reply(update, context, text, buttons=buttons)


async def _away_cards(update: Update, context: Context, lang: str, days: int) -> None:
    """`/away <days>` with several cards: every card's loans due within `days` renewed with its
    own token, the cards side by side; the results in a section per card."""
    chat, _ = await chat_and_lang(update, context)
    cards = await require_cards(update, context)
    if not cards:
        return
    deadline = Deadline()
    chat_id = chat_id_of(update)
    statuses = await fetch_cards(context, cards, lang, deadline, chat)

    async def renew_card(card: CardStatus) -> list[str]:
        trouble = card.trouble(lang)
        if trouble is not None or card.status is None:
            return [trouble or ""]
        if not card.status.loans:
            return [t(lang, "lists.loans.none")]
        done = await renew_due(
            context,
            chat_id,
            card.account.token,
            card.status,
            lang,
            window=days,
            deadline=deadline,
            card=card.card,
        )
        if isinstance(done, TokenRejected):
            await forget_card(context, card.account, lang)
            return [t(lang, "lists.card_forgotten", name=card.name)]
        return done[0]

    results = await asyncio.gather(*(renew_card(card) for card in statuses))
    lines: list[str] = []
    for card, found in zip(statuses, results, strict=True):
        lines.append(("\n" if lines else "") + heading(lang, card.name))
        lines.extend(found)
    header = t(lang, "notices.away.header", count=days)
    await send_messages(update, context, split_messages(lines, header=header, separator="\n"))


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("renew", renew_command),
        CommandHandler("away", away_command),
        CallbackQueryHandler(renew_callback, pattern=rf"^{RenewLoan.ACTION}:"),
        CallbackQueryHandler(renew_all_callback, pattern=rf"^{RenewAll.ACTION}:"),
    ]
