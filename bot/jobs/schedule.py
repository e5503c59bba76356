"""Every scheduled job of `library-bot run`, in one place, on PTB's JobQueue.

- the reminder sweep daily at `REMINDER_TIME` in `BOT_TIMEZONE`, with retry sweeps the same
  day while patrons are left unfinished (`RETRY_DELAYS`);
- token expiry: forget expired tokens and warn three days ahead, daily at the same time;
- purge: expired login states, pending links, old buttons, old reminder history and
  long-blocked chats, hourly.
"""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, timedelta
from typing import Any

from telegram.error import Forbidden, TelegramError
from telegram.ext import Application, ContextTypes

from bot.jobs.sweep import sweep
from bot.services import Services, services
from bot.telegram.ui import chat_lang, send_login
from bot.texts import t
from bot.texts.cards import card_heading
from storage.store import Account

log = logging.getLogger(__name__)

Context = ContextTypes.DEFAULT_TYPE

EXPIRY_WARNING = timedelta(days=3)
STATE_PURGE_INTERVAL = timedelta(hours=1)
# Retry sweeps after the daily one, while patrons are still left unfinished (same day only).
RETRY_DELAYS = (
    timedelta(minutes=15),
    timedelta(minutes=30),
    timedelta(hours=1),
    timedelta(hours=2),
    timedelta(hours=4),
)


def schedule_jobs(application: Application[Any, Any, Any, Any, Any, Any], svc: Services) -> None:
    """Add every job; without a JobQueue (the job-queue extra) there are none, loudly."""
    queue = application.job_queue
    if queue is None:
        log.warning("no JobQueue, so no reminders or token jobs (install the job-queue extra)")
        return
    at = svc.settings.REMINDER_TIME.replace(tzinfo=svc.settings.timezone)
    queue.run_daily(_daily_sweep, time=at, name="reminders:daily")
    queue.run_daily(token_expiry_job, time=at, name="token-expiry")
    queue.run_repeating(
        purge_expired_job, interval=STATE_PURGE_INTERVAL, first=60, name="purge-expired"
    )


# --- the reminder sweep -------------------------------------------------------------------


async def _run_sweep(context: Context, day: date | None, attempt: int) -> None:
    svc = services(context)
    now_day = datetime.now(svc.settings.timezone).date()
    if day is not None and day != now_day:
        return  # a retry that slipped past midnight: the new day's sweep takes over
    report = await sweep(
        store=svc.store,
        library=svc.library,
        bot=context.bot,
        settings=svc.settings,
        today=day,
        branches=svc.branches,
    )
    svc.metrics.sweep(report)
    if report.needs_retry and attempt < len(RETRY_DELAYS) and context.job_queue is not None:
        delay = RETRY_DELAYS[attempt]
        log.info("reminders: retrying unfinished patrons in %s", delay)
        context.job_queue.run_once(
            _retry_sweep,
            when=delay,
            data={"day": report.day.isoformat(), "attempt": attempt + 1},
            name="reminders:retry",
        )


async def _daily_sweep(context: Context) -> None:
    await _run_sweep(context, None, 0)


async def _retry_sweep(context: Context) -> None:
    data = context.job.data if context.job is not None else None
    if not isinstance(data, dict):
        return
    await _run_sweep(context, date.fromisoformat(str(data["day"])), int(data["attempt"]))


# --- tokens and expired rows ---------------------------------------------------------------


async def token_expiry_job(context: Context) -> None:
    """Daily: forget tokens that have expired and say so once; warn once three days ahead."""
    store = services(context).store
    now = datetime.now(UTC)
    for chat_id, card in await store.expired_accounts(now):
        # delete_account is atomic: with several processes only one of them tells the patron.
        if (gone := await store.delete_account(chat_id, card)) is not None:
            await store.set_account_ended(chat_id, "expired")
            await _notify(context, gone, "connect.expired")
    for account in await store.accounts_expiring(now + EXPIRY_WARNING):
        expires_at = account.token_expires_at
        if expires_at is None or expires_at <= now:
            continue  # expired since the first query; the next run forgets it
        await store.mark_expiry_warned(account.chat_id, account.card)
        days = max(1, -(-(expires_at - now) // timedelta(days=1)))
        await _notify(context, account, "connect.expiry_warning", days=days)


async def _notify(context: Context, account: Account, key: str, **params: object) -> None:
    """A token notice with the login button, headed by the card's name when the chat has
    others; a blocked or failing chat does not stop the job."""
    chat_id = account.chat_id
    try:
        lang = await chat_lang(context, chat_id)
        lead = t(lang, key, **params)
        others = [a for a in await services(context).store.cards(chat_id) if a.card != account.card]
        if others:
            lead = f"{card_heading(account.label, account.card, lang)}\n{lead}"
        await send_login(context, chat_id, lang, lead=lead)
    except Forbidden:
        log.info("chat %s blocked the bot; token notice not delivered", chat_id)
    except TelegramError as exc:
        log.warning("token notice to chat %s failed: %s", chat_id, type(exc).__name__)


async def purge_expired_job(context: Context) -> None:
    """Hourly: drop expired login states and pending links (revoking their tokens), old
    buttons, old reminder history and long-blocked chats (`Store.purge_expired`)."""
    removed = await services(context).store.purge_expired()
    if removed:
        log.debug("purged %s expired rows", removed)
