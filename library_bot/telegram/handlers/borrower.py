"""/loans, /holds (and cancelling a hold), /debt, and helpers the other borrower commands share.

Every answer must reach the patron within about ten seconds even when the library services
hang, so each update runs its library calls under one `Deadline`: when it runs out the call is
abandoned and the patron hears "the library system is not answering".
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import re
import time
from collections.abc import Awaitable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from telegram import InlineKeyboardButton, Update
from telegram.error import TelegramError
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from library_bot.library.errors import (
    LibraryError,
    NotLoggedIn,
    Refused,
    ServiceUnavailable,
    TokenRejected,
)
from library_bot.rules.renewals import refusal_for
from library_bot.rules.urgency import hold_is_ready, sort_holds, sort_loans
from library_bot.services import services
from library_bot.services.polling import refresh_plan
from library_bot.telegram.handlers.common import (
    ButtonId,
    Buttons,
    Context,
    answer_library_error,
    callback_buttons,
    chat_and_lang,
    chat_id_of,
    lang_of,
    reply,
    require_account,
    resolve_callback,
    send,
)
from library_bot.texts import Raw, t
from library_bot.texts.formatting import format_amount, is_zero_amount, split_messages
from library_bot.texts.render import debt_total, reason_text, render_debt, render_hold, render_loan

if TYPE_CHECKING:
    from library_bot.library.client import LibraryClient
    from library_bot.library.models import BorrowerStatus
    from library_bot.storage.store import Account, CallbackRef, ChatSettings

log = logging.getLogger(__name__)

T = TypeVar("T")

# Seconds an update may spend on library calls; leaves room to send the answer within 10 s.
ANSWER_BUDGET = 9.0
BRANCH_NAMES_KEY = "borrower.branch_names"
BRANCH_NAMES_TTL = 3600.0
# Telegram allows 100 inline buttons per message.
MAX_BUTTONS = 100
BUTTON_TITLE = 40
PAYLOAD_TITLE = 120

_ISIL = re.compile(r"^(?:DK-?)?(\d{6})$", re.IGNORECASE)


class Deadline:
    """The time left to answer one update; a library call still running when it ends is cut."""

    def __init__(self, seconds: float = ANSWER_BUDGET) -> None:
        self._end = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(0.0, self._end - time.monotonic())

    async def run(self, awaitable: Awaitable[T]) -> T:
        """Await within the time left; running out counts as the service not answering."""
        try:
            async with asyncio.timeout(self.remaining()):
                return await awaitable
        except TimeoutError:
            raise ServiceUnavailable("no answer within the answer budget", code="timeout") from None


def normalise_branch(text: str | None) -> str | None:
    """A branch in ISIL form (`DK-761500`) from `DK-761500`, `dk-761500` or `761500`, else None."""
    match = _ISIL.match((text or "").strip())
    return f"DK-{match.group(1)}" if match else None


def agencies_of(branch_ids: Iterable[str]) -> list[str]:
    """The agency ids to ask `/v3/libraries` for, to learn the names of `branch_ids`.

    The endpoint lists branches by agency. A Danish public library's branches share the first
    four digits of its agency id, which ends in `00` (DK-710104 belongs to 710100); the
    branch's own digits are asked for too, in case it is an agency itself.
    """
    agencies: set[str] = set()
    for branch_id in branch_ids:
        isil = normalise_branch(branch_id)
        if isil is None:
            continue
        digits = isil.removeprefix("DK-")
        agencies.update({f"DK-{digits}", f"DK-{digits[:4]}00"})
    return sorted(agencies)


def shorten(text: str, limit: int = BUTTON_TITLE) -> str:
    """Plain text cut to `limit` characters with an ellipsis (for buttons and payloads)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def today_in(context: Context) -> dt.date:
    """Today in the bot's time zone, which is what due dates are compared against."""
    return dt.datetime.now(services(context).settings.timezone).date()


def public_failure(exc: LibraryError) -> LibraryError:
    """A refused anonymous token is the bot's problem, never a reason to log the patron out."""
    if isinstance(exc, TokenRejected | NotLoggedIn):
        return ServiceUnavailable("the anonymous token was refused", code=exc.code)
    return exc


