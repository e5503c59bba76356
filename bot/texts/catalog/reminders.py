"""Patron-facing texts of the reminder digest and `/reminders`."""

from __future__ import annotations

from bot.texts.catalog import Message, _, _n

MESSAGES: tuple[Message, ...] = (
    # TRANSLATORS: the digest comes from this bot, not from the library
    _("reminders.digest.header", "🔔 <b>Reminder from your library bot</b>"),
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
    _("reminders.button.renew_all", "Renew these"),
    _(
        "reminders.reconnect",
        "Your connection to the library has expired, so reminders are paused. Log in again to "
        "continue.",
    ),
    # TRANSLATORS: the reminders' one message for a card of several whose login lapsed.
    _(
        "reminders.lapsed_one",
        "🔑 {name}'s library login has lapsed, so its reminders are paused. The card stays "
        "here with its name and settings: log in as {name} with the button, and the reminders "
        "start again.",
    ),
    _(
        "reminders.lapsed_many",
        "🔑 The library logins of {names} have lapsed, so their reminders are paused. The "
        "cards stay here with their names and settings: log in as each of them with their "
        "buttons, and the reminders start again.",
    ),
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
        "{days} day before the due date, and when a loan is overdue",
        "{days} days before the due date, and when a loan is overdue",
    ),
    # TRANSLATORS: as reminders.status.days, when 0 (the due day itself) is one of the days
    _n(
        "reminders.status.days_zero",
        "{days} day before the due date (0 = on the day), and when a loan is overdue",
        "{days} days before the due date (0 = on the day), and when a loan is overdue",
    ),
    # TRANSLATORS: the days were never chosen: the bot's own default, not the library's
    _("reminders.status.default", "(the bot's default)"),
    _("reminders.status.ready", "You are also told when a hold is ready for pick-up."),
    # TRANSLATORS: {time} is the time of day, 07:00; the bot's time zone (Danish time)
    _("reminders.status.time", "⏰ They come at about <b>{time}</b>."),
    # TRANSLATORS: as reminders.status.time, for a chat that never chose a time
    _("reminders.status.time_default", "⏰ They come at about <b>{time}</b> (the bot's default)."),
    _("reminders.button.hour", "⏰ {time}"),
    # TRANSLATORS: {time} is a time of day the reminders can come at, 07:00
    _(
        "reminders.status.howto",
        "Choose the days and the time with the buttons or type e.g. "
        "<code>/reminders 5 2 0</code> or <code>/reminders {time}</code>. "
        "<code>/reminders off</code> turns them off, <code>/reminders on</code> turns them back "
        "on.",
    ),
    _("reminders.button.on", "🔔 Turn on"),
    _("reminders.button.off", "🔕 Turn off"),
    _("reminders.button.days", "{days} days"),
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
    # TRANSLATORS: {last} is 23:00, {example} 07:00 (24-hour clock, Danish time)
    _(
        "reminders.bad_time",
        "That is not a time of day. Give a time from 00:00 to {last}, e.g. "
        "<code>/reminders {example}</code>.",
    ),
    # TRANSLATORS: {earlier} and {later} are the two times nearest the one typed, 07:00 and
    # 08:00 for 7:30
    _(
        "reminders.on_the_hour",
        "Reminders go out once an hour ({earlier}, {later} and so on), so I cannot send them at "
        "that exact time. Choose {earlier} or {later}, e.g. <code>/reminders {later}</code>.",
    ),
    _("reminders.expired_button", "That button has expired. Send /reminders again."),
    # Notices no library sends (rules/notices.py), each turned on or off in /reminders.
    _("reminders.digest.queue", "<b>Nearer the front of the queue</b>"),
    _("reminders.digest.fees", "<b>New fee</b>"),
    # TRANSLATORS: {title} is a hold's title, {position} its new place in the queue
    _("notices.queue", "<b>{title}</b>: now number {position} in the queue"),
    _("notices.heading", "<b>Notices</b> (✅ on, ⬜ off; tap a button to change):"),
    # TRANSLATORS: one line per notice under notices.heading: its name, then what it tells
    _("notices.line", "{mark} <b>{name}</b>: {what}"),
    _("notices.what.refused", "a loan the library would not renew, every day from its due day"),
    _("notices.what.queue", "a hold moving up its queue"),
    _("notices.what.fees", "a new fee"),
    _("notices.what.pickup", "the last day to pick up a hold, with the branch's opening hours"),
    _("notices.what.orders", "an order placed here that has not shown up after a day"),
    _("notices.name.refused", "Not renewable ⛔"),
    _("notices.name.queue", "Queue moves"),
    _("notices.name.fees", "New fees"),
    _("notices.name.pickup", "Last pick-up day"),
    _("notices.name.orders", "Orders not arrived"),
    _(
        "notices.away.usage",
        "Give the number of days you will be away, from 1 to {max}, e.g. <code>/away 14</code>: "
        "I renew every loan due within them and tell you what could not be renewed.",
    ),
    _n(
        "notices.away.header",
        "🧳 <b>Before your trip</b>: the loans due within {count} day",
        "🧳 <b>Before your trip</b>: the loans due within {count} days",
    ),
    _(
        "notices.away.lapses",
        "📦 <b>{title}</b> waits for you at <b>{branch}</b> only until {date}, before you are "
        "back: pick it up before you leave.",
    ),
    _("reminders.digest.orders", "<b>An order has not arrived</b>"),
    _(
        "notices.order",
        "<b>{title}</b>: you ordered it here more than a day ago, but your library does not "
        "show it yet. Orders can take a while; if it is still missing, ask your library.",
    ),
    _("reminders.digest.lastday", "<b>Last day to pick up: today</b>"),
    # TRANSLATORS: {hours} is the branch's own text: Danish, or its English for a patron whose
    # language is not Danish when the library publishes one
    _("notices.hours", "<i>Opening hours, as the library publishes them:</i>\n{hours}"),
    # TRANSLATORS: the pick-up branch's hours on the last pick-up day; {hours}: 10:00–16:00
    _("notices.hours_on", "🕘 Open {day}: <b>{hours}</b>"),
    _("notices.closed", "⚠️ The library says this branch is temporarily closed."),
)
