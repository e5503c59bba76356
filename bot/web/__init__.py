"""Layer: the bot's HTTP server: OAuth callback pages, health, metrics, the Mini App, the
Telegram webhook."""

from __future__ import annotations

import hmac
import json
import logging
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler
from telegram import Update

from bot.actions import health
from bot.services import Services
from bot.services.metrics import CONTENT_TYPE
from bot.telegram.turns import InOrderUpdateProcessor
from bot.web.app import add_routes as add_app_routes
from bot.web.calendar import calendar_feed
from bot.web.oauth import logout_redirect, oauth_callback

log = logging.getLogger(__name__)

SERVICES = web.AppKey("services", Services)
APPLICATION = web.AppKey("application", object)
ACCEPTING = web.AppKey("accepting", dict)  # {"updates": bool}; a dict so it can flip in place
WEBHOOK_SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 (a header name)
WEBHOOK_PATH = "/telegram/webhook"
MAX_UPDATE_BYTES = 1 << 20
# A health probe must answer quickly even when the database hangs rather than refuses.
HEALTH_DB_TIMEOUT = 3.0

__all__ = ["create_metrics_app", "create_web_app", "stop_accepting"]

NO_STORE = {"Cache-Control": "no-store"}


def create_web_app(services: Services, application: Any) -> web.Application:
    """The aiohttp app; `/telegram/webhook` exists only when `WEBHOOK_SECRET` is set, and
    `/metrics` only when `METRICS_ADDRESS` does not give it a listener of its own."""
    app = web.Application(client_max_size=MAX_UPDATE_BYTES)
    app[SERVICES] = services
    app[APPLICATION] = application
    app[ACCEPTING] = {"updates": True}
    app.router.add_get("/oauth/callback", _callback)
    app.router.add_get("/oauth/logout", _logout)
    app.router.add_get("/health", _health)
    app.router.add_get("/livez", _livez)
    # For an orchestrator's readiness probe: `/health` under the name they expect.
    app.router.add_get("/readyz", _health)
    if services.settings.METRICS_ADDRESS is None:
        app.router.add_get("/metrics", _metrics)
    app.router.add_get("/calendar/{name}", _calendar)
    add_app_routes(app, SERVICES)
    if services.settings.WEBHOOK_SECRET is not None:
        app.middlewares.append(_webhook_gate)
        app.router.add_post(WEBHOOK_PATH, _webhook)
    return app


def create_metrics_app(services: Services) -> web.Application:
    """`/metrics` alone, for the listener at `METRICS_ADDRESS`."""
    app = web.Application()
    app[SERVICES] = services
    app.router.add_get("/metrics", _metrics)
    return app


def stop_accepting(app: web.Application) -> None:
    """Refuse further webhook updates (Telegram retries them later) while shutting down."""
    app[ACCEPTING]["updates"] = False


async def _callback(request: web.Request) -> web.StreamResponse:
    return await oauth_callback(request, request.app[SERVICES])


async def _logout(request: web.Request) -> web.StreamResponse:
    return await logout_redirect(request, request.app[SERVICES])


async def _calendar(request: web.Request) -> web.Response:
    return await calendar_feed(request, request.app[SERVICES])


async def _readiness(request: web.Request) -> tuple[bool, dict[str, str]]:
    """Whether the database and the Telegram loop work, and the body that says so."""
    services = request.app[SERVICES]
    application: Any = request.app[APPLICATION]
    store_ok = await health.database_ok(services, HEALTH_DB_TIMEOUT)
    running = bool(getattr(application, "running", False)) and request.app[ACCEPTING]["updates"]
    # `getUpdates` or `setWebhook` failing again and again: no updates are coming in.
    api_health = getattr(getattr(application, "bot", None), "health", None)
    telegram_failing = running and bool(getattr(api_health, "failing", False))
    ok = store_ok and running and not telegram_failing
    body = {
        "status": "ok" if ok else "unavailable",
        "database": "ok" if store_ok else "failing",
        "telegram": "failing" if telegram_failing else "running" if running else "stopped",
        "mode": "webhook" if services.settings.WEBHOOK_SECRET is not None else "polling",
    }
    return ok, body


async def _health(request: web.Request) -> web.Response:
    ok, body = await _readiness(request)
    return web.json_response(body, status=200 if ok else 503, headers=NO_STORE)


async def _livez(request: web.Request) -> web.Response:
    """The event loop answers; nothing else is checked, so a database outage does not get
    the process restarted (that is what `/readyz` is for)."""
    return web.Response(text="ok", headers=NO_STORE)


async def _metrics(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    body = await health.metrics(services)
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})


@web.middleware
async def _webhook_gate(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The webhook's secret, checked before its body is read: a stranger's body never is."""
    if request.path == WEBHOOK_PATH:
        secret = request.app[SERVICES].settings.WEBHOOK_SECRET
        # aiohttp keeps bytes that are not UTF-8 as surrogates: encode them back, never raise.
        given = request.headers.get(WEBHOOK_SECRET_HEADER, "").encode("utf-8", "surrogateescape")
        if secret is None or not hmac.compare_digest(given, secret.get_secret_value().encode()):
            refused = web.Response(status=403, text="forbidden")
            refused.force_close()  # what is left of the body is not read
            return refused
    return await handler(request)


async def _webhook(request: web.Request) -> web.Response:
    if not request.app[ACCEPTING]["updates"]:
        return web.Response(status=503, text="shutting down")
    try:
        data = await request.json(loads=json.loads)
        if not isinstance(data, dict):
            raise ValueError("an update is a JSON object")
        update_id = data.get("update_id")
        if not isinstance(update_id, int) or isinstance(update_id, bool):
            raise ValueError("an update has an integer update_id")
        application: Any = request.app[APPLICATION]
        update = Update.de_json(data, application.bot)
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        # RecursionError: JSON nested deeper than the parser (or PTB) can follow.
        return web.Response(status=400, text="malformed update")
    # The update's turn in its chat is taken before Telegram hears 200 and posts the chat's
    # next update, wherever that goes (bot.telegram.turns); a repeated delivery is dropped.
    processor = getattr(application, "update_processor", None)
    if isinstance(processor, InOrderUpdateProcessor) and not await processor.arrive(update):
        return web.Response(status=200, text="ok")
    # Answer at once; PTB processes the queue in the background.
    await application.update_queue.put(update)
    return web.Response(status=200, text="ok")
