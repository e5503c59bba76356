"""/loans, /holds (and cancelling a hold) and /debt."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from telegram import InlineKeyboardButton, Update
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from bot.library.deadline import Deadline
from bot.library.errors import LibraryError, Refused, ServiceUnavailable
from bot.rules.renewals import refusal_for, renew_window
from bot.rules.urgency import hold_is_ready, sort_holds, sort_loans
from bot.services import services
from bot.telegram.buttons import ButtonId, CancelHold, KeepHold, ListPage, Payload, decode
from bot.telegram.cards import require_cards
from bot.telegram.handlers import renew
from bot.telegram.handlers.cardlists import (
    ALL,
    CardStatus,
    Section,
    answer_card_error,
    card_number,
    chat_cards,
    fetch_cards,
    for_card,
    kept_cards,
    only_card,
    section_pages,
    shown_cards,
    store_views,
    view_rows,
)
from bot.telegram.handlers.common import command_status, loans_status
from bot.telegram.ui import (
    BUTTON_TITLE,
    PAYLOAD_TITLE,
    Context,
    callback_buttons,
    chat_and_lang,
    chat_id_of,
    chat_settings,
    claim_once,
    lang_of,
    one_per_row,
    page_row,
    peek_callback,
    plain,
    reply,
    resolve_callback,
    send,
    send_messages,
    store_payloads,
    today_in,
)
from bot.texts import Raw, t
from bot.texts.formatting import (
    format_amount,
    is_zero_amount,
    paginate,
    shorten,
    split_messages,
)
from bot.texts.render import (
    SEP,
    debt_total,
    holds_summary,
    loans_summary,
    reason_text,
    render_debt,
    render_hold,
    render_loan,
)

if TYPE_CHECKING:
    from bot.library.models import BorrowerStatus, Hold
    from storage.store import Account, Refusal

log = logging.getLogger(__name__)


# --- /loans ---------------------------------------------------------------------------------

# A page of a long list: this many entries at most, within this many characters, so the header,
# the summary and the footer fit beside them in one message.
LOANS_PER_PAGE = 10
HOLDS_PER_PAGE = 8
DEBT_PER_PAGE = 15
PAGE_LIMIT = 3400


async def loans_command(update: Update, context: Context) -> None:
    cards = await chat_cards(update, context)
    if len(cards) > 1:
        await card_loans(update, context)
        return
    # Read while the platform answers: the list needs both, and this one is off the path.
    store = services(context).store
    reading = asyncio.ensure_future(store.refusals(chat_id_of(update), card_number(cards)))
    started = await loans_status(update, context, "borrower.loans.empty", cards=cards)
    refusals = await reading
    if started is None:
        return
    lang, status = started
    await show_loans(update, context, lang, status, refusals)


async def show_loans(
    update: Update,
    context: Context,
    lang: str,
    status: BorrowerStatus,
    refusals: Mapping[str, Refusal],
    page: int = 0,
    ref_id: str | None = None,
) -> None:
    """The summary and one page of the loans; ◀ ▶ under a list longer than a page."""
    today = today_in(context)
    entries = []
    refused = 0
    for loan in sort_loans(status.loans):
        refusal = refusal_for(loan, refusals)
        reason = reason_text(refusal.reason, lang) if refusal is not None else None
        refused += refusal is not None
        entries.append(render_loan(loan, today, lang, reason))
    window = await renew_window_of(update, context)
    header = "\n".join(
        (
            t(lang, "borrower.loans.header", count=len(status.loans)),
            loans_summary(status.loans, today, lang, window, refused),
        )
    )
    pages = paginate(entries, per_page=LOANS_PER_PAGE, limit=PAGE_LIMIT)
    page = max(0, min(page, len(pages) - 1))
    buttons = None
    if len(pages) > 1:
        if ref_id is None:
            [ref_id] = await store_payloads(update, context, [ListPage("loans")])
        buttons = [page_row(lang, ref_id, page, len(pages))]
    await reply(update, context, "\n\n".join((header, *pages[page])), buttons=buttons)


async def renew_window_of(update: Update, context: Context) -> int:
    """The days "renew all" covers for this chat, which a list's summary counts as due soon."""
    chat = await chat_settings(update, context)
    days = chat.thresholds(services(context).settings.REMINDER_DAYS)
    return renew_window(chat.reminders_enabled, days)


