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
import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from telegram import InlineKeyboardButton, Message, Update
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from bot.actions import buttons as callbacks
from bot.actions import logins, outcomes, renewing
from bot.library.deadline import Deadline
from bot.library.errors import LibraryError
from bot.library.models import parse_library_date
from bot.rules.renewals import open_loans, refusal_for
from bot.rules.urgency import due_counts, sort_loans
from bot.telegram.buttons import ButtonId, ListPage, Payload, RenewAll, RenewLoan, decode
from bot.telegram.cards import require_card, tell_lapsed
from bot.telegram.context import Context
from bot.telegram.failures import answer_library_error
from bot.telegram.handlers.borrower import renew_window_of
from bot.telegram.handlers.cardlists import (
    ALL,
    CardStatus,
    Shown,
    chat_cards,
    heading,
    lapsed_logins,
    named_view,
    read_cards,
    view_ids,
    view_payloads,
    view_rows,
)
from bot.telegram.keyboards import (
    SHORT_TITLE,
    page_row,
    ref_button,
    renew_payload,
    store_payloads,
    tapped_once,
)
from bot.telegram.renewals import Redraw, button_label, edit_buttons, renew_all_label, renewed_lines
from bot.telegram.replies import plain, reply, send, send_messages
from bot.texts import Raw, t
from bot.texts.cards import card_name
from bot.texts.formatting import format_date, shorten, split_messages
from bot.texts.render import SEP, TITLE_LIMIT, loans_summary, reason_text, renewal_line

if TYPE_CHECKING:
    from bot.actions.vocabulary import Card, Refusal
    from bot.library.models import Hold, Loan

log = logging.getLogger(__name__)

# The longest trip /away renews for (a loan period is rarely longer than a month or two).
MAX_AWAY_DAYS = 60


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
    """The loan's title as every list shows it: within `TITLE_LIMIT`, so one long title cannot
    push the rest of the page (other cards, their login buttons) out of its message."""
    return shorten(loan.title, TITLE_LIMIT) or t(lang, "render.untitled")


async def summary_change(
    context: Context,
    number: int,
    name: str | None,
    before: Sequence[Loan],
    after: Sequence[Loan],
    refused_before: Mapping[str, Refusal],
) -> Redraw:
    """The card's /renew summary before and after renewing (the refusals now remembered)."""
    lang, today = context.lang, context.today
    window = await renew_window_of(context)
    refused_after = await renewing.refusals(context.services, context.chat_id, number)

    def line(loans: Sequence[Loan], refusals: Mapping[str, Refusal]) -> str:
        refused = sum(1 for loan in loans if refusal_for(loan, refusals) is not None)
        return loans_summary(loans, today, lang, window, refused)

    return Redraw(line(before, refused_before), line(after, refused_after), name)


# Loans on a page of /renew, each with its button (or its ⛔ line).
RENEW_PER_PAGE = 10


async def renew_command(update: Update, context: Context) -> None:
    """/renew, or `/renew Karen`: that card's view of the family's list, as /loans takes it."""
    found, view = await named_view(update, context)
    if found:
        await list_renew(update, context, named=view)


async def renew_callback(update: Update, context: Context) -> None:
    """A loan's "renew" button (from /renew or a reminder digest): `renewing.renew_loan`, its
    result on the loan's button and in the list's summary line."""
    lang = context.lang
    ref = await tapped_once(update, context, "borrower.renew.already")
    if ref is None:
        return
    tapped = decode(ref.payload, RenewLoan)
    if tapped is None:
        await send(context.bot, context.chat_id, t(lang, "common.stale_button"))
        return
    svc = context.services
    result = await renewing.renew_loan(
        svc,
        chat_id=context.chat_id,
        button=ref.id,
        action=RenewLoan.ACTION,
        user_id=ref.user_id,
    )
    await _tell_renewal(update, context, tapped, result)


