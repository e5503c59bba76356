"""The bot's profile texts, set at start (setMyDescription, setMyShortDescription).

Plain text, not HTML: Telegram shows them as they are. The description (at most 512
characters) fills an empty chat before /start; the short one (at most 120) is on the bot's
profile page and in shared links.
"""

from __future__ import annotations

from bot.texts.catalog import Message, _

MESSAGES: tuple[Message, ...] = (
    _(
        "profile.description",
        "Your library in Telegram: see your loans, holds and fees, renew loans, order "
        "materials and get a reminder before something is due. For patrons of Danish public "
        "libraries. You log in on the libraries' own login page. Press Start to begin.",
    ),
    _(
        "profile.short_description",
        "Loans, holds, renewals and due-date reminders from Danish public libraries.",
    ),
)