# --- /holds and cancelling one -------------------------------------------------------------


async def holds_command(update: Update, context: Context) -> None:
    cards = await chat_cards(update, context)
    if len(cards) > 1:
        await card_holds(update, context)
        return
    deadline = Deadline()
    started = await command_status(update, context, deadline, cards=cards)
    if started is None:
        return
    lang, status = started
    await show_holds(update, context, lang, status, deadline, card=card_number(cards))


async def show_holds(
    update: Update,
    context: Context,
    lang: str,
    status: BorrowerStatus,
    deadline: Deadline,
    page: int = 0,
    ref_id: str | None = None,
    *,
    card: int = 1,
) -> None:
    """One page of the holds (of the chat's one card, `card`) with a cancel button each; ◀ ▶
    under a list longer than a page."""
    if not status.orders:
        await reply(update, context, t(lang, "borrower.holds.empty"))
        return
    svc = services(context)
    names = await svc.branches.lookup(
        svc.library, (hold.pick_up_agency for hold in status.orders), deadline
    )
    today = today_in(context)
    holds = sort_holds(status.orders)
    entries: list[str] = []
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
    pages = paginate(entries, per_page=HOLDS_PER_PAGE, limit=PAGE_LIMIT)
    page = max(0, min(page, len(pages) - 1))
    first = sum(len(earlier) for earlier in pages[:page])
    specs: list[tuple[str, Payload]] = []
    for hold in holds[first : first + len(pages[page])]:
        title = hold.title or t(lang, "render.untitled")
        payload = CancelHold(
            hold.order_id, hold.order_type, shorten(title, PAYLOAD_TITLE), card=card
        )
        text = t(lang, "borrower.holds.cancel_button", title=Raw(shorten(title, BUTTON_TITLE)))
        specs.append((text, payload))
    buttons = one_per_row(await callback_buttons(update, context, specs))
    if len(pages) > 1:
        if ref_id is None:
            [ref_id] = await store_payloads(update, context, [ListPage("holds")])
        buttons.append(page_row(lang, ref_id, page, len(pages)))
    header = "\n".join(
        (t(lang, "borrower.holds.header", count=len(holds)), holds_summary(holds, lang))
    )
    text = "\n\n".join((header, *pages[page], t(lang, "borrower.holds.footer")))
    await reply(update, context, text, buttons=buttons)


# --- paging ---------------------------------------------------------------------------------


async def page_callback(update: Update, context: Context) -> None:
    """◀ ▶ under a long list: the list read fresh, the asked page shown in the same message."""
    ref = await resolve_callback(update, context)
    listing = decode(ref.payload, ListPage) if ref is not None else None
    if ref is None or listing is None:
        return
    query = update.callback_query
    assert query is not None
    try:
        page = int(str(query.data).split(":", 2)[2])
    except (IndexError, ValueError):
        page = 0
    if listing.views is not None:  # a list of several cards
        if listing.kind in SECTIONED:
            await SECTIONED[listing.kind](update, context, listing.card, page, listing.views)
        elif listing.kind == "renew":
            await renew.card_renew(update, context, listing, page)
        return
    if listing.kind == "renew":
        await renew.show_page(update, context, page, ref.id, listing)
        return
    if listing.kind == "holds":
        deadline = Deadline()
        started = await command_status(update, context, deadline, edit=False)
        if started is not None:
            card = await only_card(update, context)
            await show_holds(update, context, *started, deadline, page, ref.id, card=card)
        return
    card = await only_card(update, context)
    reading = asyncio.ensure_future(services(context).store.refusals(chat_id_of(update), card))
    started = await loans_status(update, context, "borrower.loans.empty", edit=False)
    refusals = await reading
    if started is not None:
        await show_loans(update, context, *started, refusals, page, ref.id)


