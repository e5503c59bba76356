"""The answer to a failure: what the patron is told when the library fails, refuses the patron
or refuses a card's token (the card is then forgotten); never silence."""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any

from telegram import Update
from telegram.error import Forbidden, TelegramError

from bot.actions import cards as card_actions
from bot.actions.vocabulary import is_unavailable
from bot.library.errors import (
    ClientFault,
    LibraryError,
    NotLoggedIn,
    ServiceUnavailable,
    TokenRejected,
)
from bot.services import SERVICES_KEY
from bot.telegram.cards import NEW, lapse_card, send_login, tell_lapsed
from bot.telegram.context import Context, lang_of, told_lang
from bot.telegram.replies import answer_query, answer_tap, reply, send
from bot.texts import DEFAULT_LANGUAGE, t

if TYPE_CHECKING:
    from bot.actions.vocabulary import Card

log = logging.getLogger(__name__)

# `LibraryError.code` of a patron the library system did not accept (recorded for /v3/user).
USER_REFUSED = "user authentication failed"


def error_text(lang: str, error: BaseException | None) -> str:
    """What the patron is told about a failure: the library not answering, refusing the patron
    as a borrower, or answering something unreadable; anything else is the bot's own fault."""
    if not isinstance(error, LibraryError) or isinstance(error, ClientFault):
        # A request the platform refused as malformed is the bot's fault, never the library's.
        return t(lang, "common.error")
    if (error.code or "").strip().lower() == USER_REFUSED:
        # The library system did not accept the patron (recorded for /v3/user, as a 500):
        # not an outage.
        return t(lang, "common.user_refused", code=error.code)
    if isinstance(error, TokenRejected):
        # A refusal that did not lapse the card: a login raced the call (`lapse_card`).
        return t(lang, "common.logged_in_meanwhile")
    if isinstance(error, ServiceUnavailable):
        return t(lang, "common.unavailable")
    return t(lang, "common.malformed")


async def report_failure(update: object, context: Any, error: object) -> None:
    """An update or job that failed: logged, and the patron told once, never silence.

    While the database is away every update fails alike: the store says so once
    (`storage.database.Availability`), the update only at DEBUG, and the patron is told that
    the bot itself is in trouble, in the language known without the database.
    """
    outage = isinstance(error, BaseException) and is_unavailable(error)
    with contextlib.suppress(KeyError, TypeError):
        if isinstance(update, Update):  # job failures are not update errors
            context.application.bot_data[SERVICES_KEY].metrics.update_errors.inc()
    if outage:
        log.debug("update not handled, the database is unavailable: %s", type(error).__name__)
    elif isinstance(error, BaseException):
        log.error("update failed: %s", type(error).__name__, exc_info=error)
    else:
        log.error("update failed")
    if not isinstance(update, Update) or update.effective_chat is None:
        return
    chat_id = update.effective_chat.id
    if outage:
        text = t(told_lang(update, context), "common.outage")
    else:
        lang = DEFAULT_LANGUAGE
        try:
            lang = await lang_of(update, context)
        except Exception:  # the store itself may be what failed
            log.debug("language unknown while reporting an error")
        text = error_text(lang, error if isinstance(error, BaseException) else None)
    await answer_query(update)
    try:
        await send(context.bot, chat_id, text)
    except Forbidden:
        log.info("chat %s blocked the bot; error not reported", chat_id)
    except TelegramError as exc:
        log.warning("could not report an error to the chat: %s", type(exc).__name__)


def public_failure(exc: LibraryError) -> LibraryError:
    """A refused anonymous token is the bot's problem, never a reason to log the patron out."""
    if isinstance(exc, TokenRejected | NotLoggedIn):
        return ServiceUnavailable("the anonymous token was refused", code=exc.code)
    return exc


async def answer_library_error(
    update: Update,
    context: Context,
    exc: LibraryError,
    *,
    edit: bool = True,
    card: Card | None = None,
) -> None:
    """Turn a library failure of a call made with `card` (None: the chat's card 1) into the
    patron-facing answer; never stays silent.

    A refused token lapses that card (`cards.lapse_card` names every lapsed card, each with
    its login button). Otherwise the answer replaces the tapped message (`edit`), or comes as
    a new one (`tell_library_error`) so a tapped list or digest stays in the chat.
    """
    if not edit or isinstance(exc, TokenRejected):
        await tell_library_error(context, exc, card=card)
        return
    await answer_tap(context.query)
    _log(exc)
    await reply(update, context, error_text(context.lang, exc))


async def tell_library_error(
    context: Context, exc: LibraryError, *, card: Card | None = None
) -> None:
    """`answer_library_error` in a new message."""
    lang = context.lang
    chat_id = context.chat_id
    await answer_tap(context.query)
    if isinstance(exc, TokenRejected):
        svc = context.services
        refused = card if card is not None else await card_actions.card(svc, chat_id)
        if refused is not None and await lapse_card(context, refused, lang) is not None:
            return
        cards = await card_actions.of_chat(svc, chat_id, lapsed=True)
        now = next((a for a in cards if refused is not None and a.card_id == refused.card_id), None)
        if now is not None and now.is_lapsed:  # another task lapsed it first
            await tell_lapsed(context, [now], lang)
        elif now is not None:
            # A login raced the call: the card holds a new token, and stays.
            await send(context.bot, chat_id, t(lang, "common.logged_in_meanwhile"))
        elif cards:  # logged out meanwhile
            await send(context.bot, chat_id, t(lang, "cards.gone"))
        else:
            await send_login(context, chat_id, lang, lead=t(lang, NEW))
        return
    _log(exc)
    await send(context.bot, chat_id, error_text(lang, exc))


def _log(exc: LibraryError) -> None:
    log.warning("library call failed: %s (%s)", type(exc).__name__, exc.code or exc.status)
