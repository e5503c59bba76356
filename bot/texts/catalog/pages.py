"""Texts of the web pages shown after logging in at the access service."""

from __future__ import annotations

from bot.texts.catalog import Message, _

MESSAGES: tuple[Message, ...] = (
    _("pages.success_title", "Almost done"),
    _(
        "pages.success_body",
        "You are logged in. Go back to Telegram to connect your library account to the chat.",
    ),
    _("pages.back_to_telegram", "Back to Telegram"),
    _("pages.back_to_chat", "Back to the chat"),
    _("pages.logged_out_title", "You are logged out"),
    _(
        "pages.logged_out_body",
        "You are logged out of the library login in this browser. The next time you log in, you "
        "give your card number and PIN again.",
    ),
    _(
        "pages.logged_out_close_browser",
        "You are logged out of the library login. You logged in through UNI-login or WAYF, "
        "which keep a login of their own in this browser: close the browser to end that too.",
    ),
    _(
        "pages.success_code",
        "Using Telegram on another device? Send this to the bot within 10 minutes: "
        "<code>{code}</code>",
    ),
    _("pages.denied_title", "Login cancelled"),
    _(
        "pages.denied_body",
        "You cancelled the login, so nothing was connected. Type /login in Telegram to try again.",
    ),
    _("pages.expired_title", "This link has expired"),
    _(
        "pages.expired_body",
        "This login link has expired or was already used. Type /login in Telegram for a new one.",
    ),
    _("pages.bad_title", "Invalid request"),
    _("pages.bad_body", "This page is missing information. Type /login in Telegram to start over."),
    _("pages.failed_title", "The library is not answering"),
    _(
        "pages.failed_body",
        "The login could not be completed because the library's login service failed. Try again "
        "shortly with /login in Telegram.",
    ),
)