async def cancel_callback(update: Update, context: Context) -> None:
    """The `cancel` buttons: a hold's button asks, "yes" cancels it, "no" keeps it."""
    lang = await lang_of(update, context)
    peek = await peek_callback(update, context)
    seen = decode(peek.payload, KeepHold, CancelHold) if peek is not None else None
    if isinstance(seen, CancelHold) and seen.confirm:
        claimed = await claim_once(
            update, context, lang, "borrower.cancel.already", require=for_card(seen.card)
        )
        if claimed is not None:
            await _cancel_hold(update, context, lang, claimed[0], seen)
        return
    ref = await resolve_callback(update, context)
    if ref is None:
        return
    tapped = decode(ref.payload, KeepHold, CancelHold)
    if isinstance(tapped, KeepHold):
        await _keep_hold(update, context, lang, tapped)
    elif isinstance(tapped, CancelHold):
        await _ask_cancel(update, context, lang, tapped)
    else:
        await send(context.bot, chat_id_of(update), t(lang, "common.stale_button"))


def _hold_title(title: str, lang: str) -> str:
    return title or t(lang, "render.untitled")


async def _ask_cancel(update: Update, context: Context, lang: str, hold: CancelHold) -> None:
    # A new message, so the list of holds (and its other buttons) stays in the chat.
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
    await send(context.bot, chat_id_of(update), text, buttons=[[yes, no]])


async def _cancel_hold(
    update: Update, context: Context, lang: str, account: Account, hold: CancelHold
) -> None:
    title = _hold_title(hold.title, lang)
    try:
        result = await Deadline().run(
            services(context).library.cancel_order(
                account.token, hold.order_id, hold.order_type or "normal"
            )
        )
    except Refused as exc:
        # "Unknown Request": the NCIP problem type for an order the library no longer has.
        if (exc.code or "").strip().lower() in ("order_not_found", "unknown request"):
            await reply(update, context, t(lang, "borrower.cancel.gone", title=title))
            return
        reason = shorten(exc.code or "?", 120)
        await reply(update, context, t(lang, "borrower.cancel.refused", title=title, reason=reason))
        return
    except LibraryError as exc:
        if isinstance(exc, ServiceUnavailable) and exc.status is None:
            # Sent once, never answered readably: the hold may be cancelled or not.
            await reply(update, context, t(lang, "borrower.cancel.maybe", title=title))
            return
        await answer_card_error(update, context, exc, lang, account, edit=True)
        return
    key = "borrower.cancel.done" if result.deleted else "borrower.cancel.not_done"
    await reply(update, context, t(lang, key, title=title))


async def _keep_hold(update: Update, context: Context, lang: str, keep: KeepHold) -> None:
    confirm = await services(context).store.callback(keep.keep, chat_id_of(update))
    if confirm is not None and confirm.used_at is not None:
        await reply(update, context, t(lang, "borrower.cancel.already"))
        return
    title = _hold_title(keep.title, lang)
    await reply(update, context, t(lang, "borrower.cancel.kept", title=title))


# --- /debt ----------------------------------------------------------------------------------


async def debt_command(update: Update, context: Context) -> None:
    cards = await chat_cards(update, context)
    if len(cards) > 1:
        await card_debt(update, context)
        return
    started = await command_status(update, context, cards=cards)
    if started is None:
        return
    lang, status = started
    items = [item for item in status.debt if not is_zero_amount(item.amount)]
    if not items:
        await reply(update, context, t(lang, "borrower.debt.none"))
        return
    total = debt_total(items)
    footer = (
        t(lang, "render.debt.total", amount=format_amount(total[0], total[1], lang))
        if total is not None
        else ""
    )
    messages = split_messages(
        render_debt(items, today_in(context), lang),
        header=t(lang, "borrower.debt.header"),
        footer=footer,
    )
    await send_messages(update, context, messages)


# --- several cards: a section per card -------------------------------------------------------