class BranchNames:
    """Pick-up branch names from `/v3/libraries`, remembered for an hour per process."""

    def __init__(self, ttl: float = BRANCH_NAMES_TTL) -> None:
        self._ttl = ttl
        self._names: dict[str, tuple[str, float]] = {}
        self._catalogues: dict[str, str] = {}

    def catalogue(self, branch_id: str) -> str | None:
        """The branch's own catalogue, as `/v3/libraries` named it (`branchCatalogueUrl`)."""
        return self._catalogues.get(normalise_branch(branch_id) or branch_id)

    async def check(
        self, library: LibraryClient, branch_id: str, deadline: Deadline
    ) -> BranchCheck:
        """Ask `/v3/libraries` for the branch's agency: does the branch exist, take pick-ups?"""
        isil = normalise_branch(branch_id) or branch_id
        try:
            async with asyncio.timeout(deadline.remaining() / 2):
                branches = await library.libraries_public(agencies_of([isil]))
        except (LibraryError, TimeoutError) as exc:
            log.warning("pick-up branch not checked: %s", type(exc).__name__)
            return BranchCheck(None)
        expires = time.monotonic() + self._ttl
        found: BranchCheck = BranchCheck(False)
        for branch in branches:
            key = normalise_branch(branch.branch_id) or branch.branch_id
            if branch.branch_name:
                self._names[key] = (branch.branch_name, expires)
            if branch.branch_catalogue_url:
                self._catalogues[key] = branch.branch_catalogue_url
            if key == isil:
                found = BranchCheck(True, branch.allows_pickup, branch.branch_catalogue_url)
        return found

    def known(self, branch_id: str | None) -> str | None:
        key = normalise_branch(branch_id) or branch_id
        if key is None:
            return None
        found = self._names.get(key)
        if found is None or found[1] < time.monotonic():
            return None
        return found[0]

    async def lookup(
        self, library: LibraryClient, ids: Iterable[str | None], deadline: Deadline
    ) -> dict[str, str]:
        """Names for `ids` (keyed as given and in ISIL form); unknown ones are left out.

        Names are decoration: a failing or slow call only means ISIL ids are shown, so it gets
        at most half of the time left.
        """
        wanted = {i for i in ids if i}
        missing = {normalise_branch(i) or i for i in wanted if self.known(i) is None}
        if missing:
            try:
                async with asyncio.timeout(deadline.remaining() / 2):
                    branches = await library.libraries_public(agencies_of(missing))
            except (LibraryError, TimeoutError) as exc:
                log.warning("branch names unavailable: %s", type(exc).__name__)
            else:
                expires = time.monotonic() + self._ttl
                for branch in branches:
                    key = normalise_branch(branch.branch_id) or branch.branch_id
                    if branch.branch_name:
                        self._names[key] = (branch.branch_name, expires)
        names: dict[str, str] = {}
        for branch_id in wanted:
            name = self.known(branch_id)
            if name is not None:
                names[branch_id] = name
                names[normalise_branch(branch_id) or branch_id] = name
        return names


class BranchCheck:
    """What `/v3/libraries` says about a pick-up branch: known, and whether it takes pick-ups."""

    def __init__(self, known: bool | None, pickup: bool = True, catalogue: str | None = None):
        self.known = known  # None: could not be checked (the platform failed)
        self.pickup = pickup
        self.catalogue = catalogue


def branch_names(context: Context) -> BranchNames:
    """The process's branch-name cache, kept in `Services.extras`."""
    extras = services(context).extras
    found = extras.get(BRANCH_NAMES_KEY)
    if not isinstance(found, BranchNames):
        found = BranchNames()
        extras[BRANCH_NAMES_KEY] = found
    return found


