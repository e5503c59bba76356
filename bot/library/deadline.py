"""The time one update may spend on library calls.

Every answer must reach the patron within about ten seconds even when the library services
hang, so each update runs its library calls under one `Deadline`: when it runs out the call is
abandoned and counts as the service not answering.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import TypeVar

from bot.library.errors import ServiceUnavailable

T = TypeVar("T")

# Seconds an update may spend on library calls; leaves room to send the answer within 10 s.
ANSWER_BUDGET = 9.0


class Deadline:
    """The time left to answer one update; a library call still running when it ends is cut."""

    def __init__(self, seconds: float = ANSWER_BUDGET) -> None:
        self._end = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(0.0, self._end - time.monotonic())

    async def run(self, awaitable: Awaitable[T]) -> T:
        """Await within the time left; running out counts as the service not answering."""
        try:
            async with asyncio.timeout(self.remaining()):
                return await awaitable
        except TimeoutError:
            raise ServiceUnavailable("no answer within the answer budget", code="timeout") from None
