"""`library-bot sandbox`: run the library sandbox and print how to point a bot at it."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys

from sandbox.library import LibrarySandbox


async def serve(*, host: str, port: int, single_port: bool) -> int:
    """Serve until SIGINT or SIGTERM; with `port`, the four services use port .. port+3."""
    sandbox = LibrarySandbox(host=host, port=port, single_port=single_port)
    await sandbox.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop.set)
    try:
        for name, value in sandbox.env().items():
            print(f"{name}={value}")
        for patron in sandbox.patrons:
            print(f"patron {patron.user_id} {patron.pin} {patron.description}")
        sys.stdout.flush()
        await stop.wait()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)
        await sandbox.stop()
    return 0
