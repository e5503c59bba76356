"""Texts inside rendered loans, holds, debt and works, and relative dates
(`bot.texts.render`)."""

from __future__ import annotations

from bot.texts.catalog import Message, _, _n

MESSAGES: tuple[Message, ...] = (
    _("render.untitled", "(untitled)"),
    _("render.today", "today"),
    _("render.tomorrow", "tomorrow"),
    # TRANSLATORS: a due date {days} days ahead (never 0 or 1: those are today and tomorrow)
    _n("render.in_days", "in {days} day", "in {days} days", n="days"),
    _n("render.overdue", "{days} day overdue", "{days} days overdue", n="days"),
    _("render.loan.due", "due {date} ({relative})"),
    _("render.loan.due_text", "due {date} ⚠️ the date could not be read"),
    _("render.loan.no_due", "no due date"),
    _("render.hold.queue", "In the queue · number {position}"),
    _("render.hold.queue_unknown", "In the queue"),
    _("render.hold.in_process", "Being processed"),
    _("render.hold.ready", "Ready for pick-up"),
    _("render.hold.branch", "Pick up at {branch}"),
    _("render.hold.pickup_id", "Pick-up no. <b>{pickup_id}</b>"),
    _("render.hold.last_day", "collect by {date} ({relative})"),
    _("render.hold.last_day_text", "collect by {date} ⚠️ the date could not be read"),
    _("render.debt.total", "Total: <b>{amount}</b>"),
    # TRANSLATORS: a fee and what it is for: the material's title, in bold
    _("render.debt.for", "Fee for <b>{title}</b>"),
    _("render.debt.no_reason", "<b>Fee</b> (the library gives no reason)"),
    _("render.debt.family_total", "Total for all cards: <b>{amount}</b>"),
)
