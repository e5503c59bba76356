"""Texts of /calendar and of the calendar feed itself."""

from __future__ import annotations

from bot.texts.catalog import Message, _

MESSAGES: tuple[Message, ...] = (
    _("calendar.feed.name", "Library"),
    _("calendar.event.due", "📚 Due: {title}"),
    _("calendar.event.pick_up", "📦 Last day to pick up: {title}"),
    _("calendar.event.branch", "Pick up at {branch}"),
    _("calendar.event.pickup_id", "Pick-up no. {pickup_id}"),
    _("calendar.event.log_in", "🔑 Log in again to keep this calendar current"),
    _(
        "calendar.event.log_in_why",
        "The library login has ended, so this calendar shows the due dates and pick-up days "
        "last seen. Log in again in the bot with /login.",
    ),
    _(
        "calendar.made",
        "📅 <b>Your library calendar</b>\n"
        "\n"
        "Subscribe to this address in your calendar (Google, Apple, Outlook) to see your due "
        "dates and last pick-up days. It follows your renewals.\n"
        "\n"
        "<code>{url}</code>\n"
        "\n"
        "Keep the address secret: anyone who has it can see your loans. /calendar off closes "
        "it, and you can make a new one.",
    ),
    # The address is the link's text too: Telegram may show a webcal: link as plain text.
    _("calendar.subscribe", '📅 Subscribe in your calendar app: <a href="{webcal}">{webcal}</a>'),
    _("calendar.open_button", "📅 Open the calendar address"),
    _("calendar.off", "📅 The calendar address is closed. /calendar makes a new one."),
    _("calendar.none", "You have no calendar address. /calendar makes one."),
    _(
        "calendar.exists",
        "You already have a calendar address. The bot does not keep it in plain text and cannot "
        "show it again: /calendar new makes a new one (the old one stops working), and "
        "/calendar off closes it.",
    ),
    _(
        "calendar.unknown",
        "Type /calendar for your calendar address, /calendar new for a new one, or /calendar "
        "off to close it.",
    ),
    _(
        "calendar.no_public_url",
        "The calendar needs the bot to have a public address. It is not set up here.",
    ),
)
