"""Serving a stand-in's aiohttp app: shared by the library sandbox and the Telegram stand-in.

Access logging is off: request lines carry secrets (bot tokens in paths, access tokens in
query strings), and the stand-ins must not be where they leak.
"""

from __future__ import annotations

import abc
from typing import Self

from aiohttp import web

SHUTDOWN_TIMEOUT = 1.0


def base_url(host: str, port: int) -> str:
    """The address a client uses: a wildcard host is reached on loopback."""
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


async def serve(app: web.Application, host: str, port: int) -> tuple[web.AppRunner, int]:
    """Start `app` on `host`:`port` (0: a free port); its runner and the port it got."""
    runner = web.AppRunner(
        app, access_log=None, handle_signals=False, shutdown_timeout=SHUTDOWN_TIMEOUT
    )
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except BaseException:
        await runner.cleanup()
        raise
    return runner, int(runner.addresses[0][1])


class Served(abc.ABC):
    """A stand-in that serves until stopped; `async with` starts and stops it."""

    @abc.abstractmethod
    async def start(self) -> None: ...

    @abc.abstractmethod
    async def stop(self) -> None:
        """Stop serving; safe to call when not (or only partly) started."""

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.stop()
