"""/loans, /holds (and cancelling a hold) and /debt: a section per card, none with one card."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from bot.actions import buttons as callbacks
from bot.actions import cancelling, outcomes, renewing
from bot.library.deadline import Deadline
from bot.rules.isil import normalise_branch
from bot.rules.renewals import refusal_for, renew_window
from bot.rules.urgency import hold_is_ready, sort_holds, sort_loans
from bot.telegram.buttons import ButtonId, CancelHold, KeepHold, ListPage, Payload, decode
from bot.telegram.cards import for_card, require_card
from bot.telegram.context import Context, chat_settings
from bot.telegram.failures import answer_library_error
from bot.telegram.handlers.cardlists import (
    ALL,
    Section,
    Shown,
    lapsed_logins,
    lay_out,
    named_view,
    read_cards,
    section_pages,
    store_views,
    view_rows,
)
from bot.telegram.keyboards import (
    BUTTON_TITLE,
    PAYLOAD_TITLE,
    callback_buttons,
    one_per_row,
    overview_keyboard,
    page_row,
    peek_callback,
    store_payloads,
    tapped_once,
)
from bot.telegram.replies import plain, reply, send
from bot.texts import Raw, t
from bot.texts.formatting import (
    format_amount,
    is_zero_amount,
    shorten,
)
from bot.texts.render import (
    debt_summary,
    debt_total,
    holds_summary,
    loans_summary,
    reason_text,
    render_debt,
    render_hold,
    render_loan,
)

if TYPE_CHECKING:
    from bot.library.models import Debt, Hold

log = logging.getLogger(__name__)


# --- /loans ---------------------------------------------------------------------------------

# A page of a long list: this many entries at most, within this many characters, so the header,
# the summary and the footer fit beside them in one message.
LOANS_PER_PAGE = 10
HOLDS_PER_PAGE = 8
DEBT_PER_PAGE = 15
PAGE_LIMIT = 3400


async def loans_command(update: Update, context: Context) -> None:
    found, view = await named_view(update, context)
    if found:
        await list_loans(update, context, view)


async def renew_window_of(context: Context) -> int:
    """The days "renew all" covers for this chat, which a list's summary counts as due soon."""
    chat = await chat_settings(context)
    days = chat.thresholds(context.services.settings.REMINDER_DAYS)
    return renew_window(chat.reminders_enabled, days)


# --- /holds and cancelling one -------------------------------------------------------------


async def holds_command(update: Update, context: Context) -> None:
    found, view = await named_view(update, context)
    if found:
        await list_holds(update, context, view)


# --- paging ---------------------------------------------------------------------------------


async def cancel_callback(update: Update, context: Context) -> None:
    """The `cancel` buttons: a hold's button asks, "yes" cancels it, "no" keeps it."""
    lang = context.lang
    peek = await peek_callback(update, context)
    seen = decode(peek.payload, KeepHold, CancelHold) if peek is not None else None
    if isinstance(seen, CancelHold) and seen.confirm:
        ref = await tapped_once(update, context, "borrower.cancel.already")
        if ref is not None:
            svc = context.services
            result = await cancelling.cancel_hold(
                svc,
                chat_id=context.chat_id,
                button=ref.id,
                action=CancelHold.ACTION,
                user_id=ref.user_id,
            )
            await _tell_cancel(update, context, seen, result)
        return
    # A hold cancelled (or found gone) from another message retired this button: said now.
    asks = isinstance(seen, CancelHold)
    ref = await tapped_once(update, context, "borrower.cancel.already", asks=asks)
    if ref is None:
        return
    tapped = decode(ref.payload, KeepHold, CancelHold)
    if isinstance(tapped, KeepHold):
        await _keep_hold(update, context, tapped)
    elif isinstance(tapped, CancelHold):
        # The card first: a logged-out card's old button says so before any question.
        if await require_card(context, tapped=tapped) is not None:
            await _ask_cancel(update, context, tapped)
    else:
        await send(context.bot, context.chat_id, t(lang, "common.stale_button"))


def _hold_title(title: str, lang: str) -> str:
    return title or t(lang, "render.untitled")


