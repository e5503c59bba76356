"""Inline mode (`@<bot> <words>` in any chat): the shared card and its button."""

from __future__ import annotations

from bot.texts.catalog import Message, _

MESSAGES: tuple[Message, ...] = (
    # TRANSLATORS: the URL button under a book shared in any chat; it opens the private chat
    # with the bot, which then asks to confirm the order.
    _("inline.order_button", "📥 Order at your library"),
    # TRANSLATORS: the last line of a book shared in any chat (HTML).
    _("inline.card_footer", "<i>Shared from the library catalogue.</i>"),
    # TRANSLATORS: shown above an empty inline result list when the catalogue did not answer;
    # tapping it opens the private chat's search. Short: Telegram cuts it at about 30 characters.
    _("inline.unavailable", "Catalogue unavailable – search here"),
    # TRANSLATORS: shown above an empty inline result list when the bot's own database did not
    # answer; tapping it opens the private chat. Short, as above.
    _("inline.outage", "The bot has trouble – try later"),
)
