"""Build the python-telegram-bot `Application`: the bot (`library_bot.telegram.botapi`), rate
limiter, handlers."""

from __future__ import annotations

import contextlib
import importlib
import logging
import pkgutil
import time
from typing import Any

from telegram import Update
from telegram.error import Forbidden, TelegramError
from telegram.ext import Application, ApplicationBuilder, BaseHandler

import library_bot.telegram.handlers
from library_bot.library.errors import ServiceUnavailable
from library_bot.services import SERVICES_KEY, Services
from library_bot.telegram.botapi import build_bot, telegram_request
from library_bot.telegram.handlers import COMMANDS, fallback
from library_bot.telegram.handlers.common import lang_of, private_chat_guard
from library_bot.telegram.ratelimit import FairUpdateProcessor, paced_rate_limiter
from library_bot.texts import t

log = logging.getLogger(__name__)

# Modules of bot/handlers that are not a command area of their own.
NOT_AREAS = frozenset({"common", "fallback"})
CONCURRENT_UPDATES = 64
# Connections to the Bot API for sends. httpx's pool (httpcore) does work quadratic in its
# connections for every request: at 64 it cost about 4 ms of CPU per `/loans` under load
# (bench.commands), at 8 about 1.5 ms; sends are paced at 30 a second anyway.
CONNECTION_POOL = 8

AnyApplication = Application[Any, Any, Any, Any, Any, Any]
KNOWN_COMMANDS = frozenset(COMMANDS)


def command_label(update: object) -> str:
    """A bounded label for what an update asked for: a known command, "callback", ..."""
    if not isinstance(update, Update):
        return "other"
    if update.callback_query is not None:
        return "callback"
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


def discover_handlers() -> list[BaseHandler[Any, Any, Any]]:
    """Every area module's `handlers()`, in module-name order (group 0)."""
    found: list[BaseHandler[Any, Any, Any]] = []
    for module_info in sorted(
        pkgutil.iter_modules(library_bot.telegram.handlers.__path__), key=lambda m: m.name
    ):
        if module_info.name in NOT_AREAS or module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"library_bot.telegram.handlers.{module_info.name}")
        factory = getattr(module, "handlers", None)
        if callable(factory):
            found.extend(factory())
    return found


def build_application(services: Services, *, polling: bool) -> AnyApplication:
    """The PTB application for `services`; `polling=False` leaves updates to the webhook."""
    settings = services.settings
    # Long polling holds its connection for the poll timeout; it gets a pool of its own.
    updates_request = (
        telegram_request(settings, connection_pool_size=2, read_timeout=40.0) if polling else None
    )
    the_bot = build_bot(
        settings,
        request=telegram_request(settings, connection_pool_size=CONNECTION_POOL, read_timeout=10.0),
        get_updates_request=updates_request,
        rate_limiter=paced_rate_limiter(settings.TELEGRAM_SEND_RATE),
    )
    # `.bot()` is how PTB takes a bot of a subclass; its requests carry the pools and proxy.
    builder = (
        ApplicationBuilder()
        .application_class(MeteredApplication)
        .bot(the_bot)
        .concurrent_updates(FairUpdateProcessor(CONCURRENT_UPDATES))
    )
    if not polling:
        builder = builder.updater(None)
    application: AnyApplication = builder.build()
    application.bot_data[SERVICES_KEY] = services
    # Before everything: edits and group chats stop here (library_bot.telegram.handlers.common).
    application.add_handler(private_chat_guard(), group=-1)
    application.add_handlers(discover_handlers(), group=0)
    # Same group, added last: PTB runs one handler per group, so a later group would also
    # answer commands an area already handled.
    application.add_handlers(fallback.handlers(), group=0)
    application.add_error_handler(on_error)
    return application


async def on_error(update: object, context: Any) -> None:
    """Log the failure (the redaction filter guards secrets) and tell the patron, never silence."""
    error = context.error
    with contextlib.suppress(KeyError, TypeError):
        if isinstance(update, Update):  # job failures are not update errors
            context.application.bot_data[SERVICES_KEY].metrics.update_errors.inc()
    if isinstance(error, BaseException):
        log.error("update failed: %s", type(error).__name__, exc_info=error)
    else:
        log.error("update failed")
    if not isinstance(update, Update) or update.effective_chat is None:
        return
    chat_id = update.effective_chat.id
    lang = "da"
    try:
        lang = await lang_of(update, context)
    except Exception:  # the store itself may be what failed
        log.debug("language unknown while reporting an error")
    try:
        if update.callback_query is not None:
            await update.callback_query.answer()
    except TelegramError:
        pass
    try:
        key = "common.unavailable" if isinstance(error, ServiceUnavailable) else "common.error"
        await context.bot.send_message(chat_id, t(lang, key))
    except Forbidden:
        log.info("chat %s blocked the bot; error not reported", chat_id)
    except TelegramError as exc:
        log.warning("could not report an error to the chat: %s", type(exc).__name__)
