"""Prometheus metrics on a registry per process (`GET /metrics`).

Nothing here is module-level state: a `Metrics` object owns its `CollectorRegistry` and lives
in `Services.extras["metrics"]` (its registry also under `"metrics_registry"`), so two bots in
one test process never share counters. Label values are always from small fixed sets, never
from patron input, so the number of series stays bounded.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Final

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from telegram import Update
from telegram.ext import Application

from library_bot.telegram.handlers import COMMANDS

if TYPE_CHECKING:
    from library_bot.jobs.reminders import SweepReport
    from library_bot.services import Services
    from library_bot.storage.store import Store

__all__ = [
    "CONTENT_TYPE",
    "KNOWN_COMMANDS",
    "METRICS_KEY",
    "REGISTRY_KEY",
    "MeteredApplication",
    "Metrics",
    "command_label",
    "metrics_of",
    "record_callback",
    "record_sweep",
]

log = logging.getLogger(__name__)

METRICS_KEY: Final = "metrics"
REGISTRY_KEY: Final = "metrics_registry"
CONTENT_TYPE: Final = CONTENT_TYPE_LATEST

KNOWN_COMMANDS: Final = frozenset(COMMANDS)
CALLBACK_OUTCOMES: Final = frozenset({"ok", "stale", "claimed"})
# Callback prefixes are chosen by our own code; anything odder is folded into "other".
_MAX_ACTION_LENGTH: Final = 24

# Telegram round trips and library calls: tens of milliseconds to the 8 s library time-out.
LATENCY_BUCKETS: Final = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
SWEEP_BUCKETS: Final = (1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 1800.0, 3600.0)


def command_label(update: object) -> str:
    """A bounded label for what an update asked for: a known command, "callback", ..."""
    if not isinstance(update, Update):
        return "other"
    if update.callback_query is not None:
        return "callback"
    message = update.effective_message
    text = message.text if message is not None else None
    if text and text.startswith("/"):
        name = text[1:].split(maxsplit=1)[0].split("@", 1)[0].lower() if len(text) > 1 else ""
        return name if name in KNOWN_COMMANDS else "unknown_command"
    if message is not None:
        return "message"
    return "other"


def _action_label(action: str) -> str:
    if 0 < len(action) <= _MAX_ACTION_LENGTH and action.replace("_", "").isalnum():
        return action
    return "other"


class Metrics:
    """Every metric the bot exports, registered on one registry of its own."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.updates = Counter(
            "library_bot_updates", "Telegram updates handled, by command.", ["command"], registry=r
        )
        self.update_seconds = Histogram(
            "library_bot_update_seconds",
            "Time to handle one update (all handlers), by command.",
            ["command"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.update_errors = Counter(
            "library_bot_update_errors",
            "Updates whose handler raised (the patron got an error message).",
            registry=r,
        )
        self.library_calls = Counter(
            "library_bot_library_calls",
            "Calls to the library services, by endpoint and outcome (ok or error kind).",
            ["endpoint", "outcome"],
            registry=r,
        )
        self.library_errors = Counter(
            "library_bot_library_errors",
            "Failed calls to the library services, by endpoint and kind of error.",
            ["endpoint", "kind"],
            registry=r,
        )
        self.library_seconds = Histogram(
            "library_bot_library_call_seconds",
            "Duration of library service calls (retry included), by endpoint.",
            ["endpoint"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.callbacks = Counter(
            "library_bot_callbacks",
            "Button taps, by action and outcome (ok, stale, claimed).",
            ["action", "outcome"],
            registry=r,
        )
        self.reminders_sent = Counter(
            "library_bot_reminders_sent", "Reminders delivered to patrons.", registry=r
        )
        self.reminder_messages = Counter(
            "library_bot_reminder_messages", "Reminder messages sent to Telegram.", registry=r
        )
        self.reminders_failed = Counter(
            "library_bot_reminders_failed",
            "Patrons whose reminders failed in a sweep, by kind of failure.",
            ["kind"],
            registry=r,
        )
        self.sweeps = Counter("library_bot_reminder_sweeps", "Reminder sweeps run.", registry=r)
        self.sweep_seconds = Histogram(
            "library_bot_reminder_sweep_seconds",
            "Duration of one reminder sweep.",
            buckets=SWEEP_BUCKETS,
            registry=r,
        )
        self.connected = Gauge(
            "library_bot_connected_patrons",
            "Chats with a connected library account (refreshed on every scrape).",
            registry=r,
        )

    def attach(self, services: Services) -> Metrics:
        """Keep this object (and its registry) in `services.extras`; returns self."""
        services.extras[METRICS_KEY] = self
        services.extras[REGISTRY_KEY] = self.registry
        return self

    # --- hooks ---------------------------------------------------------------------------

    def library_call(self, endpoint: str, outcome: str, seconds: float) -> None:
        """`LibraryClient`'s `on_call` hook."""
        self.library_calls.labels(endpoint, outcome).inc()
        self.library_seconds.labels(endpoint).observe(seconds)
        if outcome != "ok":
            self.library_errors.labels(endpoint, outcome).inc()

    def update_handled(self, command: str, seconds: float) -> None:
        self.updates.labels(command).inc()
        self.update_seconds.labels(command).observe(seconds)

    def callback(self, action: str, outcome: str) -> None:
        self.callbacks.labels(
            _action_label(action), outcome if outcome in CALLBACK_OUTCOMES else "other"
        ).inc()

    def sweep(self, report: SweepReport) -> None:
        self.sweeps.inc()
        self.sweep_seconds.observe(report.duration)
        self.reminders_sent.inc(report.reminders)
        self.reminder_messages.inc(report.messages)
        for kind, count in report.failures.items():
            if count:
                self.reminders_failed.labels(str(kind)).inc(count)

    # --- exposition ----------------------------------------------------------------------

    async def refresh(self, store: Store) -> None:
        """Update the gauges that are read from the database rather than counted."""
        try:
            self.connected.set(await store.count_accounts())
        except Exception:  # a scrape must still answer when the database does not
            log.warning("metrics: could not count connected patrons", exc_info=True)

    async def render(self, store: Store) -> bytes:
        """The Prometheus text format, with the gauges refreshed first."""
        await self.refresh(store)
        return bytes(generate_latest(self.registry))


def metrics_of(services: Services) -> Metrics:
    """The process's `Metrics`, created and attached on first use."""
    found = services.extras.get(METRICS_KEY)
    if isinstance(found, Metrics):
        return found
    registry = services.extras.get(REGISTRY_KEY)
    return Metrics(registry if isinstance(registry, CollectorRegistry) else None).attach(services)


def record_callback(services: Services, action: str, outcome: str) -> None:
    """Count a button tap; `outcome` is "ok", "stale" (unknown/expired), "claimed" or "foreign"."""
    metrics_of(services).callback(action, outcome)


def record_sweep(services: Services, report: SweepReport) -> None:
    """Count what a reminder sweep inside `run` did."""
    metrics_of(services).sweep(report)


class MeteredApplication(Application[Any, Any, Any, Any, Any, Any]):
    """PTB's `Application` that counts and times every update it processes.

    Overriding `process_update` sees the whole update, from the first handler to the last
    (errors included), which a handler in an early group cannot.
    """

    async def process_update(self, update: object) -> None:
        started = time.perf_counter()
        try:
            await super().process_update(update)
        finally:
            services = self.bot_data.get("services")
            if services is not None:
                metrics_of(services).update_handled(
                    command_label(update), time.perf_counter() - started
                )
