"""The event loop the bot's processes run on: uvloop where it is installed, asyncio's own elsewhere.

uvloop (MagicStack's libuv loop, as documented: a `loop_factory` for `asyncio.Runner`) spends
less CPU per update than asyncio's loop (docs/performance.md). It is a dependency everywhere
but Windows, which it has no build for; there asyncio's loop runs the same code. Every command
of the bot's CLI, the demo and the benches' bot processes start here, and the tests run on the
same loop (tests/conftest.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

LoopFactory = Callable[[], asyncio.AbstractEventLoop]

try:
    import uvloop
except ImportError:  # Windows, or an install without it
    LOOP_FACTORY: LoopFactory | None = None
else:
    LOOP_FACTORY = uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on the bot's loop."""
    with asyncio.Runner(loop_factory=LOOP_FACTORY) as runner:
        return runner.run(main)
