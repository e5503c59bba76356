"""Inline buttons whose payloads are stored (callback data within 64 bytes is only
"<action>:<stored id>"): storing them bound to the chat and user, paging rows, the renew
buttons of /renew and the digests, and resolving or claiming a tapped one."""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from telegram import InlineKeyboardButton, WebAppInfo

from bot.actions import buttons as callbacks
from bot.actions.vocabulary import new_callback_id
from bot.rules.renewals import due_key
from bot.telegram.buttons import (
    ButtonId,
    ListPage,
    OrderFound,
    Payload,
    RenewAll,
    RenewLoan,
    WhereIs,
    encode,
)
from bot.telegram.context import Context
from bot.telegram.replies import StaticKeyboard, answer_query, plain, send
from bot.texts import Raw, t
from bot.texts.formatting import format_date, shorten

if TYPE_CHECKING:
    from telegram import Update

    from bot.actions.vocabulary import CallbackRef
    from bot.library.models import Loan

CALLBACK_DATA_LIMIT = 64
# Plain-text lengths of a title in a button label (a short one where more goes beside it) and
# in a stored payload.
BUTTON_TITLE = 40
SHORT_TITLE = 32
PAYLOAD_TITLE = 120
# Telegram allows 100 inline buttons per message; /renew keeps one for "renew all".
MAX_BUTTONS = 100
MAX_RENEW_BUTTONS = 99
# A digest names each loan on a button of its own only while there are this few.
MAX_DIGEST_RENEW_BUTTONS = 20


def ref_button(text: str, action: str, ref_id: str) -> InlineKeyboardButton:
    """The button for a payload already stored under `ref_id`: data "<action>:<ref_id>"."""
    data = f"{action}:{ref_id}"
    if len(data.encode()) > CALLBACK_DATA_LIMIT:
        raise ValueError(f"callback data for {action!r} exceeds {CALLBACK_DATA_LIMIT} bytes")
    return InlineKeyboardButton(text, callback_data=data)


def stored_rows(specs: Sequence[tuple[str, Payload]]) -> list[tuple[str, dict[str, Any]]]:
    """(action, JSON payload) per (label, payload), as `Store.put_callbacks` takes them."""
    return [(payload.ACTION, encode(payload)) for _, payload in specs]


def stored_buttons(
    specs: Sequence[tuple[str, Payload]], ids: Sequence[str]
) -> list[InlineKeyboardButton]:
    """The buttons for `specs` once stored under `ids`."""
    return [
        ref_button(label, payload.ACTION, ref_id)
        for (label, payload), ref_id in zip(specs, ids, strict=True)
    ]


async def callback_buttons(
    update: Update, context: Context, specs: Sequence[tuple[str, Payload]]
) -> list[InlineKeyboardButton]:
    """A command's inline buttons, (label, payload) each, stored in one transaction.

    Each is bound to the chat and to the user who sent the update: nobody else can press it.
    A `ButtonId` in a payload becomes the stored id of that button of the batch.
    """
    ids = await store_payloads(update, context, [payload for _, payload in specs])
    return stored_buttons(specs, ids)


async def store_payloads(
    update: Update, context: Context, payloads: Sequence[Payload]
) -> list[str]:
    """Store `payloads` as `callback_buttons` does (bound to the chat and user, `ButtonId`s made
    stored ids of the batch); their stored ids in order."""
    ids = [new_callback_id() for _ in payloads]
    rows = [(payload.ACTION, _bind(encode(payload), ids)) for payload in payloads]
    user = update.effective_user
    await callbacks.put(
        context.services, context.chat_id, rows, user_id=user.id if user else None, ids=ids
    )
    return ids


def _bind(value: Any, ids: Sequence[str]) -> Any:
    """`value` with each `ButtonId` in it (also inside lists and dicts) made a stored id."""
    if isinstance(value, ButtonId):
        return ids[int(value)]
    if isinstance(value, dict):
        return {key: _bind(item, ids) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_bind(item, ids) for item in value]
    return value


def page_button(label: str, ref_id: str, page: int) -> InlineKeyboardButton:
    """A button showing page `page` of the long list stored under `ref_id` (`ListPage`)."""
    return ref_button(label, ListPage.ACTION, f"{ref_id}:{page}")


