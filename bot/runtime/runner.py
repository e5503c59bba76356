"""`library-bot run`: PTB, the aiohttp server and the jobs, driven by hand in one event loop.

PTB's own `run_polling` / `run_webhook` own the loop and the web server; we need our server
(OAuth callback, health, metrics) beside it, so the lifecycle is spelled out here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from bot.config.logs import install_log_redaction
from bot.config.settings import Settings, SettingsError, split_address
from bot.jobs.schedule import schedule_jobs
from bot.jobs.sweep import default_worker
from bot.library.client import LibraryClient
from bot.runtime.budget import share_send_budget
from bot.runtime.startup import database_stage, startup_stage, telegram_stage
from bot.services import Services
from bot.services.metrics import Metrics
from bot.telegram.app import build_application
from bot.telegram.botapi import polling_error
from bot.telegram.deliver import TelegramDeliverer
from bot.telegram.guard import ALLOWED_UPDATES
from bot.telegram.menu import bot_commands
from bot.telegram.profile import set_profile
from bot.telegram.ratelimit import FairRateLimiter
from bot.texts import DEFAULT_LANGUAGE, LANGUAGES
from bot.web import create_metrics_app, create_web_app, stop_accepting
from bot.web.limits import (
    BODY_SECONDS,
    IDLE_SECONDS,
    LINGER_SECONDS,
    ConnectionLimit,
    connection_cap,
    install_log_throttles,
)
from storage.migrate import SchemaNewerThanCode, upgrade
from storage.store import Store

log = logging.getLogger(__name__)

SHUTDOWN_SECONDS = 10.0
POLL_TIMEOUT = 30
# `setWebhook` retried after a failure: first after this many seconds, doubling up to the cap
# (as failed polls are), so `/readyz` is back within seconds of Telegram.
WEBHOOK_RETRY_FIRST = 0.5
WEBHOOK_RETRY_CAP = 3.0
# A scraper or two: the metrics listener keeps few connections.
METRICS_CONNECTIONS = 16


@dataclass(frozen=True)
class BotInfo:
    """What a running bot tells its starter once it is ready."""

    web_url: str
    public_url: str
    bot_username: str
    metrics_url: str = ""  # `METRICS_ADDRESS`'s listener, when set (its real port)


def _bind(host: str, port: int) -> socket.socket:
    """Bind before building anything so `PORT=0` yields the real port for `PUBLIC_URL`."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def _effective_settings(settings: Settings, port: int) -> tuple[Settings, str]:
    """Settings with the bound port filled in where the operator left it open."""
    local_host = "127.0.0.1" if settings.HOST in ("", "0.0.0.0", "::") else settings.HOST
    web_url = f"http://{local_host}:{port}"
    public = settings.PUBLIC_URL or ""
    if not public or urlsplit(public).port == 0:
        settings = settings.model_copy(update={"PUBLIC_URL": web_url})
    return settings, web_url


