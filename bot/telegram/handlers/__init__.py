"""Thin PTB handlers, one module per command area, each exposing `handlers() -> list[BaseHandler]`.

`bot.telegram.app` lists the areas explicitly, `fallback` last in the same group; what
they share is in `bot.telegram` (`context`, `replies`, `keyboards`, `cards`, `failures`),
`cardlists` (the lists of the chat's cards) and `common` (how a one-card command starts).
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
    "where",
    "watches",
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
