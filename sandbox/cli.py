"""`library-bot sandbox`: run the library sandbox and print how to point a bot at it."""

from __future__ import annotations

import sys

from bot.signals import stop_on_signals
from sandbox.library import LibrarySandbox


async def serve(*, host: str, port: int, single_port: bool) -> int:
    """Serve until SIGINT or SIGTERM; with `port`, the four services use port .. port+3."""
    sandbox = LibrarySandbox(host=host, port=port, single_port=single_port)
    await sandbox.start()
    try:
        with stop_on_signals() as stop:
            for name, value in sandbox.env().items():
                print(f"{name}={value}")
            for patron in sandbox.patrons:
                print(f"patron {patron.user_id} {patron.pin} {patron.description}")
            sys.stdout.flush()
            await stop.wait()
    finally:
        await sandbox.stop()
    return 0
