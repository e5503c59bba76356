"""Thin PTB handlers, one module per area, each exposing `handlers() -> list[BaseHandler]`.

`library_bot.telegram.app` discovers the modules with `pkgutil`; `common` holds shared helpers and
`fallback`
is registered last, in the same group.
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
    "reminders",
    "language",
    "logout",
    "forget",
)
