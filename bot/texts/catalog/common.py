"""Texts shared by every command: connection state, upstream failures, generic buttons."""

from __future__ import annotations

from bot.texts.catalog import Message, _, _n

MESSAGES: tuple[Message, ...] = (
    _(
        "common.not_connected",
        "You are not logged in yet. Tap the button to log in with your library.",
    ),
    _("common.login_button", "🔑 Log in with your library"),
    _("common.unavailable", "⚠️ The library system is not answering right now. Try again shortly."),
    _(
        "common.malformed",
        "⚠️ The library sent something unexpected. We have logged it. Try again later.",
    ),
    _(
        "common.reconnect",
        "🔑 Your library login has expired or was refused. Log in again to continue.",
    ),
    _(
        "common.login_expired",
        "🔑 Your library login has expired, so I cannot see your account any more. Log in again "
        "to continue.",
    ),
    _(
        "common.logged_in_meanwhile",
        "🔄 The card was logged in again while I asked the library, which refused the old "
        "login. Nothing was changed. Send the command again.",
    ),
    _(
        "common.logged_out_before",
        "🔑 You logged out. Log in again with the button to see your loans and holds.",
    ),
    _(
        "common.user_refused",
        "⚠️ Your library could not look you up as a patron right now (“{code}”). Try again "
        "later, or contact your library if it keeps happening.",
    ),
    _("common.stale_button", "That button is no longer valid. Try the command again."),
    # TRANSLATORS: a popup for the second tap of a double tap; the answer is a new message.
    _("common.tapped_twice", "Answered a moment ago – see below."),
    _(
        "common.not_your_button",
        "That button is for the person who asked. Send the command yourself.",
    ),
    _(
        "common.private_only",
        "🔒 Your library account is only used in a private chat with me, where nobody else can "
        "see it: {link}",
    ),
    _(
        "common.private_only_button",
        "🔒 Library accounts are only used in a private chat with me: {link}",
    ),
    _("common.private_only_open", "Open a private chat"),
    _("common.unknown_command", "I don't know that command. Send /help to see what I can do."),
    _(
        "common.unknown_command_near",
        "I don't know that command. Did you mean /{command}? Send /help to see what I can do.",
    ),
    _("common.yes", "Yes"),
    _("common.no", "No"),
    _("common.cancel", "Cancel"),
    _("common.cancelled", "Cancelled."),
    _("common.done", "✅ Done."),
    _n(
        "common.too_long_input",
        "Your message is too long. Try a shorter text (at most {limit} character).",
        "Your message is too long. Try a shorter text (at most {limit} characters).",
        n="limit",
    ),
    _("common.error", "Something went wrong on our side. Try again shortly."),
    # TRANSLATORS: the word before the last item of a list: "3, 1 and 0", "Karen, Jonas and Ole"
    _("common.and", "and"),
    # The bot's own database is not answering: every command fails alike until it is back.
    _("common.outage", "⚠️ The bot itself is having trouble right now. Try again in a minute."),
)
