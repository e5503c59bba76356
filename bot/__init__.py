"""library-bot: a Telegram bot for patrons of Danish public libraries.

The bot in layers, lowest first; a layer imports only from the layers below it
(`lint-imports` checks it, docs/architecture.md draws it): config, library, rules, texts,
services, telegram, jobs, web, runtime, and the CLI on top. It stands on `storage`, and never
imports `sandbox`.
"""
