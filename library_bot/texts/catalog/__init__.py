"""Text catalogues: one module per area, each with `DA` and `EN` dicts holding the same keys.

`library_bot.texts` discovers every module here, so adding a file is enough. Keys are prefixed by
the
area (`common.`, `render.`, `connect.`, ...); texts are Telegram HTML.
"""
