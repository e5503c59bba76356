"""Every scheduled job of `library-bot run`, in one place, on PTB's JobQueue.

- the reminder sweep every hour at `REMINDER_TIME`'s minute in `BOT_TIMEZONE`: each pass
  claims the cards of chats whose reminder hour (their own, from /reminders, else
  `REMINDER_TIME`'s) has come and that were not swept today, so each chat is still swept once
  a day, exactly once, at the hour it chose; with retry sweeps the same day while patrons are
  left unfinished (`RETRY_DELAYS`); a process started late catches up at once on what is due
  by then (a deploy or a crash would otherwise wait for the next pass); a pass still running
  when the next hour comes becomes that hour's pass (`sweep`'s `hours`); and every lease
  (`SWEEP_LEASE`) a process with no pass running sweeps cards left stranded (a process that
  died: its leases stopped being renewed), so they wait minutes, not until the next hour;
- token expiry: forget expired tokens and warn three days ahead, daily at the same time;
- purge: expired login states, pending links, old buttons, old reminder history and
  long-blocked chats, hourly;
- the shelf watches' check (`shelf`), at `SHELF_CHECKS`: a few times a day while libraries
  are open.

What they send goes through the deliverer `bot.runtime` hands in (`jobs.delivery`).
"""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from functools import partial
from typing import Any

from telegram.ext import Application, ContextTypes

from bot.actions.outbox import Delivery, Outcome
from bot.jobs.delivery import Deliverer
from bot.jobs.shelf import check_watches
from bot.jobs.sweep import SweepReport, lease_of, sweep
from bot.services import Services, services
from bot.texts import pick_language, t
from bot.texts.cards import card_heading, lapsed_lead
from storage.store import Card, Store

log = logging.getLogger(__name__)

Context = ContextTypes.DEFAULT_TYPE

EXPIRY_WARNING = timedelta(days=3)
# The reminder sweep passes once an hour: the finest time of day a chat can choose.
SWEEP_INTERVAL = timedelta(hours=1)
STATE_PURGE_INTERVAL = timedelta(hours=1)
# The catch-up waits for the start to settle (updates first), then sweeps what is left today.
CATCH_UP_DELAY = timedelta(seconds=2)
# Retry sweeps after the daily one, while patrons are still left unfinished (same day only).
# When the shelf watches are checked (local time): within most libraries' opening hours, so a
# copy put back in the morning is told by noon and one in the afternoon the same day.
SHELF_CHECKS = (time(10, 20), time(13, 20), time(16, 20))
RETRY_DELAYS = (
    timedelta(minutes=15),
    timedelta(minutes=30),
    timedelta(hours=1),
    timedelta(hours=2),
    timedelta(hours=4),
)


def schedule_jobs(
    application: Application[Any, Any, Any, Any, Any, Any],
    svc: Services,
    deliverer: Deliverer[Any],
) -> None:
    """Add every job, sending through `deliverer`; without a JobQueue (the job-queue extra)
    there are none, loudly."""
    queue = application.job_queue
    if queue is None:
        log.warning("no JobQueue, so no reminders or token jobs (install the job-queue extra)")
        return
    at = svc.settings.REMINDER_TIME.replace(tzinfo=svc.settings.timezone)
    now = datetime.now(svc.settings.timezone)
    svc.metrics.watch_sweep(lambda: sweep_hour(svc.settings.timezone, svc.settings.REMINDER_TIME))
    queue.run_repeating(
        partial(_hourly_sweep, deliverer=deliverer),
        interval=SWEEP_INTERVAL,
        first=next_pass(now, svc.settings.REMINDER_TIME),
        name="reminders:hourly",
    )
    queue.run_once(
        partial(_catch_up_sweep, deliverer=deliverer),
        when=CATCH_UP_DELAY,
        name="reminders:catch-up",
    )
    # How often an idle process looks for cards a dead process left (`Sweeps.stranded`).
    watch = lease_of(svc.settings)
    queue.run_repeating(
        partial(_watch_sweep, deliverer=deliverer),
        interval=watch,
        first=watch,
        name="reminders:watch",
    )
    queue.run_daily(partial(_token_expiry, deliverer=deliverer), time=at, name="token-expiry")
    queue.run_repeating(
        purge_expired_job, interval=STATE_PURGE_INTERVAL, first=60, name="purge-expired"
    )
    for when in SHELF_CHECKS:
        queue.run_daily(
            partial(_shelf_check, deliverer=deliverer),
            time=when.replace(tzinfo=svc.settings.timezone),
            name="shelf-watches",
        )