async def borrower_status(
    update: Update,
    context: Context,
    account: Account,
    lang: str,
    deadline: Deadline,
    chat: ChatSettings | None = None,
) -> BorrowerStatus | None:
    """`/v3/user` for the patron, or None after the patron has been told what went wrong.

    `chat` (the settings the caller already read, if any) saves the plan a read of its own.
    """
    svc = services(context)
    try:
        status = await deadline.run(svc.library.user(account.token))
    except LibraryError as exc:
        await answer_library_error(update, context, exc, lang)
        return None
    await refresh_plan(svc.store, svc.settings, account, status, chat=chat)
    return status


async def command_status(update: Update, context: Context) -> tuple[str, BorrowerStatus] | None:
    """How every borrower command starts: the language, a connected account, a fresh status.

    None once the patron has been answered (not connected, or the platform failed).
    """
    chat, lang = await chat_and_lang(update, context)
    account = await require_account(update, context)
    if account is None:
        return None
    status = await borrower_status(update, context, account, lang, Deadline(), chat)
    return None if status is None else (lang, status)


async def loans_status(
    update: Update, context: Context, empty_key: str
) -> tuple[str, BorrowerStatus] | None:
    """`command_status` for the commands about loans: None also when there are none, after
    telling the patron so with the text `empty_key`."""
    started = await command_status(update, context)
    if started is None:
        return None
    lang, status = started
    if not status.loans:
        await reply(update, context, t(lang, empty_key))
        return None
    return started


def ref_id_of(update: Update) -> str:
    """The stored callback row a tapped button points at (`<action>:<id>`)."""
    query = update.callback_query
    return str(query.data or "").partition(":")[2] if query is not None else ""


async def peek_callback(update: Update, context: Context) -> CallbackRef | None:
    """The tapped button's row without answering the tap or using it up."""
    ref_id = ref_id_of(update)
    if not ref_id:
        return None
    return await services(context).store.callback(ref_id, chat_id_of(update))


async def claim_once(
    update: Update, context: Context, lang: str, already_key: str
) -> tuple[Account, CallbackRef] | None:
    """The account and the tapped button's row, for a button that acts exactly once.

    The row is claimed atomically only once the patron is known to be connected. A later tap,
    or one that loses a race, is told `already_key` instead of "stale button".
    """
    query = update.callback_query
    assert query is not None
    peek = await peek_callback(update, context)
    if peek is not None and peek.used_at is not None:
        services(context).metrics.callback(peek.action, "claimed")
        try:
            await query.answer(t(lang, already_key))
        except TelegramError as exc:
            log.debug("callback query not answered: %s", type(exc).__name__)
        return None
    ref = await resolve_callback(update, context)
    if ref is None:
        again = await peek_callback(update, context)
        if again is not None and again.used_at is not None:
            await send(context, chat_id_of(update), t(lang, already_key))
        return None
    account = await require_account(update, context)
    if account is None:
        return None
    if await services(context).store.claim_callback(ref.id, chat_id_of(update)) is None:
        await send(context, chat_id_of(update), t(lang, already_key))
        return None
    return account, ref


async def send_messages(
    update: Update, context: Context, messages: Sequence[str], buttons: Buttons | None = None
) -> None:
    """Send split messages in order; buttons go under the last one."""
    chat_id = chat_id_of(update)
    for index, text in enumerate(messages):
        last = index == len(messages) - 1
        await send(context, chat_id, text, buttons=buttons if last else None)


# --- /loans ---------------------------------------------------------------------------------


async def loans_command(update: Update, context: Context) -> None:
    # Read while the platform answers: the list needs both, and this one is off the path.
    reading = asyncio.ensure_future(services(context).store.refusals(chat_id_of(update)))
    started = await loans_status(update, context, "borrower.loans.empty")
    refusals = await reading
    if started is None:
        return
    lang, status = started
    today = today_in(context)
    entries = []
    for loan in sort_loans(status.loans):
        refusal = refusal_for(loan, refusals)
        reason = reason_text(refusal.reason, lang) if refusal is not None else None
        entries.append(render_loan(loan, today, lang, reason))
    header = t(lang, "borrower.loans.header", count=len(status.loans))
    await send_messages(update, context, split_messages(entries, header=header))


# --- /holds and cancelling one -------------------------------------------------------------