async def run_bot(
    settings: Settings,
    *,
    stop: asyncio.Event,
    on_ready: Callable[[BotInfo], None] | None = None,
) -> None:
    """Run until `stop` is set, then shut everything down within `SHUTDOWN_SECONDS`."""
    keys = settings.token_keys
    if not keys:
        raise SettingsError("TOKEN_KEYS: required by `library-bot run`, but not set")

    async with contextlib.AsyncExitStack() as stack:
        # Both listeners first: an address in use fails the start before anything is touched.
        with startup_stage(
            "HTTP server", f"HOST and PORT (cannot listen on {settings.HOST}:{settings.PORT})"
        ):
            sock = _bind(settings.HOST, settings.PORT)
        stack.callback(sock.close)
        metrics_sock = _bind_metrics(stack, settings.METRICS_ADDRESS)
        settings, web_url = _effective_settings(settings, sock.getsockname()[1])
        webhook = settings.WEBHOOK_SECRET.get_secret_value() if settings.WEBHOOK_SECRET else ""
        with database_stage(settings.DATABASE_URL):
            try:
                await upgrade(settings.DATABASE_URL)
            except SchemaNewerThanCode as exc:
                raise SettingsError(f"DATABASE_URL: {exc}") from None
            store = await Store.open(settings.DATABASE_URL, keys)
        stack.push_async_callback(store.close)
        metrics = Metrics()
        library = LibraryClient.from_settings(settings, on_call=metrics.library_call)
        stack.push_async_callback(library.aclose)
        store.revoke_dropped = library.revoke  # no token the store drops stays valid
        install_log_redaction()
        # PTB's DEBUG lines dump whole updates and requests: patrons' messages, link codes,
        # login states. Keep them out even when the operator asks for DEBUG.
        logging.getLogger("telegram").setLevel(max(logging.INFO, logging.getLogger().level))
        services = Services(settings=settings, store=store, library=library, metrics=metrics)
        # Polling is one process, and SQLite one process too: only webhook processes on
        # PostgreSQL share the chats' turns.
        worker = default_worker()
        shared = webhook and worker and store.database.dialect == "postgresql"
        application = build_application(
            services, polling=not webhook, worker=worker, turns=store.turns if shared else None
        )

        with telegram_stage(settings.TELEGRAM_API_URL):
            await application.initialize()
        stack.push_async_callback(application.shutdown)
        # initialize() called getMe; the answer is kept on the bot.
        services.bot_username = application.bot.username
        await _set_commands(application.bot)
        # In the background: Telegram limits these methods tightly, and a 429's wait must not
        # hold up the start.
        profile = asyncio.create_task(set_profile(application.bot))
        stack.push_async_callback(_cancel, profile)
        limiter = application.bot.rate_limiter
        if (
            store.database.dialect == "postgresql"
            and isinstance(limiter, FairRateLimiter)
            and limiter.per_second > 0
        ):
            # Several processes may share the database: Telegram's budget is shared too.
            budget = asyncio.create_task(
                share_send_budget(store, limiter, limiter.per_second, default_worker())
            )
            stack.push_async_callback(_cancel, budget)

        web_app = create_web_app(services, application)
        limit = ConnectionLimit(connection_cap())
        install_log_throttles()
        await _serve(stack, web_app, sock, limit, shutdown_timeout=2.0)
        log.info(
            "web server: about %s connections at most, idle for %ss, a body within %ss",
            limit.cap,
            IDLE_SECONDS,
            BODY_SECONDS,
        )
        metrics_url = await _serve_metrics(stack, services, metrics_sock)
        # Unwound before the web server closes: stop updates, let in-flight ones finish.
        stack.push_async_callback(_stop_updates, application, web_app)

        if webhook:
            url = f"{settings.PUBLIC_URL}/telegram/webhook"
            if not await _set_webhook(application.bot, url, webhook):
                # Serve anyway (health says Telegram is failing) and keep trying.
                retrying = asyncio.create_task(_keep_setting_webhook(application.bot, url, webhook))
                stack.push_async_callback(_cancel, retrying)
        else:
            assert application.updater is not None  # start_polling calls deleteWebhook
            await application.updater.start_polling(
                timeout=POLL_TIMEOUT, allowed_updates=ALLOWED_UPDATES, error_callback=polling_error
            )
        await application.start()
        # The jobs know no face: they send through the chat's deliverer, handed in here.
        deliverer = TelegramDeliverer(application.bot, services)
        schedule_jobs(application, services, deliverer)
        log.info(
            "bot @%s running (%s); web server at %s",
            services.bot_username,
            "webhook" if webhook else "long polling",
            web_url,
        )
        if on_ready is not None:
            on_ready(
                BotInfo(web_url, settings.PUBLIC_URL or web_url, services.bot_username, metrics_url)
            )

        await stop.wait()
        log.info("stopping")
    log.info("stopped")


