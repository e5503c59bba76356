"""Stand-ins for the library services and the Telegram Bot API, and the demo that runs them with
the bot. It uses the bot's public parts (`bot.cli`, `bot.config`, `bot.runtime`); the bot never
imports it."""
