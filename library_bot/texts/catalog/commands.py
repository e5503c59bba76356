"""Descriptions of the bot's commands in Telegram's menu (setMyCommands, at most 256 chars)."""

from __future__ import annotations

DA: dict[str, str] = {
    "commands.start": "Velkomst og kom i gang",
    "commands.help": "Se alle kommandoer",
    "commands.login": "Forbind din lånerkonto",
    "commands.loans": "Dine lån og afleveringsdatoer",
    "commands.holds": "Dine reserveringer",
    "commands.debt": "Gebyrer og mellemværende",
    "commands.order": "Bestil et materiale",
    "commands.search": "Søg i bibliotekets materialer",
    "commands.renew": "Forny lån",
    "commands.reminders": "Påmindelser om afleveringer",
    "commands.calendar": "Dine afleveringsdage i din kalender",
    "commands.language": "Vælg sprog",
    "commands.logout": "Log ud af lånerkontoen",
    "commands.forget": "Slet alt, hvad botten ved om dig",
}

EN: dict[str, str] = {
    "commands.start": "Welcome and how to begin",
    "commands.help": "List all commands",
    "commands.login": "Connect your library account",
    "commands.loans": "Your loans and due dates",
    "commands.holds": "Your holds",
    "commands.debt": "Fees you owe",
    "commands.order": "Place a hold on a material",
    "commands.search": "Search the library's materials",
    "commands.renew": "Renew loans",
    "commands.reminders": "Due-date reminders",
    "commands.calendar": "Your due dates in your calendar",
    "commands.language": "Choose the language",
    "commands.logout": "Log out of the library account",
    "commands.forget": "Delete everything the bot knows about you",
}
