"""Thin PTB handlers, one module per area, each exposing `handlers() -> list[BaseHandler]`.

`bot.app` discovers the modules with `pkgutil`; `common` holds shared helpers and `fallback`
is registered last (group 1).
"""
