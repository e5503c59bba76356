"""Prometheus metrics on a registry per process (`GET /metrics`).

Nothing here is module-level state: a `Metrics` object owns its `CollectorRegistry` and lives
on `Services.metrics`, so two bots in one test process never share counters. Besides the bot's
own, the registry carries prometheus-client's process, platform and GC collectors, as
operators expect. Label values are always from small fixed sets, never from patron input, so
the number of series stays bounded.
"""

from __future__ import annotations

import logging
from collections import Counter as Tally
from collections.abc import Callable
from datetime import date, datetime, time
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Final, Protocol

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    Info,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)

if TYPE_CHECKING:
    from storage.store import Store

__all__ = ["CONTENT_TYPE", "Metrics", "SendPace", "SweepFigures", "SweepHour"]

log = logging.getLogger(__name__)

CONTENT_TYPE: Final = CONTENT_TYPE_LATEST
CALLBACK_OUTCOMES: Final = frozenset({"ok", "stale", "claimed", "foreign", "repeat"})
# Callback prefixes are chosen by our own code; anything odder is folded into "other".
_MAX_ACTION_LENGTH: Final = 24

# Telegram round trips and library calls: tens of milliseconds to the 8 s library time-out.
LATENCY_BUCKETS: Final = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
SWEEP_BUCKETS: Final = (1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 1800.0, 3600.0)
# Which of Telegram's limits a 429 was for (as `telegram.ratelimit` infers it).
THROTTLE_SCOPES: Final = ("global", "chat", "group")


def package_version() -> str:
    """The installed distribution's version, as `--version` and `library_bot_build_info` say it:
    pyproject.toml is the one place it is written ("unknown" in a checkout never installed)."""
    try:
        return version("library-bot")
    except PackageNotFoundError:
        return "unknown"


def _action_label(action: str) -> str:
    if 0 < len(action) <= _MAX_ACTION_LENGTH and action.replace("_", "").isalnum():
        return action
    return "other"


class SweepFigures(Protocol):
    """What a reminder sweep reports (`jobs.sweep.SweepReport` is one)."""

    @property
    def duration(self) -> float: ...
    @property
    def reminders(self) -> int: ...
    @property
    def messages(self) -> int: ...
    @property
    def failures(self) -> Tally[str]: ...


class SendPace(Protocol):
    """The bot's send limiter, as far as the metrics read it (`FairRateLimiter` is one)."""

    @property
    def per_second(self) -> float: ...
    @property
    def waiting(self) -> int: ...

    on_throttle: Callable[[str, float], None] | None


class SweepHour(Protocol):
    """Where the day's sweep stands now: `(now, hour, default_hour)` as its hourly pass
    reads them (`jobs.schedule.hours_due`)."""

    def __call__(self) -> tuple[datetime, int, int]: ...