def page_row(lang: str, ref_id: str, page: int, pages: int) -> list[InlineKeyboardButton]:
    """◀ page/pages ▶ under a long list (no ◀ on the first page, no ▶ on the last); the middle
    button shows the same page again, fresh."""
    row = []
    if page > 0:
        row.append(page_button(t(lang, "borrower.page.previous"), ref_id, page - 1))
    position = t(lang, "borrower.page.position", page=page + 1, pages=pages)
    row.append(page_button(position, ref_id, page))
    if page < pages - 1:
        row.append(page_button(t(lang, "borrower.page.next"), ref_id, page + 1))
    return row


def one_per_row(buttons: Sequence[InlineKeyboardButton]) -> list[list[InlineKeyboardButton]]:
    return [[button] for button in buttons]


def ref_id_of(update: Update) -> str:
    """The stored callback row a tapped button points at (`<action>:<id>`)."""
    query = update.callback_query
    if query is None:
        return ""
    # "<action>:<id>", or "<action>:<id>:<page>" for a page of a long list.
    parts = str(query.data or "").split(":", 2)
    return parts[1] if len(parts) > 1 else ""


def action_of(update: Update) -> str:
    """The action a tapped button's data names (`<action>:<id>`): the stored row must have been
    made for it, so a stored id under another prefix (forged data) names no button."""
    query = update.callback_query
    return "" if query is None else str(query.data or "").partition(":")[0]


async def peek_callback(update: Update, context: Context) -> CallbackRef | None:
    """The tapped button's row without answering the tap or using it up."""
    ref_id = ref_id_of(update)
    if not ref_id:
        return None
    return await callbacks.stored(
        context.services, ref_id, context.chat_id, action=action_of(update)
    )


async def resolve_callback(
    update: Update, context: Context, *, claim: bool = False, asks: bool = False
) -> CallbackRef | None:
    """The stored payload behind a tapped button, answering the tap either way.

    `claim=True` makes the button single-use (the first tap wins). Unknown ids, buttons of
    another chat and used buttons get `common.stale_button` and None; a button shown to
    another user of the chat gets `common.not_your_button` and None. `asks=True`: the tap is
    answered with a new message (a question, a map), so the second tap of a double tap gets
    `common.tapped_twice` and None, not a second one.
    """
    query = update.callback_query
    assert query is not None
    chat_id = context.chat_id
    user_id = query.from_user.id
    ref_id = ref_id_of(update)
    action = action_of(update)
    svc = context.services
    ref = None
    if ref_id:
        lookup = callbacks.claim if claim else callbacks.stored
        ref = await lookup(svc, ref_id, chat_id, user_id=user_id, action=action)
    outcome = "ok"
    if ref is None or (not claim and ref.used_at is not None):
        outcome = "claimed" if ref is not None else "stale"
        if ref is None and ref_id:
            owner = await callbacks.shown_to(svc, ref_id, chat_id, action=action)
            if owner is not None and owner != user_id:
                outcome = "foreign"
            elif claim:
                # A lost claim: tell "already used" apart from "unknown or expired" for metrics.
                seen = await callbacks.stored(svc, ref_id, chat_id, user_id=user_id, action=action)
                outcome = "claimed" if seen is not None and seen.used_at is not None else "stale"
    elif asks:
        if not await callbacks.first_tap(svc, ref.id, chat_id):
            outcome = "repeat"
    else:
        await callbacks.other_tap(svc, chat_id)
    context.services.metrics.callback((query.data or "").partition(":")[0], outcome)
    if outcome != "ok":
        keys = {"foreign": "common.not_your_button", "repeat": "common.tapped_twice"}
        await answer_query(update, t(context.lang, keys.get(outcome, "common.stale_button")))
        return None
    await answer_query(update)
    return ref


async def tapped_once(
    update: Update, context: Context, already_key: str, *, asks: bool = False
) -> CallbackRef | None:
    """The tapped button's row, unclaimed, answering the tap: for a button that acts exactly
    once and whose action claims it. A button used already is told `already_key` (not "stale
    button"); an unknown one or another user's is told so by `resolve_callback`, as is a
    double tap of one that `asks`."""
    lang = context.lang
    peek = await peek_callback(update, context)
    if peek is not None and peek.used_at is not None:
        context.services.metrics.callback(peek.action, "claimed")
        await answer_query(update, t(lang, already_key))
        return None
    ref = await resolve_callback(update, context, asks=asks)
    if ref is None:
        again = await peek_callback(update, context)
        if again is not None and again.used_at is not None:
            await send(context.bot, context.chat_id, t(lang, already_key))
    return ref


