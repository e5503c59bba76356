"""Descriptions of the bot's commands in Telegram's menu (setMyCommands, at most 256 chars)."""

from __future__ import annotations

from bot.texts.catalog import Message, _

MESSAGES: tuple[Message, ...] = (
    _("commands.start", "Welcome and how to begin"),
    _("commands.help", "List all commands"),
    _("commands.login", "Connect your library account"),
    _("commands.cards", "Your library cards in this chat"),
    _("commands.loans", "Your loans and due dates"),
    _("commands.holds", "Your holds"),
    _("commands.debt", "Fees you owe"),
    _("commands.order", "Place a hold on a material"),
    _("commands.search", "Search the library's materials"),
    _("commands.where", "Where a title stands at your library"),
    _("commands.watches", "Titles you are waiting to see back on the shelf"),
    _("commands.renew", "Renew loans"),
    _("commands.away", "Before a trip: renew what is due"),
    _("commands.reminders", "Due-date reminders"),
    _("commands.language", "Choose the language"),
    _("commands.logout", "Log out of the library account"),
    _("commands.forget", "Delete everything the bot knows about you"),
    _("commands.calendar", "Your due dates in your calendar"),
    _("commands.events", "Events at your library"),
    _("commands.news", "News from your library"),
    _("commands.recommend", "Suggestions from your loans"),
)