async def _tell_renewal(
    update: Update, context: Context, tapped: RenewLoan, result: renewing.LoanRenewal
) -> None:
    """A single loan's renewal in the chat: the tapped button relabelled (✅ and the new date,
    ⛔ and the reason, ⚠️), and a line where the outcome needs one."""
    lang, chat_id = context.lang, context.chat_id
    if isinstance(result, outcomes.Already):
        await send(context.bot, chat_id, t(lang, "borrower.renew.already"))
        return
    if isinstance(result, outcomes.CardGone) or (
        isinstance(result, outcomes.LoginLapsed) and result.error is None
    ):
        # The chat's own words for a card that is gone or lapsed (`cards.require_card`).
        await require_card(context, tapped=tapped)
        return
    if isinstance(result, outcomes.LoginLapsed):
        assert result.error is not None
        await answer_library_error(update, context, result.error, edit=False, card=result.card)
        return
    title = result.title or t(lang, "render.untitled")
    # The button keeps the card's name where it was shown with one (a family's list).
    named = plain(t(lang, "lists.button_of", label="", name=card_name(result.card, lang)))
    shown = _tapped_label(update)
    prefix = named if shown is not None and shown.startswith(named) else ""

    def relabel(label: str) -> dict[str, str]:
        return {_data(update): f"{prefix}{label}"}

    if isinstance(result, renewing.Failed | renewing.NotSent):
        await edit_buttons(update, relabel(button_label(title, result.error, context.today, lang)))
        await answer_library_error(update, context, result.error, edit=False, card=result.card)
        return
    if isinstance(result, renewing.NoAnswer | renewing.OurFault):
        # Sent once and never answered readably (it may have gone through), or refused by the
        # platform as malformed (it did not, and the fault is ours): the loan's line says which.
        await edit_buttons(update, relabel(button_label(title, result.error, context.today, lang)))
        await send(context.bot, chat_id, renewal_line(title, result.error, context.today, lang))
        return
    outcome = result.error if isinstance(result, renewing.RenewRefused) else result.result
    # The new due date is on the loan's button; the list's summary line is redrawn.
    was = parse_library_date(result.due) or None
    label = relabel(button_label(title, outcome, context.today, lang, was))
    await edit_buttons(update, label, await _tap_summary(update, context, result.card, tapped))


async def _tap_summary(
    update: Update, context: Context, card: Card, tapped: RenewLoan
) -> Redraw | None:
    """The list's summary before and after one loan's renewal, from the status read again (the
    renewal moved one date, a refusal added one ⛔); None when it cannot be read now."""
    try:
        status = await Deadline().run(context.services.library.user(card.token))
    except LibraryError:
        return None
    svc = context.services
    refusals = await renewing.refusals(svc, context.chat_id, card.number)
    before_refusals = {key: value for key, value in refusals.items() if key != tapped.loan_id}
    old = parse_library_date(tapped.due) or tapped.due
    before = [
        loan.model_copy(update={"due_date": old}) if loan.loan_id == tapped.loan_id else loan
        for loan in status.loans
    ]
    several = len(await chat_cards(update, context)) > 1
    name = card_name(card, context.lang) if several else None
    return await summary_change(context, card.number, name, before, status.loans, before_refusals)


def _data(update: Update) -> str:
    query = update.callback_query
    return str(query.data or "") if query is not None else ""


def _tapped_label(update: Update) -> str | None:
    """The label of the tapped button, as the message showed it."""
    data = _data(update)
    return next(
        (button.text for button in _buttons_of(update) if button.callback_data == data), None
    )


def _buttons_of(update: Update) -> list[InlineKeyboardButton]:
    """The buttons of the tapped message."""
    query = update.callback_query
    message = query.message if query is not None else None
    if not isinstance(message, Message) or message.reply_markup is None:
        return []
    return [button for row in message.reply_markup.inline_keyboard for button in row]


def _sibling_ids(update: Update) -> list[str]:
    """The stored ids of the loan buttons in the tapped message."""
    return [
        button.callback_data.partition(":")[2]
        for button in _buttons_of(update)
        if isinstance(button.callback_data, str)
        and button.callback_data.startswith(f"{RenewLoan.ACTION}:")
    ]