def renew_payload(loan: Loan, lang: str, number: int = 1, cid: str | None = None) -> RenewLoan:
    """A loan's renew button, as /renew and reminder digests store it."""
    title = loan.title or t(lang, "render.untitled")
    return RenewLoan(loan.loan_id, shorten(title, PAYLOAD_TITLE), due_key(loan), number, cid)


def renew_buttons(
    loans: Sequence[Loan],
    lang: str,
    *,
    every: Sequence[Loan],
    today: dt.date | None = None,
    digest: bool = False,
    each: bool = True,
    number: int = 1,
    cid: str | None = None,
    owner: str | None = None,
) -> list[tuple[str, Payload]]:
    """(label, payload) of the renew buttons for `loans` of card `card` (identity `cid`), and
    "renew all" for `every` listed.

    /renew puts "renew all" first and names each loan with its due date; a reminder digest
    names each loan only while there are few (and `each`: a family's digest may have no room),
    and puts "renew all" last, naming the card's `owner` when the digest is a family's.
    """
    if not loans:
        return []
    renew_all = RenewAll(tuple(loan.loan_id for loan in every), number=number, cid=cid)
    if digest:
        specs: list[tuple[str, Payload]] = []
        if each and len(loans) <= MAX_DIGEST_RENEW_BUTTONS:
            for loan in loans:
                title = shorten(loan.title, SHORT_TITLE) or "?"
                label = plain(t(lang, "reminders.button.renew", title=title))
                specs.append((label, renew_payload(loan, lang, number, cid)))
        every_label = (
            t(lang, "reminders.button.renew_all")
            if owner is None
            else plain(t(lang, "card.renew_all", name=owner))
        )
        specs.append((every_label, renew_all))
        return specs
    specs = [(t(lang, "borrower.renew.all"), renew_all)]
    for loan in loans[:MAX_RENEW_BUTTONS]:
        label = t(
            lang,
            "borrower.renew.button",
            title=Raw(shorten(loan.title or t(lang, "render.untitled"), SHORT_TITLE)),
            due=Raw(format_date(loan.due_date, lang, today=today)),
        )
        specs.append((label, renew_payload(loan, lang, number, cid)))
    return specs


def overview_keyboard(context: Context) -> StaticKeyboard | None:
    """The "📚 Overview" button that opens the Mini App (`{PUBLIC_URL}/app/`): only where it can
    open, as Telegram requires https for a `web_app` address, but in its test environment (the
    demo's stand-in is addressed as that)."""
    settings = context.services.settings
    url = (settings.PUBLIC_URL or "").rstrip("/")
    if not url or not (url.startswith("https://") or settings.TELEGRAM_TEST_ENVIRONMENT):
        return None
    return _overview(context.lang, url)


def overview_rows(context: Context) -> list[list[InlineKeyboardButton]]:
    """`overview_keyboard` as rows, under other buttons."""
    keyboard = overview_keyboard(context)
    return [] if keyboard is None else [list(row) for row in keyboard.inline_keyboard]


@functools.lru_cache(maxsize=64)
def _overview(lang: str, url: str) -> StaticKeyboard:
    button = InlineKeyboardButton(plain(t(lang, "app.button")), web_app=WebAppInfo(f"{url}/app/"))
    return StaticKeyboard([[button]])


def order_and_where(
    lang: str, number: int, title: str, order: OrderFound, pid: str
) -> list[tuple[str, Payload]]:
    """A listed work's "📥 Order <n>: <title>" and "🗺 <n>" (where it stands), in that order."""
    text = t(lang, "borrower.search.button", number=number, title=Raw(title))
    return [(text, order), (t(lang, "shelf.button_numbered", number=number), WhereIs(pid))]


def in_pairs(buttons: Sequence[InlineKeyboardButton]) -> list[list[InlineKeyboardButton]]:
    """Each work's Order and "where is it?" side by side (`order_and_where`)."""
    return [list(buttons[n : n + 2]) for n in range(0, len(buttons), 2)]