async def holds_command(update: Update, context: Context) -> None:
    lang = await lang_of(update, context)
    account = await require_account(update, context)
    if account is None:
        return
    deadline = Deadline()
    status = await borrower_status(update, context, account, lang, deadline)
    if status is None:
        return
    if not status.orders:
        await reply(update, context, t(lang, "borrower.holds.empty"))
        return
    svc = services(context)
    names = await branch_names(context).lookup(
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
    specs: list[tuple[str, str, dict[str, Any]]] = []
    for hold in holds[:MAX_BUTTONS]:
        title = hold.title or t(lang, "render.untitled")
        payload = {
            "order_id": hold.order_id,
            "order_type": hold.order_type,
            "title": shorten(title, PAYLOAD_TITLE),
        }
        text = t(lang, "borrower.holds.cancel_button", title=Raw(shorten(title)))
        specs.append((text, "cancel", payload))
    buttons: list[list[InlineKeyboardButton]] = [
        [button] for button in await callback_buttons(update, context, specs)
    ]
    messages = split_messages(
        entries,
        header=t(lang, "borrower.holds.header", count=len(holds)),
        footer=t(lang, "borrower.holds.footer"),
    )
    await send_messages(update, context, messages, buttons)


async def cancel_callback(update: Update, context: Context) -> None:
    """The `cancel` buttons: a hold's button asks, "yes" cancels it, "no" keeps it."""
    lang = await lang_of(update, context)
    peek = await peek_callback(update, context)
    if peek is not None and peek.payload.get("confirm"):
        claimed = await claim_once(update, context, lang, "borrower.cancel.already")
        if claimed is not None:
            await _cancel_hold(update, context, lang, *claimed)
        return
    ref = await resolve_callback(update, context)
    if ref is None:
        return
    if "keep" in ref.payload:
        await _keep_hold(update, context, lang, ref.payload)
    else:
        await _ask_cancel(update, context, lang, ref.payload)


def _hold_title(payload: dict[str, Any], lang: str) -> str:
    return str(payload.get("title") or t(lang, "render.untitled"))


async def _ask_cancel(update: Update, context: Context, lang: str, payload: dict[str, Any]) -> None:
    # A new message, so the list of holds (and its other buttons) stays in the chat.
    chat_id = chat_id_of(update)
    title = _hold_title(payload, lang)
    yes, no = await callback_buttons(
        update,
        context,
        [
            (t(lang, "borrower.cancel.yes"), "cancel", {**payload, "confirm": True}),
            (t(lang, "borrower.cancel.no"), "cancel", {"keep": ButtonId(0), "title": title}),
        ],
    )
    await send(
        context, chat_id, t(lang, "borrower.cancel.confirm", title=title), buttons=[[yes, no]]
    )


async def _cancel_hold(
    update: Update, context: Context, lang: str, account: Account, ref: CallbackRef
) -> None:
    title = _hold_title(ref.payload, lang)
    try:
        result = await Deadline().run(
            services(context).library.cancel_order(
                account.token,
                str(ref.payload.get("order_id", "")),
                str(ref.payload.get("order_type") or "normal"),
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
        await answer_library_error(update, context, exc, lang)
        return
    key = "borrower.cancel.done" if result.deleted else "borrower.cancel.not_done"
    await reply(update, context, t(lang, key, title=title))


async def _keep_hold(update: Update, context: Context, lang: str, payload: dict[str, Any]) -> None:
    confirm = await services(context).store.callback(str(payload["keep"]), chat_id_of(update))
    if confirm is not None and confirm.used_at is not None:
        await reply(update, context, t(lang, "borrower.cancel.already"))
        return
    await reply(update, context, t(lang, "borrower.cancel.kept", title=_hold_title(payload, lang)))


# --- /debt ----------------------------------------------------------------------------------


async def debt_command(update: Update, context: Context) -> None:
    started = await command_status(update, context)
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


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("loans", loans_command),
        CommandHandler("holds", holds_command),
        CommandHandler("debt", debt_command),
        CallbackQueryHandler(cancel_callback, pattern=r"^cancel:"),
    ]