async def renew_all_callback(update: Update, context: Context) -> None:
    """ "Renew all": `renewing.renew_all` of the message's loans of its card due within the
    window; the results in a message, the claimed loan buttons relabelled, the summary
    redrawn."""
    lang = context.lang
    ref = await tapped_once(update, context, "borrower.renew.all_already")
    if ref is None:
        return
    svc = context.services
    chat_id = context.chat_id
    today = context.today
    result = await renewing.renew_all(
        svc,
        chat_id=chat_id,
        button=ref.id,
        action=RenewAll.ACTION,
        window=await renew_window_of(context),
        today=today,
        sibling_action=RenewLoan.ACTION,
        # A paged /renew names its loan buttons (every page's); a digest's are in its keyboard.
        keyboard=_sibling_ids(update),
        user_id=ref.user_id,
    )
    if isinstance(result, outcomes.Already):
        await send(context.bot, chat_id, t(lang, "borrower.renew.all_already"))
        return
    if isinstance(result, outcomes.CardGone) or (
        isinstance(result, outcomes.LoginLapsed) and result.error is None
    ):
        await require_card(context, tapped=decode(ref.payload, RenewAll))
        return
    if isinstance(result, outcomes.LoginLapsed | outcomes.NotRead):
        assert result.error is not None
        card = result.card if isinstance(result, outcomes.LoginLapsed) else None
        await answer_library_error(update, context, result.error, edit=False, card=card)
        return
    if isinstance(result, renewing.NoLoans):
        await send(context.bot, chat_id, t(lang, "borrower.renew.empty"))
        return
    card, done = result.card, result.done
    lines, labels = renewed_lines(done, lang, today)
    several = len(await chat_cards(update, context)) > 1
    name = card_name(card, lang) if several else None
    summary = await summary_change(
        context, card.number, name, result.loans, done.moved(result.loans), result.refused_before
    )
    await edit_buttons(update, labels, summary)
    header = t(lang, "borrower.renew.results")
    if several:
        header = f"{header}\n{heading(lang, card_name(card, lang))}"
    messages = split_messages(lines, header=header, separator="\n")
    await send_messages(update, context, messages)
    if done.lapsed is not None:  # refused partway: what was done is told, then the login
        await answer_library_error(update, context, done.lapsed, edit=False, card=card)


def away_days(words: Sequence[str]) -> int | None:
    """`/away <days>`: a whole number of days from 1 to `MAX_AWAY_DAYS`, else None."""
    if len(words) != 1 or not words[0].isascii() or not words[0].isdigit():
        return None
    days = int(words[0])
    return days if 1 <= days <= MAX_AWAY_DAYS else None


async def away_command(update: Update, context: Context) -> None:
    """`/away <days> [card]`: before a trip, renew every loan due within that many days (each at
    most once, as "renew all" does), each card's with its own token, the cards side by side (or
    the one named, as the lists take it), and say what could not be renewed, and why (with
    several cards, in a section per card)."""
    lang = context.lang
    args = context.args or []
    days = away_days(args[:1])
    if days is None:
        await reply(update, context, t(lang, "notices.away.usage", max=MAX_AWAY_DAYS))
        return
    named, view = await named_view(update, context, args[1:])
    if not named:
        return
    deadline = Deadline()
    shown = await read_cards(context, view, deadline=deadline)
    if shown is None:
        return
    statuses = shown.statuses
    if shown.single and not any(card.status and card.status.loans for card in statuses):
        await reply(update, context, t(lang, "borrower.renew.empty"))
        return
    chat_id = context.chat_id

    async def renew_card(read: CardStatus) -> list[str] | None:
        trouble = read.trouble(lang)
        if trouble is not None or read.status is None:
            return [trouble or ""]
        if not read.status.loans:
            return [t(lang, "lists.loans.none")]
        svc = context.services
        today = context.today
        trip = await renewing.renew_for_trip(
            svc,
            chat_id=chat_id,
            card=read.card,
            status=read.status,
            days=days,
            today=today,
            deadline=deadline,
        )
        # Refused before anything was renewed, or partway (what was done is told all the same).
        refused = isinstance(trip, outcomes.LoginLapsed) or trip.done.lapsed is not None
        if refused and await logins.lapse(svc, read.card) is not None:
            lapsed.append(read.card)
        if isinstance(trip, outcomes.LoginLapsed):
            return None if shown.single else [t(lang, "lists.card_lapsed", name=read.name)]
        lapsing = await _lapsing(trip.lapsing, context, deadline)
        return renewed_lines(trip.done, lang, today)[0] + lapsing

    lapsed: list[Card] = []
    results = await asyncio.gather(*(renew_card(card) for card in statuses))
    lines: list[str] = []
    for card, found in zip(statuses, results, strict=True):
        if found is None:
            lines = []  # the one card's token was refused before anything was renewed
            break
        if not shown.single:
            lines.append(("\n" if lines else "") + heading(lang, card.name))
        lines.extend(found)
    if lines:
        header = t(lang, "notices.away.header", count=days)
        await send_messages(update, context, split_messages(lines, header=header, separator="\n"))
    # Every card whose login lapsed while renewing, named in one message, after what was done.
    await tell_lapsed(context, lapsed, lang)