class Metrics:
    """Every metric the bot exports, registered on one registry of its own."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        # Labelled children looked up once per label values (`labels()` locks and builds a key).
        self._calls: dict[tuple[str, str], tuple[Counter, Histogram]] = {}
        self._handled: dict[str, tuple[Counter, Histogram]] = {}
        ProcessCollector(registry=r)
        PlatformCollector(registry=r)
        GCCollector(registry=r)
        # `library_bot_build_info{version="…"} 1`: which release a process runs.
        Info("library_bot_build", "The running release.", registry=r).info(
            {"version": package_version()}
        )
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
            "Button taps, by action and outcome (ok, stale, claimed, foreign, repeat).",
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
        self.throttled = Counter(
            "library_bot_telegram_429",
            "Telegram's 429 answers (too many requests), by the limit hit: global, chat or group.",
            ["scope"],
            registry=r,
        )
        for scope in THROTTLE_SCOPES:
            self.throttled.labels(scope)  # 0 from the start, so a rate can be taken
        self.send_budget = Gauge(
            "library_bot_telegram_send_budget",
            "Messages per second this process paces its sends to (0: unpaced).",
            registry=r,
        )
        self.sends_waiting = Gauge(
            "library_bot_telegram_sends_waiting",
            "Sends of this process waiting for their turn under the send budget.",
            registry=r,
        )
        self.sweep_left = Gauge(
            "library_bot_sweep_cards_left",
            "Cards today's sweep still owes, of chats whose hour has come (all processes; "
            "refreshed on every scrape).",
            registry=r,
        )
        self.sweep_oldest = Gauge(
            "library_bot_sweep_oldest_due_seconds",
            "How long the oldest reminder still owed today has been due (0: none owed).",
            registry=r,
        )
        self._sweep_hour: SweepHour | None = None
        self.connected = Gauge(
            "library_bot_connected_patrons",
            "Chats with a connected library account (refreshed on every scrape).",
            registry=r,
        )

    # --- hooks ---------------------------------------------------------------------------

    def library_call(self, endpoint: str, outcome: str, seconds: float) -> None:
        """`LibraryClient`'s `on_call` hook."""
        calls = self._calls.get((endpoint, outcome))
        if calls is None:
            calls = self._calls[endpoint, outcome] = (
                self.library_calls.labels(endpoint, outcome),
                self.library_seconds.labels(endpoint),
            )
        calls[0].inc()
        calls[1].observe(seconds)
        if outcome != "ok":
            self.library_errors.labels(endpoint, outcome).inc()

    def update_handled(self, command: str, seconds: float) -> None:
        handled = self._handled.get(command)
        if handled is None:
            handled = self._handled[command] = (
                self.updates.labels(command),
                self.update_seconds.labels(command),
            )
        handled[0].inc()
        handled[1].observe(seconds)

    def callback(self, action: str, outcome: str) -> None:
        self.callbacks.labels(
            _action_label(action), outcome if outcome in CALLBACK_OUTCOMES else "other"
        ).inc()

    def sweep(self, report: SweepFigures) -> None:
        self.sweeps.inc()
        self.sweep_seconds.observe(report.duration)
        self.reminders_sent.inc(report.reminders)
        self.reminder_messages.inc(report.messages)
        for kind, count in report.failures.items():
            if count:
                self.reminders_failed.labels(str(kind)).inc(count)

    def watch_sends(self, pace: SendPace) -> None:
        """Export the limiter's budget and queue, and count the 429s it meets."""
        self.send_budget.set_function(lambda: pace.per_second)
        self.sends_waiting.set_function(lambda: pace.waiting)
        pace.on_throttle = self.throttled_by

    def throttled_by(self, scope: str, seconds: float) -> None:
        self.throttled.labels(scope if scope in THROTTLE_SCOPES else "global").inc()

    def watch_sweep(self, hour: SweepHour) -> None:
        """Read the sweep's progress from the database on every scrape, at `hour()`."""
        self._sweep_hour = hour

    # --- exposition ----------------------------------------------------------------------

    async def refresh(self, store: Store) -> None:
        """Update the gauges that are read from the database rather than counted."""
        try:
            self.connected.set(await store.cards.count())
        except Exception:  # a scrape must still answer when the database does not
            log.warning("metrics: could not count connected patrons", exc_info=True)
        if self._sweep_hour is not None:
            try:
                await self._refresh_sweep(store, *self._sweep_hour())
            except Exception:
                log.warning("metrics: could not read the sweep's progress", exc_info=True)

    async def _refresh_sweep(self, store: Store, now: datetime, hour: int, default: int) -> None:
        day: date = now.date()
        left, earliest = await store.sweeps.progress(day, hour, default)
        self.sweep_left.set(left)
        if earliest is None:
            self.sweep_oldest.set(0)
        else:
            due = datetime.combine(day, time(earliest), tzinfo=now.tzinfo)
            self.sweep_oldest.set(max(0.0, (now - due).total_seconds()))

    async def render(self, store: Store) -> bytes:
        """The Prometheus text format, with the gauges refreshed first."""
        await self.refresh(store)
        return bytes(generate_latest(self.registry))
