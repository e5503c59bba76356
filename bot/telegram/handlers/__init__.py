"""Thin PTB handlers, one module per command area, each exposing `handlers() -> list[BaseHandler]`.

`bot.telegram.app` lists the areas explicitly, `fallback` last in the same group; what
they share is in `bot.telegram.ui` (and `common`, how the borrower commands start).
"""

# The chat commands of the operator contract (and /recommend, /events, /news beyond it), in the
# order Telegram's menu shows them.
COMMANDS = (
    "start",
    "help",
    "login",
    "loans",
    "holds",
    "debt",
    "order",
    "search",
    "recommend",
    "events",
    "news",
    "renew",
    "away",
    "reminders",
    "calendar",
    "language",
    "cards",
    "logout",
    "forget",
)
