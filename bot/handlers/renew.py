"""/renew: the loans with a button each and "renew all"; each result is reported.

The `renew` (payload `{"loan_id", "title"}`) and `renewall` (payload `{}`) buttons are also
put in reminder digests, so results go out as new messages: the list or digest stays.
Each button renews once (its stored row is claimed); renewals are never retried.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from typing import TYPE_CHECKING, Any

from telegram import InlineKeyboardButton, Update
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from bot.formatting import format_date, split_messages
from bot.handlers.borrower import (
    PAYLOAD_TITLE,
    Deadline,
    claim_once,
    loans_status,
    send_messages,
    shorten,
    today_in,
)
from bot.handlers.common import (
    Context,
    answer_library_error,
    callback_buttons,
    chat_id_of,
    lang_of,
    send,
)
from bot.library.errors import LibraryError, Refused, ServiceUnavailable, TokenRejected
from bot.render import sort_loans
from bot.services import services
from bot.texts import Raw, t

if TYPE_CHECKING:
    from bot.library.models import Loan, RenewResult

log = logging.getLogger(__name__)

# Telegram allows 100 buttons per message; one is "renew all".
MAX_LOAN_BUTTONS = 99
BUTTON_TITLE = 32
# Renewals in flight at once for "renew all": quick for 60+ loans, gentle on the platform.
RENEW_CONCURRENCY = 6

# Substrings of refusal codes seen from library systems, and what they mean in plain words.
REASONS: tuple[tuple[str, str], ...] = (
    ("max", "borrower.renew.reason.max"),
    ("limit", "borrower.renew.reason.max"),
    ("reserv", "borrower.renew.reason.reserved"),
    ("hold", "borrower.renew.reason.reserved"),
    ("too early", "borrower.renew.reason.too_early"),
    ("too_early", "borrower.renew.reason.too_early"),
    ("not renewable", "borrower.renew.reason.not_renewable"),
    ("not_renewable", "borrower.renew.reason.not_renewable"),
    ("debt", "borrower.renew.reason.debt"),
    ("fee", "borrower.renew.reason.debt"),
    ("not found", "borrower.renew.reason.not_found"),
    ("not_found", "borrower.renew.reason.not_found"),
    ("refused", "borrower.renew.reason.refused"),
    ("unknown loan", "borrower.renew.reason.not_found"),
)


def refusal_reason(exc: LibraryError, lang: str) -> str:
    """Why a renewal was refused: plain words for a known code, else the code as sent."""
    code = (exc.code or "").strip()
    lowered = f"{code} {exc.description or ''}".lower().replace("-", " ")
    for needle, key in REASONS:
        if needle in lowered:
            return t(lang, key)
    if not code:
        return t(lang, "borrower.renew.reason.unknown")
    return t(lang, "borrower.renew.reason.code", code=shorten(code, 120))


def result_line(
    title: str,
    outcome: RenewResult | LibraryError,
    today: dt.date,
    lang: str,
) -> str:
    """One loan's renewal as a line: new due date, the refusal in words, or no answer."""
    if isinstance(outcome, Refused):
        return t(lang, "borrower.renew.refused", title=title, reason=refusal_reason(outcome, lang))
    if isinstance(outcome, LibraryError):
        return t(lang, "borrower.renew.no_answer", title=title)
    if outcome.return_date is None:
        return t(lang, "borrower.renew.ok_no_date", title=title)
    date = format_date(outcome.return_date, lang, today=today)
    return t(lang, "borrower.renew.ok", title=title, date=date)


async def tell_failure(update: Update, context: Context, exc: LibraryError, lang: str) -> None:
    """Report a failed call in a new message, so the tapped list or digest stays in the chat.

    A refused token still goes through `answer_library_error` (forget and reconnect prompt),
    which sends rather than edits.
    """
    if isinstance(exc, TokenRejected):
        await answer_library_error(update, context, exc, lang)
        return
    log.warning("renewal failed: %s (%s)", type(exc).__name__, exc.code or exc.status)
    key = "common.unavailable" if isinstance(exc, ServiceUnavailable) else "common.malformed"
    await send(context, chat_id_of(update), t(lang, key))


