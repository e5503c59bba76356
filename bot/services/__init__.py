"""Layer: the services, the process's shared parts, built once and passed in
explicitly (settings, store, library client, metrics) to the Telegram side, jobs and web server."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from bot.services.branches import BranchNames
from bot.services.metrics import Metrics

if TYPE_CHECKING:
    from telegram.ext import CallbackContext

    from bot.config.settings import Settings
    from bot.library.client import LibraryClient
    from storage.store import Store

SERVICES_KEY = "services"


@dataclass
class Services:
    settings: Settings
    store: Store
    library: LibraryClient
    metrics: Metrics = field(default_factory=Metrics)
    bot_username: str = ""
    # Kept for the process: names change rarely, and every /holds and /order would ask again.
    branches: BranchNames = field(default_factory=BranchNames)
    # Reminder sweeps running in this process (`jobs.schedule`): an idle one watches for cards
    # a dead process left.
    sweeps_running: int = 0

    def chat_link(self, start: str | None = None, *, username: str | None = None) -> str:
        """`{TELEGRAM_LINK_URL}/<bot username>[?start=<code>]`: the private chat with the bot."""
        link = f"{self.settings.TELEGRAM_LINK_URL}/{quote(username or self.bot_username)}"
        return link if start is None else f"{link}?start={quote(start)}"


def services(context: CallbackContext[Any, Any, Any, Any]) -> Services:
    """The process's services, as stored in `application.bot_data` by `bot.telegram.app`."""
    found = context.application.bot_data[SERVICES_KEY]
    assert isinstance(found, Services)
    return found