async def _ask_cancel(update: Update, context: Context, hold: CancelHold) -> None:
    # A new message, so the list of holds (and its other buttons) stays in the chat.
    lang = context.lang
    title = _hold_title(hold.title, lang)
    yes, no = await callback_buttons(
        update,
        context,
        [
            (t(lang, "borrower.cancel.yes"), replace(hold, confirm=True)),
            (t(lang, "borrower.cancel.no"), KeepHold(ButtonId.of(0), title)),
        ],
    )
    text = t(lang, "borrower.cancel.confirm", title=title)
    if hold.branch:
        branch = context.services.branches.known(hold.branch) or hold.branch
        text = t(lang, "borrower.cancel.confirm_at", title=title, branch=branch)
    await send(context.bot, context.chat_id, text, buttons=[[yes, no]])


async def _tell_cancel(
    update: Update, context: Context, hold: CancelHold, result: cancelling.Cancelling
) -> None:
    lang = context.lang
    if isinstance(result, outcomes.Already):
        await send(context.bot, context.chat_id, t(lang, "borrower.cancel.already"))
        return
    if isinstance(result, outcomes.CardGone) or (
        isinstance(result, outcomes.LoginLapsed) and result.error is None
    ):
        await require_card(context, tapped=hold)  # the chat's words for a card gone or lapsed
        return
    if isinstance(result, outcomes.LoginLapsed | cancelling.CancelFailed):
        assert result.error is not None
        await answer_library_error(update, context, result.error, card=result.card)
        return
    title = _hold_title(result.title, lang)
    if isinstance(result, cancelling.HoldGone):
        text = t(lang, "borrower.cancel.gone", title=title)
    elif isinstance(result, cancelling.CancelRefused):
        reason = shorten(result.reason, 120)
        text = t(lang, "borrower.cancel.refused", title=title, reason=reason)
    elif isinstance(result, cancelling.MaybeCancelled):
        text = t(lang, "borrower.cancel.maybe", title=title)
    else:
        key = "borrower.cancel.done" if result.deleted else "borrower.cancel.not_done"
        text = t(lang, key, title=title)
    await reply(update, context, await for_card(context, result.card, text))


async def _keep_hold(update: Update, context: Context, keep: KeepHold) -> None:
    lang = context.lang
    confirm = await callbacks.stored(context.services, keep.keep, context.chat_id)
    if confirm is not None and confirm.used_at is not None:
        await reply(update, context, t(lang, "borrower.cancel.already"))
        return
    title = _hold_title(keep.title, lang)
    await reply(update, context, t(lang, "borrower.cancel.kept", title=title))


# --- /debt ----------------------------------------------------------------------------------


async def debt_command(update: Update, context: Context) -> None:
    found, view = await named_view(update, context)
    if found:
        await list_debt(update, context, view)


# --- the lists: a section per card, none with one card ---------------------------------------


async def _show_sections(
    update: Update,
    context: Context,
    shown: Shown,
    kind: str,
    header: str,
    pages: list[list[str]],
    view: int | None,
    page: int,
    views: dict[str, str] | None,
    ref_id: str | None,
    *,
    above: list[list[InlineKeyboardButton]] | None = None,
    below: InlineKeyboardMarkup | None = None,
    footer: str = "",
) -> None:
    """One page of a list, with ◀ ▶ when it has more, with several cards the card buttons, and
    `below` them all (the Mini App's keyboard).

    A chat's one card pages through one stored `ListPage` (`ref_id`, stored now if None);
    several cards through the stored views of the message (`views`, stored now if None).
    """
    lang = context.lang
    # A login button for each lapsed card the list shows, first: the list names them.
    logins = await lapsed_logins(context, shown)
    buttons = [*logins.rows, *(above or [])]
    if logins.links:
        footer = "\n\n".join(part for part in (footer, logins.links) if part)
    if shown.single:
        if len(pages) > 1:
            if ref_id is None:
                [ref_id] = await store_payloads(update, context, [ListPage(kind)])
            buttons.append(page_row(lang, ref_id, page, len(pages)))
    else:
        if views is None:
            views = await store_views(update, context, kind, shown.cards)
        if len(pages) > 1:
            buttons.append(page_row(lang, views[str(view) if view else ALL], page, len(pages)))
        buttons.extend(view_rows(lang, shown.cards, views, view))
    if below is not None and buttons:
        buttons.extend(list(row) for row in below.inline_keyboard)
    text = "\n\n".join(part for part in (header, *pages[page], footer) if part)
    # Alone, `below` goes as it was made (serialized once); no buttons at all is no keyboard.
    await reply(update, context, text, buttons=buttons or below)


