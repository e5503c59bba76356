"""Layer: the patron's actions (reading a chat's cards and lists, renewing, ordering,
cancelling, logging in and out), each returning a typed result.

The faces (the chat, the Mini App, the reminders, inline mode) render these results and decide
nothing themselves, so a rule lives here once.
"""
