"""Build the python-telegram-bot `Application`: the bot (`bot.telegram.botapi`), rate
limiter, the private-chat guard and the handlers, listed here in the order they are tried."""

from __future__ import annotations

import logging
import time
from typing import Any

from telegram import Update
from telegram.ext import Application, ApplicationBuilder, BaseHandler

from bot.services import SERVICES_KEY, Services
from bot.telegram.botapi import build_bot
from bot.telegram.context import CONTEXT_TYPES
from bot.telegram.failures import report_failure
from bot.telegram.guard import private_chat_guard
from bot.telegram.handlers import (
    COMMANDS,
    borrower,
    calendar,
    cards,
    connect,
    fallback,
    freetext,
    inline,
    language,
    order,
    paging,
    recommend,
    reminders,
    renew,
    search,
    start,
    whatson,
    where,
)
from bot.telegram.ratelimit import FairRateLimiter, FairUpdateProcessor
from bot.telegram.turns import InOrderUpdateProcessor, SharedTurns

log = logging.getLogger(__name__)

CONCURRENT_UPDATES = 64

AnyApplication = Application[Any, Any, Any, Any, Any, Any]
KNOWN_COMMANDS = frozenset(COMMANDS)


def command_label(update: object) -> str:
    """A bounded label for what an update asked for: a known command, "callback", ..."""
    if not isinstance(update, Update):
        return "other"
    if update.callback_query is not None:
        return "callback"
    if update.inline_query is not None:
        return "inline"
    if update.chosen_inline_result is not None:
        return "inline_shared"
    message = update.effective_message
    text = message.text if message is not None else None
    if text and text.startswith("/"):
        name = text[1:].split(maxsplit=1)[0].split("@", 1)[0].lower() if len(text) > 1 else ""
        return name if name in KNOWN_COMMANDS else "unknown_command"
    if message is not None:
        return "message"
    return "other"


class MeteredApplication(Application[Any, Any, Any, Any, Any, Any]):
    """PTB's `Application` that counts and times every update it processes.

    Overriding `process_update` sees the whole update, from the first handler to the last
    (errors included), which a handler in an early group cannot.
    """

    async def process_update(self, update: object) -> None:
        started = time.perf_counter()
        try:
            await super().process_update(update)
        finally:
            services = self.bot_data.get(SERVICES_KEY)
            if isinstance(services, Services):
                services.metrics.update_handled(
                    command_label(update), time.perf_counter() - started
                )


def area_handlers() -> list[BaseHandler[Any, Any, Any]]:
    """Every command area's handlers (group 0), the fallback last.

    The fallback is in the same group, added last: PTB runs one handler per group, so a later
    group would also answer commands an area already handled. PTB tries a group's handlers in
    order, and no two areas take the same update: the lists patrons ask for most come first.
    """
    areas = (
        borrower,
        start,
        connect,
        cards,
        paging,
        order,
        search,
        where,
        renew,
        reminders,
        calendar,
        whatson,
        recommend,
        freetext,
        inline,
        language,
        fallback,
    )
    return [handler for area in areas for handler in area.handlers()]


def build_application(
    services: Services, *, polling: bool, worker: str = "", turns: SharedTurns | None = None
) -> AnyApplication:
    """The PTB application for `services`; `polling=False` leaves updates to the webhook.

    A chat's updates are handled one at a time, in order (`bot.telegram.turns`). In webhook
    mode on PostgreSQL, other processes may take a chat's updates too: its turns are shared
    through the database (`turns`, which the runtime hands in), as `worker`.
    """
    updates = InOrderUpdateProcessor(FairUpdateProcessor(CONCURRENT_UPDATES), turns, worker)
    # `.bot()` is how PTB takes a bot of a subclass; its requests carry the pools and proxy.
    builder = (
        ApplicationBuilder()
        .application_class(MeteredApplication)
        .context_types(CONTEXT_TYPES)
        .bot(build_bot(services.settings, polling=polling))
        .concurrent_updates(updates)
    )
    if not polling:
        builder = builder.updater(None)
    application: AnyApplication = builder.build()
    application.bot_data[SERVICES_KEY] = services
    if isinstance(limiter := application.bot.rate_limiter, FairRateLimiter):
        services.metrics.watch_sends(limiter)
    # Before everything: edits and group chats stop here (bot.telegram.guard).
    application.add_handler(private_chat_guard(), group=-1)
    application.add_handlers(area_handlers(), group=0)
    application.add_error_handler(on_error)
    return application


async def on_error(update: object, context: Any) -> None:
    """Log the failure (the redaction filter guards secrets) and tell the patron, never silence."""
    await report_failure(update, context, context.error)