async def _paged(
    update: Update,
    context: Context,
    shown: Shown,
    sections: list[Section],
    total: int,
    view: int | None,
    page: int,
    per_page: int,
    empty_key: str,
) -> tuple[list[list[str]], int] | None:
    """A list's pages and the page to show; None once the patron has been told the list is
    empty (every card read, none with anything, and all cards asked for)."""
    if not total and view is None and all(card.status is not None for card in shown.statuses):
        await reply(update, context, t(context.lang, empty_key))
        return None
    pages = section_pages(context.lang, sections, per_page=per_page, limit=PAGE_LIMIT)
    return pages, max(0, min(page, len(pages) - 1))


async def list_loans(
    update: Update,
    context: Context,
    view: int | None = None,
    page: int = 0,
    views: dict[str, str] | None = None,
    ref_id: str | None = None,
) -> None:
    """/loans: the summary and one page of the loans, a section per card (or only card `view`)
    when the chat has several."""
    shown = await read_cards(context, view)
    if shown is None:
        return
    lang = context.lang
    svc = context.services
    chat_id = context.chat_id
    today = context.today
    window = await renew_window_of(context)
    known = context.take_refusals()  # read with the chat's settings, by the guard
    sections: list[Section] = []
    total = 0
    for read in shown.statuses:
        if read.status is None:
            sections.append(read.unread(lang))
            continue
        loans = sort_loans(read.status.loans)
        if not loans:
            sections.append(Section(read.name, t(lang, "lists.loans.none")))
            continue
        refusals = (
            known.get(read.number, {})
            if known is not None
            else await renewing.refusals(svc, chat_id, read.number)
        )
        entries = []
        refused = 0
        for loan in loans:
            refusal = refusal_for(loan, refusals)
            reason = reason_text(refusal.reason, lang) if refusal is not None else None
            refused += refusal is not None
            entries.append(render_loan(loan, today, lang, reason))
        count = t(lang, "lists.loans.count", count=len(loans))
        summary = loans_summary(loans, today, lang, window, refused)
        sections.append(Section(read.name, count, summary, entries))
        total += len(loans)
    title = t(lang, "borrower.loans.header", count=total)
    header, sections = lay_out(shown, title, sections)
    paged = await _paged(
        update, context, shown, sections, total, view, page, LOANS_PER_PAGE, "borrower.loans.empty"
    )
    if paged is None:
        return
    pages, page = paged
    await _show_sections(
        update,
        context,
        shown,
        "loans",
        header,
        pages,
        view,
        page,
        views,
        ref_id,
        below=overview_keyboard(context),
    )