async def _card_statuses(
    update: Update, context: Context, view: int | None
) -> tuple[str, list[Account], list[CardStatus]] | None:
    """The language, the chat's cards and the statuses of those the view shows; None once the
    patron has been told that no card is connected."""
    chat, lang = await chat_and_lang(update, context)
    cards = await require_cards(update, context)
    if not cards:
        return None
    statuses = await fetch_cards(context, shown_cards(cards, view), lang, Deadline(), chat)
    return lang, kept_cards(cards, statuses), statuses


async def _show_sections(
    update: Update,
    context: Context,
    lang: str,
    kind: str,
    cards: list[Account],
    header: str,
    pages: list[list[str]],
    view: int | None,
    page: int,
    views: dict[str, str] | None,
    *,
    above: list[list[InlineKeyboardButton]] | None = None,
    footer: str = "",
) -> None:
    """One page of a sectioned list, with ◀ ▶ when it has more and the card buttons."""
    if views is None:
        views = await store_views(update, context, kind, cards)
    buttons = list(above or [])
    if len(pages) > 1:
        buttons.append(page_row(lang, views[str(view) if view else ALL], page, len(pages)))
    buttons.extend(view_rows(lang, cards, views, view))
    text = "\n\n".join(part for part in (header, *pages[page], footer) if part)
    await reply(update, context, text, buttons=buttons)


async def _paged(
    update: Update,
    context: Context,
    lang: str,
    statuses: list[CardStatus],
    sections: list[Section],
    shown: int,
    view: int | None,
    page: int,
    per_page: int,
    empty_key: str,
) -> tuple[list[list[str]], int] | None:
    """A sectioned list's pages and the page to show; None once the patron has been told the
    list is empty (every card read, none with anything, and all cards asked for)."""
    if not shown and view is None and all(card.status is not None for card in statuses):
        await reply(update, context, t(lang, empty_key))
        return None
    pages = section_pages(lang, sections, per_page=per_page, limit=PAGE_LIMIT)
    return pages, max(0, min(page, len(pages) - 1))


async def card_loans(
    update: Update,
    context: Context,
    view: int | None = None,
    page: int = 0,
    views: dict[str, str] | None = None,
) -> None:
    """/loans with several cards: a section per card (or only card `view`)."""
    found = await _card_statuses(update, context, view)
    if found is None:
        return
    lang, cards, statuses = found
    store = services(context).store
    chat_id = chat_id_of(update)
    today = today_in(context)
    window = await renew_window_of(update, context)
    sections: list[Section] = []
    total = 0
    for card in statuses:
        if card.status is None:
            sections.append(card.unread(lang))
            continue
        loans = sort_loans(card.status.loans)
        if not loans:
            sections.append(Section(card.name, t(lang, "lists.loans.none"), ()))
            continue
        refusals = await store.refusals(chat_id, card=card.card)
        entries = []
        refused = 0
        for loan in loans:
            refusal = refusal_for(loan, refusals)
            reason = reason_text(refusal.reason, lang) if refusal is not None else None
            refused += refusal is not None
            entries.append(render_loan(loan, today, lang, reason))
        summary = loans_summary(loans, today, lang, window, refused)
        lead = SEP.join((t(lang, "lists.loans.count", count=len(loans)), summary))
        sections.append(Section(card.name, lead, entries))
        total += len(loans)
    paged = await _paged(
        update,
        context,
        lang,
        statuses,
        sections,
        total,
        view,
        page,
        LOANS_PER_PAGE,
        "borrower.loans.empty",
    )
    if paged is None:
        return
    pages, page = paged
    header = t(lang, "borrower.loans.header", count=total)
    await _show_sections(update, context, lang, "loans", cards, header, pages, view, page, views)


