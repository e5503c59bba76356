"""Which handler answers which path of which service, with the fault rules applied on the way.

Each of the four services gets an app of its own (its own port), or one app serves them all
(`single_port`), where `/oauth/token` is told apart by its grant type. Every request is counted
as `"<service> <method> <route>"` and then passes the faults in force (`faults.Faults`) before
its handler, and `lose_answer` after it.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware

from sandbox.library import control
from sandbox.library.earlier import EarlierFlow
from sandbox.library.faults import SERVICES, Faults
from sandbox.library.oauth import CodeFlow
from sandbox.library.parsing import form_fields
from sandbox.library.platform import Platform
from sandbox.library.responses import malformed, service_error
from sandbox.library.state import SandboxState

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
MAX_BODY = 256 * 1024


def _hang_up(request: web.Request) -> web.StreamResponse:
    """Close the connection with no answer at all."""
    if request.transport is not None:
        request.transport.abort()
    # Nothing is written to an aborted transport; this response is never sent.
    return web.Response(status=503)


class ServiceApps:
    def __init__(
        self,
        state: SandboxState,
        faults: Callable[[], Faults],
        calls: collections.Counter[str],
        middlewares: list[Middleware],
    ) -> None:
        """`faults` is a getter: tests may replace the sandbox's `Faults` object."""
        self.state = state
        self.faults = faults
        self.calls = calls
        self.middlewares = middlewares
        self.code = CodeFlow(state, faults)
        self.earlier = EarlierFlow(state)
        self.platform = Platform(state, faults)

    def service_app(self, service: str) -> web.Application:
        app = self._new_app()
        for method, path, handler in self._routes(service):
            app.router.add_route(method, path, self._guard(service, handler))
        app.router.add_route("*", "/{tail:.*}", self._guard(service, self.platform.not_found))
        return app

    def single_app(self) -> web.Application:
        """All four services on one port; `/oauth/token` is told apart by its grant type."""
        app = self._new_app()
        oauth_token = self._guard("oauth", self.code.token)
        auth_token = self._guard("auth", self.earlier.token)

        async def token(request: web.Request) -> web.StreamResponse:
            form = await form_fields(request)
            password = form.get("grant_type") == "password"
            return await (auth_token if password else oauth_token)(request)

        app.router.add_post("/oauth/token", token)
        for service in SERVICES:
            for method, path, handler in self._routes(service):
                if path != "/oauth/token":
                    app.router.add_route(method, path, self._guard(service, handler))
        app.router.add_route("*", "/{tail:.*}", self._guard("platform", self.platform.not_found))
        return app

    def _new_app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY, middlewares=list(self.middlewares))
        control.add_routes(app, self.faults, self.calls)
        return app

    def _routes(self, service: str) -> list[tuple[str, str, Handler]]:
        code, earlier, platform = self.code, self.earlier, self.platform
        if service == "oauth":
            return [
                ("GET", "/oauth/authorize", code.authorize),
                ("POST", "/oauth/authorize", code.authorize),
                ("POST", "/oauth/token", code.token),
                ("GET", "/userinfo", code.userinfo),
                ("DELETE", "/oauth/revoke", code.revoke),
                ("GET", "/logout", code.logout),
            ]
        if service == "auth":
            return [("POST", "/oauth/token", earlier.token)]
        if service == "login":
            return [
                ("GET", "/login", earlier.login),
                ("POST", "/login", earlier.login),
                ("GET", "/getTicket/{token}/{id}", earlier.ticket),
            ]
        endpoints: list[tuple[str, Handler]] = [
            ("/v3/user", platform.user),
            ("/v3/order", platform.order),
            ("/v3/renew", platform.renew),
            ("/v3/work", platform.work),
            ("/v3/search", platform.search),
            ("/v3/libraries", platform.libraries),
            ("/v3/library", platform.library),
            ("/v3/events", platform.events),
            ("/v3/news", platform.news),
            ("/v3/recommend", platform.recommend),
            ("/v3/holdingsitems", platform.holdingsitems),
            ("/v3/availability", platform.availability),
        ]
        return [
            *((method, path, h) for path, h in endpoints for method in ("GET", "POST")),
            ("GET", "/covers/{faust}.svg", platform.cover),
        ]

    def _guard(self, service: str, handler: Handler) -> Handler:
        async def guarded(request: web.Request) -> web.StreamResponse:
            return await self._answer(service, request, handler)

        return guarded

    async def _answer(
        self, service: str, request: web.Request, handler: Handler
    ) -> web.StreamResponse:
        resource = request.match_info.route.resource
        route = resource.canonical if resource is not None else request.path
        if route.startswith("/{"):
            route = request.path
        self.calls[f"{service} {request.method} {route}"] += 1
        faults = self.faults()
        if (gate := faults.hold_next.pop(request.path, None)) is not None:
            await gate.wait()
        delay = faults.delay(service)
        if delay > 0:
            await asyncio.sleep(delay)
        if faults.refuses(service):
            return _hang_up(request)
        if faults.is_down(service):
            return service_error(service, 503, request.path)
        status = faults.pop_failure(request.path)
        if status is not None:
            return service_error(service, status, request.path)
        rate = faults.rate(service)
        if rate > 0 and self.state.random.random() < rate:
            return service_error(service, 500, request.path)
        if faults.is_malformed(service):
            return malformed(service)
        if faults.drops(service, request.path):
            await request.read()
            return _hang_up(request)
        response = await handler(request)
        if faults.loses_answer(service, request.path):
            return _hang_up(request)
        return response
