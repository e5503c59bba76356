"""On top of the bot: stand-ins for the library services and the Telegram Bot API."""