async def _shelf_check(context: Context, deliverer: Deliverer[Any]) -> None:
    svc = services(context)
    await check_watches(svc.store, svc.library, deliverer)


# --- the reminder sweep -------------------------------------------------------------------


def next_pass(now: datetime, at: time) -> datetime:
    """The next time at `at`'s minute (and second) past an hour, after `now`: when the hourly
    sweep runs."""
    candidate = now.replace(minute=at.minute, second=at.second, microsecond=at.microsecond)
    return candidate if candidate > now else candidate + SWEEP_INTERVAL


def hours_due(now: datetime, at: time) -> tuple[int, int]:
    """(this hour, the hour of chats that chose none) for a pass at `now`: those chats are
    due once `REMINDER_TIME` itself has come (24: not yet today)."""
    return now.hour, at.hour if now.time() >= at else 24


def sweep_hour(zone: tzinfo, at: time) -> tuple[datetime, int, int]:
    """(now, this hour, the default hour) as an hourly pass now would read them."""
    now = datetime.now(zone)
    return (now, *hours_due(now, at))


async def _run_sweep(
    context: Context, deliverer: Deliverer[Any], day: date | None, attempt: int
) -> SweepReport | None:
    svc = services(context)
    now = datetime.now(svc.settings.timezone)
    now_day = now.date()
    if day is not None and day != now_day:
        return None  # a retry that slipped past midnight: the new day's sweep takes over

    def hours() -> tuple[date, int, int]:
        now, hour, default_hour = sweep_hour(svc.settings.timezone, svc.settings.REMINDER_TIME)
        return now.date(), hour, default_hour

    svc.sweeps_running += 1
    try:
        report = await sweep(
            store=svc.store,
            library=svc.library,
            deliverer=deliverer,
            settings=svc.settings,
            today=now_day,
            branches=svc.branches,
            hours=hours,
            retry=RETRY_DELAYS[0],
        )
    finally:
        svc.sweeps_running -= 1
    svc.metrics.sweep(report)
    if report.needs_retry and attempt < len(RETRY_DELAYS) and context.job_queue is not None:
        delay = RETRY_DELAYS[attempt]
        log.info("reminders: retrying unfinished patrons in %s", delay)
        context.job_queue.run_once(
            partial(_retry_sweep, deliverer=deliverer),
            when=delay,
            data={"day": report.day.isoformat(), "attempt": attempt + 1},
            name="reminders:retry",
        )
    return report


async def _hourly_sweep(context: Context, deliverer: Deliverer[Any]) -> None:
    await _run_sweep(context, deliverer, None, 0)


async def _catch_up_sweep(context: Context, deliverer: Deliverer[Any]) -> None:
    """At start: sweep today's unfinished cards whose hour has come, if any.

    Exactly once holds as for any sweep: cards already swept today are not claimed again,
    cards another process is sweeping (or a crashed one leased) are skipped until their lease
    ends, and each reminder's key is recorded before it is sent.
    """
    svc = services(context)
    now = datetime.now(svc.settings.timezone)
    day = now.date()
    hour, default_hour = hours_due(now, svc.settings.REMINDER_TIME)
    left = await svc.store.sweeps.unswept(day, hour, default_hour)
    if not left:
        log.info("reminders: today's sweep is done; no catch-up")
        return
    log.info("reminders: catching up on %s cards (their hour has come)", left)
    report = await _run_sweep(context, deliverer, day, 0)
    if report is None or report.needs_retry:
        return  # the retry sweeps take it from here
    # Cards still leased by another process, or by one that died mid-sweep, are picked up
    # once their lease has run out (a live process will have finished them by then).
    if await svc.store.sweeps.unswept(day, hour, default_hour) and context.job_queue is not None:
        context.job_queue.run_once(
            partial(_retry_sweep, deliverer=deliverer),
            when=lease_of(svc.settings) + CATCH_UP_DELAY,
            data={"day": day.isoformat(), "attempt": len(RETRY_DELAYS)},
            name="reminders:after-lease",
        )


async def _watch_sweep(context: Context, deliverer: Deliverer[Any]) -> None:
    """Sweep the cards left stranded by a process that died, unless a pass runs here (it
    rescans for them by itself)."""
    svc = services(context)
    if svc.sweeps_running:
        return
    now, hour, default_hour = sweep_hour(svc.settings.timezone, svc.settings.REMINDER_TIME)
    if await svc.store.sweeps.stranded(now.date(), hour, default_hour):
        log.info("reminders: sweeping cards no process is working on")
        await _run_sweep(context, deliverer, now.date(), len(RETRY_DELAYS))


