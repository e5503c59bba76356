"""library-bot: a Telegram bot for patrons of Danish public libraries.

One package in layers, lowest first; a layer imports only from the layers below it
(`lint-imports` checks it, docs/architecture.md draws it): config, library, rules, storage,
texts, services, telegram, jobs, web, runtime, then the sandbox, the demo and the CLI on top.
"""