async def card_holds(
    update: Update,
    context: Context,
    view: int | None = None,
    page: int = 0,
    views: dict[str, str] | None = None,
) -> None:
    """/holds with several cards: a section per card (or only card `view`), each hold with its
    card's cancel button."""
    found = await _card_statuses(update, context, view)
    if found is None:
        return
    lang, cards, statuses = found
    svc = services(context)
    every = [hold for card in statuses if card.status for hold in card.status.orders]
    names = await svc.branches.lookup(
        svc.library, (hold.pick_up_agency for hold in every), Deadline()
    )
    today = today_in(context)
    sections: list[Section] = []
    items: list[tuple[int, Hold] | None] = []  # per block of the pages: a hold and its card
    total = 0
    for card in statuses:
        if card.status is None:
            sections.append(card.unread(lang))
            items.append(None)
            continue
        holds = sort_holds(card.status.orders)
        if not holds:
            sections.append(Section(card.name, t(lang, "lists.holds.none"), ()))
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
            items.append((card.card, hold))
        lead = SEP.join(
            (t(lang, "lists.holds.count", count=len(holds)), holds_summary(holds, lang))
        )
        sections.append(Section(card.name, lead, entries))
        total += len(holds)
    paged = await _paged(
        update,
        context,
        lang,
        statuses,
        sections,
        total,
        view,
        page,
        HOLDS_PER_PAGE,
        "borrower.holds.empty",
    )
    if paged is None:
        return
    pages, page = paged
    first = sum(len(earlier) for earlier in pages[:page])
    specs: list[tuple[str, Payload]] = []
    several = len(statuses) > 1
    names_of = {card.card: card.name for card in statuses}
    for item in items[first : first + len(pages[page])]:
        if item is None:
            continue
        number, hold = item
        title = hold.title or t(lang, "render.untitled")
        payload = CancelHold(
            hold.order_id, hold.order_type, shorten(title, PAYLOAD_TITLE), card=number
        )
        text = t(lang, "borrower.holds.cancel_button", title=Raw(shorten(title, BUTTON_TITLE)))
        if several:
            text = t(lang, "lists.button_of", label=text, name=names_of[number])
        specs.append((plain(text), payload))
    above = one_per_row(await callback_buttons(update, context, specs))
    header = t(lang, "borrower.holds.header", count=total)
    footer = t(lang, "borrower.holds.footer") if specs else ""
    await _show_sections(
        update,
        context,
        lang,
        "holds",
        cards,
        header,
        pages,
        view,
        page,
        views,
        above=above,
        footer=footer,
    )


async def card_debt(
    update: Update,
    context: Context,
    view: int | None = None,
    page: int = 0,
    views: dict[str, str] | None = None,
) -> None:
    """/debt with several cards: a section per card (or only card `view`), each with its total."""
    found = await _card_statuses(update, context, view)
    if found is None:
        return
    lang, cards, statuses = found
    today = today_in(context)
    sections: list[Section] = []
    owed = 0
    for card in statuses:
        if card.status is None:
            sections.append(card.unread(lang))
            continue
        items = [item for item in card.status.debt if not is_zero_amount(item.amount)]
        if not items:
            sections.append(Section(card.name, t(lang, "lists.debt.none"), ()))
            continue
        total = debt_total(items)
        lead = (
            t(lang, "render.debt.total", amount=format_amount(total[0], total[1], lang))
            if total is not None
            else ""
        )
        sections.append(Section(card.name, lead, render_debt(items, today, lang)))
        owed += len(items)
    paged = await _paged(
        update,
        context,
        lang,
        statuses,
        sections,
        owed,
        view,
        page,
        DEBT_PER_PAGE,
        "borrower.debt.none",
    )
    if paged is None:
        return
    pages, page = paged
    header = t(lang, "borrower.debt.header")
    await _show_sections(update, context, lang, "debt", cards, header, pages, view, page, views)


# A sectioned list's kind (`ListPage.kind`) -> what shows a page of it.
SECTIONED = {"loans": card_loans, "holds": card_holds, "debt": card_debt}


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("loans", loans_command),
        CommandHandler("holds", holds_command),
        CommandHandler("debt", debt_command),
        CallbackQueryHandler(cancel_callback, pattern=rf"^{CancelHold.ACTION}:"),
        CallbackQueryHandler(page_callback, pattern=rf"^{ListPage.ACTION}:"),
    ]
