"""SIGINT and SIGTERM as an `asyncio.Event`, for the commands that serve until stopped."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterator

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[asyncio.Event]:
    """An event that SIGINT or SIGTERM sets while the block runs; the handlers go after it."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in STOP_SIGNALS:
        # Not on every platform or outside the main thread; then Ctrl-C still interrupts.
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop.set)
    try:
        yield stop
    finally:
        for signum in STOP_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)
