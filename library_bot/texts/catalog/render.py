"""Texts inside rendered loans, holds, debt and works, and relative dates
(`library_bot.texts.render`)."""

from __future__ import annotations

DA: dict[str, str] = {
    "render.untitled": "(uden titel)",
    "render.today": "i dag",
    "render.tomorrow": "i morgen",
    "render.in_days": "om {days} dage",
    "render.overdue_one": "{days} dag over tid",
    "render.overdue_other": "{days} dage over tid",
    "render.loan.due": "afleveres {date} ({relative})",
    "render.loan.due_text": "afleveres {date} ⚠️ datoen kunne ikke læses",
    "render.loan.no_due": "ingen afleveringsdato",
    "render.hold.queue": "I kø · nr. {position} i køen",
    "render.hold.queue_unknown": "I kø",
    "render.hold.in_process": "Behandles",
    "render.hold.ready": "Klar til afhentning",
    "render.hold.branch": "Afhentes på {branch}",
    "render.hold.pickup_id": "Afhentningsnr. <b>{pickup_id}</b>",
    "render.hold.last_day": "hentes senest {date} ({relative})",
    "render.hold.last_day_text": "hentes senest {date} ⚠️ datoen kunne ikke læses",
    "render.debt.fee": "Gebyr",
    "render.debt.total": "I alt: <b>{amount}</b>",
}

EN: dict[str, str] = {
    "render.untitled": "(untitled)",
    "render.today": "today",
    "render.tomorrow": "tomorrow",
    "render.in_days": "in {days} days",
    "render.overdue_one": "{days} day overdue",
    "render.overdue_other": "{days} days overdue",
    "render.loan.due": "due {date} ({relative})",
    "render.loan.due_text": "due {date} ⚠️ the date could not be read",
    "render.loan.no_due": "no due date",
    "render.hold.queue": "In the queue · number {position}",
    "render.hold.queue_unknown": "In the queue",
    "render.hold.in_process": "Being processed",
    "render.hold.ready": "Ready for pick-up",
    "render.hold.branch": "Pick up at {branch}",
    "render.hold.pickup_id": "Pick-up no. <b>{pickup_id}</b>",
    "render.hold.last_day": "collect by {date} ({relative})",
    "render.hold.last_day_text": "collect by {date} ⚠️ the date could not be read",
    "render.debt.fee": "Fee",
    "render.debt.total": "Total: <b>{amount}</b>",
}
