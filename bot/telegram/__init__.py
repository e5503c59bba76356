"""Layer: the Telegram side: the bot factory, the application, UI helpers and handlers."""
