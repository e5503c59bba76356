"""Layer: the patron's actions (reading a chat's cards and lists, renewing, ordering,
cancelling, logging in and out), each returning a typed result.

The faces (the chat, the Mini App, the reminders, inline mode) render these results and decide
nothing themselves, so a rule lives here once. The faces reach storage only through this
layer (an import-linter contract, and tests/test_architecture.py): what they read or keep of a
chat goes through a module named for what it is for (`chats`, `cards`, `logins`, `buttons`,
`watches`, `calendar`, `health`), and the types they render come from `vocabulary`.
"""