async def _serve(
    stack: contextlib.AsyncExitStack,
    app: web.Application,
    sock: socket.socket,
    limit: ConnectionLimit,
    *,
    shutdown_timeout: float,
) -> None:
    """Serve `app` on the bound `sock` within `limit` until `stack` unwinds: idle connections
    dropped after `IDLE_SECONDS`, bodies read within `BODY_SECONDS` (`limit.middleware`), and
    no access log (the OAuth callback's query carries the code and the state)."""
    app.middlewares.append(limit.middleware)
    runner = web.AppRunner(
        app,
        handle_signals=False,
        access_log=None,
        shutdown_timeout=shutdown_timeout,
        keepalive_timeout=IDLE_SECONDS,
        lingering_time=LINGER_SECONDS,
    )
    await runner.setup()
    stack.push_async_callback(runner.cleanup)
    listener = await limit.listen(runner, sock)
    stack.callback(listener.close)  # no new connections, then the runner's own shutdown


def _bind_metrics(stack: contextlib.AsyncExitStack, address: str | None) -> socket.socket | None:
    """The socket of `METRICS_ADDRESS`'s listener (None when unset), closed with `stack`."""
    if address is None:
        return None
    with startup_stage("metrics listener", f"METRICS_ADDRESS (cannot listen on {address})"):
        sock = _bind(*split_address(address))
    stack.callback(sock.close)
    return sock


async def _serve_metrics(
    stack: contextlib.AsyncExitStack, services: Services, sock: socket.socket | None
) -> str:
    """`/metrics` on `METRICS_ADDRESS`'s bound `sock`; its URL ("" when unset)."""
    if sock is None or services.settings.METRICS_ADDRESS is None:
        return ""
    limit = ConnectionLimit(METRICS_CONNECTIONS)
    await _serve(stack, create_metrics_app(services), sock, limit, shutdown_timeout=1.0)
    host, _ = split_address(services.settings.METRICS_ADDRESS)
    bound = sock.getsockname()[1]
    url = f"http://[{host}]:{bound}" if ":" in host else f"http://{host}:{bound}"
    log.info("metrics at %s/metrics", url)
    return url


async def _set_commands(bot: Any) -> None:
    """The command menus: cosmetic, so a Bot API server that refuses them does not stop us."""
    # One menu per language for users whose app speaks it, and the default one for the rest.
    menus: list[tuple[str, str | None]] = [(lang, lang) for lang in LANGUAGES]
    menus.append((DEFAULT_LANGUAGE, None))
    for lang, language_code in menus:
        try:
            await bot.set_my_commands(bot_commands(lang), language_code=language_code)
        except Exception as exc:  # any failure of a cosmetic call: log it and go on
            log.warning(
                "setMyCommands (%s) failed, the command menu may be missing: %s",
                language_code or "default",
                type(exc).__name__,
            )


async def _set_webhook(bot: Any, url: str, secret: str, *, again: bool = False) -> bool:
    """One `setWebhook`; True when Telegram took it. The bot's `health` follows the outcome.
    A retry's failure (`again`) is not logged: the outage was told once, at the first."""
    health = getattr(bot, "health", None)
    try:
        await bot.set_webhook(url=url, secret_token=secret, allowed_updates=ALLOWED_UPDATES)
    except Exception as exc:
        if not again:
            log.warning("setWebhook failed, no updates until it succeeds: %s", type(exc).__name__)
        if health is not None:
            health.webhook_pending = True
        return False
    if health is not None:
        health.webhook_pending = False
    return True


async def _keep_setting_webhook(bot: Any, url: str, secret: str) -> None:
    delay = WEBHOOK_RETRY_FIRST
    started = asyncio.get_running_loop().time()
    while True:
        await asyncio.sleep(delay)
        if await _set_webhook(bot, url, secret, again=True):
            waited = asyncio.get_running_loop().time() - started
            log.info("setWebhook succeeded after %.0f s", waited)
            return
        delay = min(delay * 2, WEBHOOK_RETRY_CAP)


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _stop_updates(application: Any, web_app: web.Application) -> None:
    """Stop taking updates, then let the ones in flight finish (and the jobs with them)."""
    stop_accepting(web_app)
    try:
        async with asyncio.timeout(SHUTDOWN_SECONDS - 2):
            if application.updater is not None and application.updater.running:
                await application.updater.stop()
            if application.running:
                await application.stop()
    except TimeoutError:
        log.warning("in-flight updates did not finish within %ss", SHUTDOWN_SECONDS - 2)