async def _retry_sweep(context: Context, deliverer: Deliverer[Any]) -> None:
    data = context.job.data if context.job is not None else None
    if not isinstance(data, dict):
        return
    day = date.fromisoformat(str(data["day"]))
    await _run_sweep(context, deliverer, day, int(data["attempt"]))


# --- tokens and expired rows ---------------------------------------------------------------


async def _token_expiry(context: Context, deliverer: Deliverer[Any]) -> None:
    await token_expiry_job(services(context).store, deliverer)


async def token_expiry_job(store: Store, deliverer: Deliverer[Any]) -> None:
    """Daily: lapse the cards whose login has run out and say so once per chat, naming them
    all with a login button each (the cards stay, with their names and settings); warn once
    three days ahead."""
    now = datetime.now(UTC)
    lapsed: dict[int, list[Card]] = {}
    for chat_id, number in await store.cards.expired(now):
        card = await store.cards.get(chat_id, number)  # None: gone, or its token unreadable
        if card is None or card.token_expires_at is None or card.token_expires_at > now:
            continue  # logged in again since: the fresh card stays
        # Atomic: with several processes only one of them tells the patron; and only while
        # the card holds the token that ran out.
        if (done := await store.lapse_card(card)) is not None:
            lapsed.setdefault(chat_id, []).append(done)
    for chat_id, cards in lapsed.items():
        await _tell_lapsed(store, deliverer, chat_id, cards)
    for card in await store.cards.expiring(now + EXPIRY_WARNING):
        expires_at = card.token_expires_at
        if expires_at is None or expires_at <= now:
            continue  # expired since the first query; the next run lapses it
        await store.cards.mark_expiry_warned(card.chat_id, card.number)
        days = max(1, -(-(expires_at - now) // timedelta(days=1)))
        await _notify(store, deliverer, card, "connect.expiry_warning", days=days)


async def _chat_lang(store: Store, chat_id: int) -> str:
    """The chat's language, for jobs, which have no update: the saved one, else Telegram's."""
    chat = await store.chats.chat(chat_id)
    return pick_language(chat.language, chat.telegram_language)


async def _tell_lapsed(
    store: Store, deliverer: Deliverer[Any], chat_id: int, cards: list[Card]
) -> None:
    """One message for the chat's cards whose login ran out today, each with its login
    button; a blocked or failing chat does not stop the job."""
    lang = await _chat_lang(store, chat_id)
    every = await store.cards.of_chat(chat_id, lapsed=True)
    if len(every) == len([card for card in every if card.is_lapsed]):
        await store.chats.set_card_ended(chat_id, "expired")
    if len(every) == 1:
        lead = t(lang, "connect.lapsed")
    else:
        lead = lapsed_lead(cards, lang, one="lists.lapsed_one", many="lists.lapsed_many")
    text, keyboard = await deliverer.login_message(cards, lang, lead)
    delivery = await deliverer.send(chat_id, text, keyboard)
    if delivery.outcome is Outcome.BLOCKED:
        log.info("chat %s blocked the bot; lapsed login not told", chat_id)
    elif not delivery.sent:
        log.warning("lapsed login notice to chat %s failed: %s", chat_id, _kind(delivery))


async def _notify(
    store: Store, deliverer: Deliverer[Any], card: Card, key: str, **params: object
) -> None:
    """A token notice with the login button, headed by the card's name when the chat has
    others; a blocked or failing chat does not stop the job."""
    chat_id = card.chat_id
    lang = await _chat_lang(store, chat_id)
    lead = t(lang, key, **params)
    cards = await store.cards.of_chat(chat_id, lapsed=True)
    if any(other.number != card.number for other in cards):
        lead = f"{card_heading(card, lang)}\n{lead}"
    delivery = await deliverer.send_login(chat_id, lang, lead)
    if delivery.outcome is Outcome.BLOCKED:
        log.info("chat %s blocked the bot; token notice not delivered", chat_id)
    elif not delivery.sent:
        log.warning("token notice to chat %s failed: %s", chat_id, _kind(delivery))


def _kind(delivery: Delivery) -> str:
    """What failed, for the log: the face's error by its kind (never its text)."""
    return type(delivery.error).__name__


async def purge_expired_job(context: Context) -> None:
    """Hourly: drop expired login states and pending links (revoking their tokens), old
    buttons, old reminder history and long-blocked chats (`Store.purge_expired`)."""
    removed = await services(context).store.purge_expired()
    if removed:
        log.debug("purged %s expired rows", removed)