async def list_holds(
    update: Update,
    context: Context,
    view: int | None = None,
    page: int = 0,
    views: dict[str, str] | None = None,
    ref_id: str | None = None,
) -> None:
    """/holds: one page of the holds, each with its card's cancel button, a section per card
    (or only card `view`) when the chat has several."""
    deadline = Deadline()
    shown = await read_cards(context, view, deadline)
    if shown is None:
        return
    lang, statuses = context.lang, shown.statuses
    svc = context.services
    every = [hold for read in statuses if read.status for hold in read.status.orders]
    names = await svc.branches.lookup(
        svc.library, (hold.pick_up_agency for hold in every), deadline
    )
    today = context.today
    sections: list[Section] = []
    items: list[tuple[int, Hold] | None] = []  # per block of the pages: a hold and its card
    total = 0
    for read in statuses:
        if read.status is None:
            sections.append(read.unread(lang))
            items.append(None)
            continue
        holds = sort_holds(read.status.orders)
        if not holds:
            sections.append(Section(read.name, t(lang, "lists.holds.none")))
            items.append(None)
            continue
        entries = []
        ready_seen = waiting_seen = False
        for hold in holds:
            entry = render_hold(hold, today, lang, names)
            if hold_is_ready(hold):
                if not ready_seen:
                    entry = f"{t(lang, 'borrower.holds.ready')}\n{entry}"
                    ready_seen = True
            elif not waiting_seen:
                entry = f"{t(lang, 'borrower.holds.waiting')}\n{entry}"
                waiting_seen = True
            entries.append(entry)
            items.append((read.number, hold))
        count = t(lang, "lists.holds.count", count=len(holds))
        sections.append(Section(read.name, count, holds_summary(holds, lang), entries))
        total += len(holds)
    title = t(lang, "borrower.holds.header", count=total)
    header, sections = lay_out(shown, title, sections)
    paged = await _paged(
        update, context, shown, sections, total, view, page, HOLDS_PER_PAGE, "borrower.holds.empty"
    )
    if paged is None:
        return
    pages, page = paged
    first = sum(len(earlier) for earlier in pages[:page])
    specs: list[tuple[str, Payload]] = []
    several = len(statuses) > 1
    names_of = {read.number: read.name for read in statuses}
    ids_of = {read.number: read.card.card_id for read in statuses}
    shown_items = [item for item in items[first : first + len(pages[page])] if item is not None]
    # A title held twice on a card (at two branches) gets its branch on the buttons.
    twice = Counter((number, hold.title) for number, hold in shown_items)
    for number, hold in shown_items:
        title = hold.title or t(lang, "render.untitled")
        payload = CancelHold(
            hold.order_id,
            hold.order_type,
            shorten(title, PAYLOAD_TITLE),
            number=number,
            branch=normalise_branch(hold.pick_up_agency),
            cid=ids_of[number],
        )
        text = t(lang, "borrower.holds.cancel_button", title=Raw(shorten(title, BUTTON_TITLE)))
        if twice[number, hold.title] > 1:
            place = (hold.pick_up_agency or "").strip()
            branch = names.get(place) or place or "?"
            text = t(lang, "borrower.holds.cancel_button_at", label=text, branch=branch)
        if several:
            text = t(lang, "lists.button_of", label=text, name=names_of[number])
        specs.append((plain(text), payload))
    above = one_per_row(await callback_buttons(update, context, specs))
    footer = t(lang, "borrower.holds.footer") if specs else ""
    await _show_sections(
        update,
        context,
        shown,
        "holds",
        header,
        pages,
        view,
        page,
        views,
        ref_id,
        above=above,
        footer=footer,
    )


async def list_debt(
    update: Update,
    context: Context,
    view: int | None = None,
    page: int = 0,
    views: dict[str, str] | None = None,
    ref_id: str | None = None,
) -> None:
    """/debt: what is owed and the total, a section per card (or only card `view`) when the chat
    has several; one card's list comes as messages of its own, split where it is long."""
    shown = await read_cards(context, view)
    if shown is None:
        return
    lang = context.lang
    today = context.today
    sections: list[Section] = []
    owed = 0
    every: list[Debt] = []
    for card in shown.statuses:
        if card.status is None:
            sections.append(card.unread(lang))
            continue
        items = [item for item in card.status.debt if not is_zero_amount(item.amount)]
        if not items:
            sections.append(Section(card.name, t(lang, "lists.debt.none")))
            continue
        every += items
        summary = debt_summary(items, lang)
        sections.append(
            Section(card.name, summary=summary, entries=render_debt(items, today, lang))
        )
        owed += len(items)
    title = t(lang, "borrower.debt.header")
    # A family sees what the cards owe together, once more than one of them owes something.
    family = debt_total(every) if len(shown.statuses) > 1 else None
    if family is not None and sum(bool(s.entries) for s in sections) > 1:
        amount = format_amount(family[0], family[1], lang)
        title = f"{title}\n{t(lang, 'render.debt.family_total', amount=amount)}"
    # One card pages like a family's: ◀ ▶ rather than a burst of messages.
    header, sections = lay_out(shown, title, sections)
    paged = await _paged(
        update, context, shown, sections, owed, view, page, DEBT_PER_PAGE, "borrower.debt.none"
    )
    if paged is None:
        return
    pages, page = paged
    await _show_sections(update, context, shown, "debt", header, pages, view, page, views, ref_id)


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("loans", loans_command),
        CommandHandler("holds", holds_command),
        CommandHandler("debt", debt_command),
        CallbackQueryHandler(cancel_callback, pattern=rf"^{CancelHold.ACTION}:"),
    ]