async def _lapsing(
    lapsing: Sequence[tuple[Hold, dt.date]], context: Context, deadline: Deadline
) -> list[str]:
    """The ready holds whose last pick-up day comes before the patron is back: one line each."""
    if not lapsing:
        return []
    lang, today = context.lang, context.today
    svc = context.services
    places = [hold.pick_up_agency for hold, _ in lapsing]
    names = await svc.branches.lookup(svc.library, places, deadline)
    lines: list[str] = []
    for hold, last in lapsing:
        place = hold.pick_up_agency or ""
        branch = names.get(place) or place or "?"
        date = format_date(last, lang, today=today)
        title = hold.title or t(lang, "render.untitled")
        lines.append(t(lang, "notices.away.lapses", title=title, branch=branch, date=date))
    return lines


# --- several cards ---------------------------------------------------------------------------


def _loan_key(listing: ListPage, number: int, loan_id: str) -> str:
    """A loan's key in `ListPage.buttons`: with several cards "<card>:<loan id>" (loan ids are
    the library's own, so two cards' could be the same); a one-card list keys by loan id."""
    return loan_id if listing.views is None else f"{number}:{loan_id}"


async def list_renew(
    update: Update,
    context: Context,
    listing: ListPage | None = None,
    page: int = 0,
    ref_id: str | None = None,
    *,
    named: int | None = None,
) -> None:
    """/renew: the loans, "renew all" and each open loan's button, a section per card (or the
    card the view shows) when the chat has several. The message's buttons are stored when it is
    first sent (`listing` None), for every card, so the views show them all; `named` opens it
    at that card's view. A page or view tap shows them again, the loans read fresh."""
    view = listing.number if listing is not None else None
    shown = await read_cards(context, view)
    if shown is None:
        return
    svc = context.services
    chat_id = context.chat_id
    statuses = shown.statuses
    refusals = {
        read.number: await renewing.refusals(svc, chat_id, read.number) for read in statuses
    }
    if (listing is None or shown.single) and (
        not any(read.status and read.status.loans for read in statuses)
        and all(read.status is not None for read in statuses)
    ):
        await reply(update, context, t(context.lang, "borrower.renew.empty"))
        return
    fresh = listing is None
    if listing is None:
        listing, ref_id = await _store_renew(update, context, shown, refusals)
        if named is not None and not shown.single:
            listing = replace(listing, number=named)
            statuses = [read for read in statuses if read.number == named]
            shown = replace(shown, statuses=statuses)
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
    for read in shown.statuses:
        if read.status is None or not read.status.loans:
            continue
        loans = sort_loans(read.status.loans)
        loans_listed += len(loans)
        renewable = open_loans(loans, refusals[read.number])
        head = len(payloads)
        buttons = tuple(ButtonId.of(head + 1 + n) for n in range(len(renewable)))
        heads[str(read.number)] = ButtonId.of(head)
        mapped.update(
            zip(
                (_loan_key(keys, read.number, loan.loan_id) for loan in renewable),
                buttons,
                strict=True,
            )
        )
        cid = read.card.card_id
        payloads.append(RenewAll(tuple(loan.loan_id for loan in loans), buttons, read.number, cid))
        payloads.extend(renew_payload(loan, lang, read.number, cid) for loan in renewable)
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
        number=None,
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
    svc = context.services
    chat_id = context.chat_id
    today = context.today
    window = await renew_window_of(context)
    mapped = listing.buttons or {}
    if listing.views is None:  # a one-card list: its one "renew all"
        heads = {str(read.number): listing.head for read in statuses[:1] if listing.head}
    else:
        heads = listing.heads or {}
    several = len(statuses) > 1
    every = [
        (read, loan)
        for read in statuses
        if read.status is not None
        for loan in sort_loans(read.status.loans)
    ]
    pages = max(1, -(-len(every) // RENEW_PER_PAGE))
    page = max(0, min(page, pages - 1))
    on_this_page = every[page * RENEW_PER_PAGE : (page + 1) * RENEW_PER_PAGE]
    used: set[str] = set()
    if not fresh:
        wanted = [
            mapped[key]
            for read, loan in on_this_page
            if (key := _loan_key(listing, read.number, loan.loan_id)) in mapped
        ]
        used = {row.id for row in await callbacks.stored_many(svc, wanted, chat_id) if row.used_at}
    # Renewed today from any face (the Mini App, another message): marked as tried, as there.
    for read in statuses:
        if read.status is not None and read.status.loans:
            done = await renewing.renewed_today(svc, read.card, read.status.loans)
            keys = (_loan_key(listing, read.number, loan_id) for loan_id in done)
            used |= {mapped[key] for key in keys if key in mapped}
    # A login button for each lapsed card the list shows, first, as the other lists have.
    logins = await lapsed_logins(context, shown)
    buttons: list[list[InlineKeyboardButton]] = [*logins.rows]
    for read in statuses:
        head = heads.get(str(read.number))
        # Only where a loan it could renew is due within the window: beside "nothing due
        # within 3 days", or where the library refused every such loan, it would renew nothing.
        if (
            head is not None
            and read.status is not None
            and any(due_counts(open_loans(read.status.loans, refusals[read.number]), today, window))
        ):
            label = renew_all_label(lang, window)
            if several:
                label = t(lang, "lists.renew.all_of", label=label, name=read.name)
            buttons.append([ref_button(plain(label), RenewAll.ACTION, head)])
    lines: dict[int, list[str]] = {read.number: [] for read in statuses}
    for read, loan in on_this_page:
        button_id = mapped.get(_loan_key(listing, read.number, loan.loan_id))
        refusal = refusal_for(loan, refusals[read.number])
        line, text = _loan_row(loan, lang, refusal, button_id, used, today)
        if line is not None:
            lines[read.number].append(line)
            continue
        if button_id is None or text is None:
            continue
        if several:
            text = t(lang, "lists.button_of", label=text, name=read.name)
        buttons.append([ref_button(plain(text), RenewLoan.ACTION, button_id)])
    on_page = {read.number for read, _ in on_this_page}
    parts: list[str] = [t(lang, "borrower.renew.header", count=len(every))]
    for read in statuses:
        trouble = read.trouble(lang)
        if trouble is not None or read.status is None:
            parts.append(f"{heading(lang, read.name)}\n{trouble or ''}")
            continue
        loans = read.status.loans
        if not loans:
            parts.append(f"{heading(lang, read.name)}\n{t(lang, 'lists.loans.none')}")
            continue
        if read.number not in on_page:
            continue
        refused = sum(1 for loan in loans if refusal_for(loan, refusals[read.number]) is not None)
        summary = loans_summary(loans, today, lang, window, refused)
        if shown.single:
            parts[0] = f"{parts[0]}\n{summary}"
            parts.extend(["\n".join(lines[read.number])] if lines[read.number] else [])
            continue
        lead = SEP.join((t(lang, "lists.loans.count", count=len(loans)), summary))
        parts.append("\n".join((heading(lang, read.name), lead, *lines[read.number])))
    if listing.views is None:  # a one-card list pages through its own stored row
        if pages > 1 and ref_id is not None:
            buttons.append(page_row(lang, ref_id, page, pages))
    else:
        views = listing.views or {}
        if pages > 1:
            buttons.append(page_row(lang, views[str(listing.number or ALL)], page, pages))
        buttons.extend(view_rows(lang, shown.cards, views, listing.number))
    if logins.links:
        parts.append(logins.links)
    [text, *_] = split_messages(["\n\n".join(parts)])
    await reply(update, context, text, buttons=buttons)


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("renew", renew_command),
        CommandHandler("away", away_command),
        CallbackQueryHandler(renew_callback, pattern=rf"^{RenewLoan.ACTION}:"),
        CallbackQueryHandler(renew_all_callback, pattern=rf"^{RenewAll.ACTION}:"),
    ]
