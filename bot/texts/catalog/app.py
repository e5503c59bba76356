"""Texts of the Mini App, the family overview page (plain text: the page is not Telegram HTML)."""

from __future__ import annotations

from bot.texts.catalog import Message, _

MESSAGES: tuple[Message, ...] = (
    _("app.button", "📚 Overview"),
    _("app.title", "Your library"),
    _("app.loans", "Loans"),
    _("app.holds", "Reservations"),
    _("app.fees", "Fees"),
    # TRANSLATORS: heading of a strip showing the due dates of the next 30 days.
    _("app.timeline", "Due in the next 30 days"),
    _("app.nothing_due", "Nothing is due in the next 30 days."),
    _("app.no_cards", "No library card is connected. Use /login in the chat."),
    _("app.no_loans", "No loans."),
    _("app.no_holds", "No reservations."),
    _("app.no_fees", "No fees."),
    _("app.due", "Due"),
    _("app.renew", "Renew"),
    _("app.renewing", "Renewing…"),
    _("app.renewed", "Renewed"),
    _("app.refused", "Can't be renewed"),
    _(
        "app.unknown",
        "The library did not answer. The loan may have been renewed: reload the page to see.",
    ),
    _("app.failed", "The library could not renew it now. Try again later."),
    _("app.already", "This button was used already. Reload the page."),
    _("app.ready", "Ready to pick up"),
    # TRANSLATORS: a reservation's place in the queue, followed by a number.
    _("app.queue", "Queue position"),
    _("app.pickup_id", "Pick-up number"),
    _("app.branch", "Branch"),
    _("app.last_day", "Last pick-up day"),
    _("app.hours", "Opening hours"),
    _("app.card_failed", "The library could not be reached for this card."),
    _("app.card_login", "The login for this card has ended. Use /login in the chat."),
    _("app.unauthorized", "This page must be opened from the bot in Telegram."),
    _("app.loading", "Loading…"),
)
