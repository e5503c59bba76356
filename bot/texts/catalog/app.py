"""Texts of the Mini App, the family overview page (plain text: the page is not Telegram HTML)."""

from __future__ import annotations

from bot.texts.catalog import Message, _

MESSAGES: tuple[Message, ...] = (
    _("app.button", "📚 Overview"),
    _("app.title", "Your library"),
    _("app.loans", "Loans"),
    _("app.holds", "Reservations"),
    # TRANSLATORS: heading of a strip showing the due dates of the next 30 days.
    _("app.timeline", "Due in the next 30 days"),
    _("app.nothing_due", "Nothing is due in the next 30 days."),
    # TRANSLATORS: {cards} names the cards whose loans the page could read ("Anna and Emil");
    # the other cards' logins have lapsed, so their loans are not known.
    _("app.nothing_due_on", "{cards}: nothing is due in the next 30 days."),
    _("app.no_cards", "No library card is connected. Use /login in the chat."),
    _("app.renew", "Renew"),
    _("app.renewing", "Renewing…"),
    _(
        "app.unknown",
        "The library did not answer. The loan may have been renewed: reload the page to see.",
    ),
    _("app.failed", "The library could not renew it now. Try again later."),
    # TRANSLATORS: the page asked too often in a short time; it can ask again in a moment
    _("app.busy", "One moment, please – try again in a few seconds."),
    # A loan renewed or tried today already (here or in the chat): the page has no /loans.
    _("app.already", "Already renewed or tried today."),
    _("app.card_failed", "The library could not be reached for this card."),
    _("app.card_login", "The login for this card has ended. Use /login in the chat."),
    _("app.unauthorized", "This page must be opened from the bot in Telegram."),
    _("app.loading", "Loading…"),
)
