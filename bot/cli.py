"""The `library-bot` console script: one sub-command per operator task (see the contract).

The top of the bot: it parses arguments, loads the settings a command needs, and calls the
layer that does the work. `demo` and `sandbox` belong to the sandbox package, which adds them
through the `library_bot.commands` entry points; they are loaded only when asked for, so
`library-bot run` never imports the sandbox.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, TypeVar

from sqlalchemy.exc import SQLAlchemyError

from bot.config.logs import setup_logging
from bot.config.settings import (
    LIBRARY_VARIABLES,
    Settings,
    SettingsError,
    load_settings,
    log_settings,
    new_key,
    unknown_variables_here,
)
from bot.runtime import loop, maintenance
from bot.runtime.runner import run_bot
from bot.runtime.signals import stop_on_signals
from bot.runtime.startup import StartupFailure, freeze_start_up_heap
from bot.services.metrics import package_version
from storage.engine import DatabaseUrlError, check_database_url, connection_problem
from storage.migrate import SchemaNewerThanCode

T = TypeVar("T")
Handler = Callable[[argparse.Namespace], int]

COMMANDS_GROUP = "library_bot.commands"

EXIT_CONFIG = 2
EXIT_FAILED = 1
BOT_VARIABLES = ("TELEGRAM_BOT_TOKEN", "TOKEN_KEYS", *LIBRARY_VARIABLES)

log = logging.getLogger("bot.cli")


def settings_for(command: str, *required: str) -> Settings:
    """Load settings and insist on the variables `command` cannot do without; first a warning
    for each variable that looks meant for the bot but is none of its settings (a typo there is
    often why a required one is missing)."""
    for warning in unknown_variables_here():
        log.warning("%s", warning)
    settings = load_settings()
    settings.require(*required, command=command)
    try:
        check_database_url(settings.DATABASE_URL)
    except DatabaseUrlError as exc:
        raise SettingsError(f"DATABASE_URL: {exc}") from None
    return settings


def _on_database(command: str, url: str, work: Coroutine[Any, Any, T]) -> T | None:
    """Run `work`; None after saying why the database refused (parameters are hidden by the
    engine, so the message carries no token)."""
    try:
        return loop.run(work)
    except (SQLAlchemyError, OSError) as exc:
        reason = connection_problem(url, exc)
        log.critical("library-bot %s: database error: %s", command, reason)
        return None


def _logging_for(settings: Settings) -> None:
    """The configured log format, with the secrets known at start masked and chat ids hashed
    under a key from the oldest token key (stable across restarts, processes and a rotation)."""
    secret_values = [
        value.get_secret_value()
        for value in (settings.TELEGRAM_BOT_TOKEN, settings.CLIENT_SECRET, settings.WEBHOOK_SECRET)
        if value is not None
    ]
    keys = settings.token_keys
    setup_logging(
        settings.LOG_LEVEL,
        settings.LOG_FORMAT,
        secrets=secret_values + settings.proxies.passwords(),
        chat_key=keys[-1] if keys else None,
    )


def _run(_: argparse.Namespace) -> int:
    settings = settings_for("run", *BOT_VARIABLES)
    _logging_for(settings)

    async def serve() -> None:
        with stop_on_signals() as stop:
            await run_bot(settings, stop=stop, on_ready=freeze_start_up_heap)

    try:
        loop.run(serve())
    except StartupFailure as exc:
        # One record in the configured format; the cause is in the message, not a traceback.
        logging.getLogger("bot.run").critical("start-up failed: %s", exc)
        return EXIT_FAILED
    return 0


def _remind(args: argparse.Namespace) -> int:
    settings = settings_for("remind", *BOT_VARIABLES)
    _logging_for(settings)
    if not args.once:
        log.critical(
            "library-bot remind: only --once is supported here; "
            "the daily sweep runs inside `library-bot run`"
        )
        return EXIT_CONFIG
    try:
        report = loop.run(maintenance.remind_once(settings))
    except StartupFailure as exc:
        log.critical("library-bot remind: start-up failed: %s", exc)
        return EXIT_FAILED
    print(report.summary())
    return 0


def _migrate(_: argparse.Namespace) -> int:
    settings = settings_for("migrate", "DATABASE_URL")
    _logging_for(settings)
    revision = _on_database("migrate", settings.DATABASE_URL, maintenance.migrate(settings))
    if revision is None:
        return EXIT_FAILED
    print(f"database schema at revision {revision} (head)")
    return 0


def _rotate_keys(_: argparse.Namespace) -> int:
    settings = settings_for("rotate-keys", "DATABASE_URL", "TOKEN_KEYS")
    _logging_for(settings)
    done = _on_database("rotate-keys", settings.DATABASE_URL, maintenance.rotate_keys(settings))
    if done is None:
        return EXIT_FAILED
    print(
        f"re-encrypted {done.rotated} token{'' if done.rotated == 1 else 's'} under the newest key"
    )
    if done.unreadable:
        # Not done: a script that removes the old key on exit 0 must not remove it now.
        log.critical(
            "library-bot rotate-keys: %d token%s left as %s: sealed under a key TOKEN_KEYS no "
            "longer holds. Put that key back and run rotate-keys again; without it, those "
            "patrons must log in again",
            done.unreadable,
            "" if done.unreadable == 1 else "s",
            "it was" if done.unreadable == 1 else "they were",
        )
        return EXIT_FAILED
    return 0


def _generate_key(_: argparse.Namespace) -> int:
    print(new_key())
    return 0


@dataclass(frozen=True)
class Command:
    """A sub-command another package adds under `COMMANDS_GROUP` in its entry points."""

    help: str
    handler: Handler
    configure: Callable[[argparse.ArgumentParser], None] = lambda _: None


BUILT_IN = ("run", "remind", "migrate", "generate-key", "rotate-keys")


def added_commands() -> dict[str, Command]:
    """The commands of installed packages (the sandbox's `demo` and `sandbox`)."""
    found: dict[str, Command] = {}
    for point in entry_points(group=COMMANDS_GROUP):
        command = point.load()
        if not isinstance(command, Command):
            raise TypeError(f"entry point {point.value} is not a library-bot Command")
        found[point.name] = command
    return found


def build_parser(added: dict[str, Command] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="library-bot",
        description="A Telegram bot for patrons of Danish public libraries.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, help_text: str, handler: Handler) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(handler=handler)
        return sub

    add("run", "run the bot: Telegram updates, the HTTP server and the reminder scheduler", _run)
    for name, command in (added or {}).items():
        command.configure(add(name, command.help, command.handler))
    remind = add("remind", "run the reminder sweep", _remind)
    remind.add_argument("--once", action="store_true", help="one sweep now, then exit")
    add("migrate", "create or upgrade the database schema", _migrate)
    add("generate-key", "print a new key for TOKEN_KEYS", _generate_key)
    add("rotate-keys", "re-encrypt every stored token under the newest key", _rotate_keys)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    # A built-in command loads nothing of other packages; anything else (help included) does.
    added = None if arguments[:1] and arguments[0] in BUILT_IN else added_commands()
    args = build_parser(added).parse_args(arguments)
    if args.command != "generate-key":  # the one command that reads no settings
        # The configured format from the start, so a configuration error is told in it too.
        configured = log_settings()
        setup_logging(configured.LOG_LEVEL, configured.LOG_FORMAT)
    try:
        return int(args.handler(args))
    except SchemaNewerThanCode as exc:  # `migrate`; `run` and `remind` say it as below
        log.critical("library-bot %s: configuration error: DATABASE_URL: %s", args.command, exc)
        return EXIT_CONFIG
    except SettingsError as exc:
        log.critical("library-bot %s: configuration error: %s", args.command, exc)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
