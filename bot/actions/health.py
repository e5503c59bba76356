"""What the web face reports of the process: whether the database answers (`/health`,
`/readyz`) and the metrics with the figures read from it (`/metrics`)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.services import Services

log = logging.getLogger(__name__)


async def database_ok(services: Services, within: float) -> bool:
    """Whether the database answers within `within` seconds; one hanging rather than
    refusing is told once, as a refusal is."""
    try:
        async with asyncio.timeout(within):
            return await services.store.ping()
    except TimeoutError as exc:
        services.store.database.availability.failed(exc)
        return False
    except Exception:  # a broken database is exactly what health reports
        log.warning("health: store ping failed", exc_info=True)
        return False


async def metrics(services: Services) -> bytes:
    """The process's metrics in Prometheus' text format."""
    return await services.metrics.render(services.store)
