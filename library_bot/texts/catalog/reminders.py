"""Patron-facing texts of the reminder digest and `/reminders`."""

from __future__ import annotations

from library_bot.texts.catalog import Message, _, _n

MESSAGES: tuple[Message, ...] = (
    _("reminders.digest.header", "🔔 <b>Reminder from the library</b>"),
    _("reminders.digest.due", "<b>Due soon</b>"),
    _("reminders.digest.overdue", "<b>Overdue</b>"),
    _("reminders.digest.ready", "<b>Ready for pick-up</b>"),
    _(
        "reminders.digest.unreadable",
        "<b>The due date could not be read</b>\n"
        "<i>The library sent a date I cannot read, so I cannot remind you of it. Check the date "
        "with your library.</i>",
    ),
    _("reminders.digest.footer", "Turn reminders off or choose the days with /reminders."),
    _("reminders.button.renew", "Renew: {title}"),
    _("reminders.button.renew_all", "Renew all"),
    _(
        "reminders.reconnect",
        "Your connection to the library has expired, so reminders are paused. Log in again to "
        "continue.",
    ),
    _("reminders.reconnect.button", "Log in again"),
    _("reminders.status.on", "🔔 Reminders are <b>on</b>: {days}."),
    _("reminders.status.off", "🔕 Reminders are <b>off</b>."),
    _(
        "reminders.status.no_account",
        "🔕 You get <b>no reminders</b> right now, because you are not logged in. Send /login. "
        "Once you are logged in, this applies:",
    ),
    # TRANSLATORS: {days} is a list ("3, 1 and 0") or one number; the form follows that number
    _n(
        "reminders.status.days",
        "{days} day before the due date (0 = on the day), and when a loan is overdue",
        "{days} days before the due date (0 = on the day), and when a loan is overdue",
    ),
    _("reminders.status.default", "(the library's default)"),
    _("reminders.status.ready", "You are also told when a hold is ready for pick-up."),
    _(
        "reminders.status.howto",
        "Choose the days with the buttons or type e.g. <code>/reminders 5 2 0</code>. "
        "<code>/reminders off</code> turns them off, <code>/reminders on</code> turns them back "
        "on.",
    ),
    _("reminders.and", "and"),
    _("reminders.button.on", "🔔 Turn on"),
    _("reminders.button.off", "🔕 Turn off"),
    _("reminders.button.days", "{days} days"),
    _("reminders.saved.on", "✅ Reminders are on."),
    _("reminders.saved.off", "✅ Reminders are off. Turn them on again with /reminders on."),
    _("reminders.saved.days", "✅ Saved."),
    _n(
        "reminders.invalid",
        "I did not understand that. Give up to {max} whole number from 0 to {limit}, e.g. "
        "<code>/reminders 5 2 0</code>, or <code>/reminders off</code> / "
        "<code>/reminders on</code>.",
        "I did not understand that. Give up to {max} whole numbers from 0 to {limit}, e.g. "
        "<code>/reminders 5 2 0</code>, or <code>/reminders off</code> / "
        "<code>/reminders on</code>.",
        n="max",
    ),
    _("reminders.expired_button", "That button has expired. Send /reminders again."),
)