def _title(loan: Loan, lang: str) -> str:
    return loan.title or t(lang, "render.untitled")


async def renew_command(update: Update, context: Context) -> None:
    started = await loans_status(update, context, "borrower.renew.empty")
    if started is None:
        return
    lang, status = started
    today = today_in(context)
    chat_id = chat_id_of(update)
    loans = sort_loans(status.loans)
    specs: list[tuple[str, str, dict[str, Any]]] = [(t(lang, "borrower.renew.all"), "renewall", {})]
    for loan in loans[:MAX_LOAN_BUTTONS]:
        title = _title(loan, lang)
        text = t(
            lang,
            "borrower.renew.button",
            title=Raw(shorten(title, BUTTON_TITLE)),
            due=Raw(format_date(loan.due_date, lang, today=today)),
        )
        payload = {"loan_id": loan.loan_id, "title": shorten(title, PAYLOAD_TITLE)}
        specs.append((text, "renew", payload))
    buttons: list[list[InlineKeyboardButton]] = [
        [button] for button in await callback_buttons(update, context, specs)
    ]
    header = t(lang, "borrower.renew.header", count=len(loans))
    await send(context, chat_id, header, buttons=buttons)


async def renew_callback(update: Update, context: Context) -> None:
    """A loan's "renew" button (from /renew or a reminder digest)."""
    lang = await lang_of(update, context)
    claimed = await claim_once(update, context, lang, "borrower.renew.already")
    if claimed is None:
        return
    account, ref = claimed
    title = str(ref.payload.get("title") or t(lang, "render.untitled"))
    loan_id = str(ref.payload.get("loan_id", ""))
    try:
        result = await Deadline().run(services(context).library.renew(account.token, loan_id))
    except Refused as exc:
        outcome: RenewResult | LibraryError = exc
    except LibraryError as exc:
        if not (isinstance(exc, ServiceUnavailable) and exc.status is None):
            await tell_failure(update, context, exc, lang)
            return
        outcome = exc  # sent once, never answered readably: "no answer, see /loans"
    else:
        outcome = result
    await send(context, chat_id_of(update), result_line(title, outcome, today_in(context), lang))


async def renew_all_callback(update: Update, context: Context) -> None:
    """ "Renew all": reads the loans fresh, renews each, reports every result."""
    lang = await lang_of(update, context)
    claimed = await claim_once(update, context, lang, "borrower.renew.already")
    if claimed is None:
        return
    account, _ = claimed
    deadline = Deadline()
    library = services(context).library
    try:
        status = await deadline.run(library.user(account.token))
    except LibraryError as exc:
        await tell_failure(update, context, exc, lang)
        return
    if not status.loans:
        await send(context, chat_id_of(update), t(lang, "borrower.renew.empty"))
        return
    loans = sort_loans(status.loans)
    gate = asyncio.Semaphore(RENEW_CONCURRENCY)

    async def renew_one(loan: Loan) -> RenewResult | LibraryError:
        async with gate:
            try:
                return await library.renew(account.token, loan.loan_id)
            except TokenRejected:
                raise
            except LibraryError as exc:
                return exc

    tasks = [asyncio.create_task(renew_one(loan)) for loan in loans]
    done, pending = await asyncio.wait(tasks, timeout=deadline.remaining())
    for task in pending:
        task.cancel()
    for task in done:
        error = task.exception()
        if isinstance(error, TokenRejected):
            await tell_failure(update, context, error, lang)
            return
        if error is not None:
            raise error
    today = today_in(context)
    lines = []
    for loan, task in zip(loans, tasks, strict=True):
        outcome = (
            task.result()
            if task in done
            else ServiceUnavailable("no answer in time", code="timeout")
        )
        lines.append(result_line(_title(loan, lang), outcome, today, lang))
    messages = split_messages(lines, header=t(lang, "borrower.renew.results"), separator="\n")
    await send_messages(update, context, messages)


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("renew", renew_command),
        CallbackQueryHandler(renew_callback, pattern=r"^renew:"),
        CallbackQueryHandler(renew_all_callback, pattern=r"^renewall:"),
    ]
