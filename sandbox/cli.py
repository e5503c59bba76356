"""`library-bot sandbox`: run the library sandbox and print how to point a bot at it."""

from __future__ import annotations

import sys

from bot.runtime.signals import stop_on_signals
from sandbox.library import LibrarySandbox

DEFAULT_ORDER_DELAY = 5.0  # seconds before a placed order shows in /v3/user, as for a person


async def serve(
    *, host: str, port: int, single_port: bool, order_delay: float = DEFAULT_ORDER_DELAY
) -> int:
    """Serve until SIGINT or SIGTERM; with `port`, the four services use port .. port+3."""
    sandbox = LibrarySandbox(host=host, port=port, single_port=single_port, order_delay=order_delay)
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
