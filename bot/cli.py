"""The `library-bot` console script: one sub-command per operator task (see the contract).

The top of the package: it parses arguments, loads the settings a command needs, and calls the
layer that does the work. Nothing imports it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from sqlalchemy.exc import SQLAlchemyError

from bot.config.logs import setup_logging
from bot.config.settings import (
    LIBRARY_VARIABLES,
    Settings,
    SettingsError,
    load_settings,
    new_key,
)
from bot.runtime import maintenance
from bot.runtime.runner import run_bot
from bot.runtime.signals import stop_on_signals
from sandbox import demo
from sandbox.cli import serve as serve_sandbox

T = TypeVar("T")

EXIT_CONFIG = 2
EXIT_FAILED = 1
BOT_VARIABLES = ("TELEGRAM_BOT_TOKEN", "TOKEN_KEYS", *LIBRARY_VARIABLES)


def settings_for(command: str, *required: str) -> Settings:
    """Load settings and insist on the variables `command` cannot do without."""
    settings = load_settings()
    settings.require(*required, command=command)
    return settings


def _on_database(command: str, work: Coroutine[Any, Any, T]) -> T | None:
    """Run `work`; None after saying why the database refused (parameters are hidden by the
    engine, so the message carries no token)."""
    try:
        return asyncio.run(work)
    except (SQLAlchemyError, OSError) as exc:
        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
        print(f"library-bot {command}: database error: {reason}", file=sys.stderr)
        return None


def _run(_: argparse.Namespace) -> int:
    settings = settings_for("run", *BOT_VARIABLES)
    secret_values = [
        value.get_secret_value()
        for value in (settings.TELEGRAM_BOT_TOKEN, settings.CLIENT_SECRET, settings.WEBHOOK_SECRET)
        if value is not None
    ]
    setup_logging(
        settings.LOG_LEVEL,
        settings.LOG_FORMAT,
        secrets=secret_values + settings.proxies.passwords(),
    )

    async def serve() -> None:
        with stop_on_signals() as stop:
            await run_bot(settings, stop=stop)

    asyncio.run(serve())
    return 0


def _demo(_: argparse.Namespace) -> int:
    # `PORT` (when set) is the chat page's port; `.demo/` holds the data.
    base = load_settings()
    chat_port = base.PORT if "PORT" in base.model_fields_set else None
    return asyncio.run(demo.serve(demo.DEFAULT_DIR, base=base, chat_port=chat_port))


def _sandbox(args: argparse.Namespace) -> int:
    return asyncio.run(
        serve_sandbox(
            host=args.host,
            port=args.port,
            single_port=args.single_port,
            order_delay=args.order_delay,
        )
    )


def _remind(args: argparse.Namespace) -> int:
    settings = settings_for("remind", *BOT_VARIABLES)
    if not args.once:
        print(
            "library-bot remind: only --once is supported here; "
            "the daily sweep runs inside `library-bot run`",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    report = asyncio.run(maintenance.remind_once(settings))
    print(report.summary())
    return 0


def _migrate(_: argparse.Namespace) -> int:
    settings = settings_for("migrate", "DATABASE_URL")
    revision = _on_database("migrate", maintenance.migrate(settings))
    if revision is None:
        return EXIT_FAILED
    print(f"database schema at revision {revision} (head)")
    return 0


def _rotate_keys(_: argparse.Namespace) -> int:
    settings = settings_for("rotate-keys", "DATABASE_URL", "TOKEN_KEYS")
    rotated = _on_database("rotate-keys", maintenance.rotate_keys(settings))
    if rotated is None:
        return EXIT_FAILED
    print(f"re-encrypted {rotated} token{'' if rotated == 1 else 's'} under the newest key")
    return 0


def _generate_key(_: argparse.Namespace) -> int:
    print(new_key())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="library-bot",
        description="A Telegram bot for patrons of Danish public libraries.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(
        name: str, help_text: str, handler: Callable[[argparse.Namespace], int]
    ) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(handler=handler)
        return sub

    add("run", "run the bot: Telegram updates, the HTTP server and the reminder scheduler", _run)
    add("demo", "run the library sandbox, a Telegram stand-in with a chat page, and the bot", _demo)
    sandbox = add(
        "sandbox", "run only the library sandbox and print how to point a bot at it", _sandbox
    )
    sandbox.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)"
    )
    sandbox.add_argument("--port", type=int, default=0, help="first port (default: any free ports)")
    sandbox.add_argument(
        "--single-port", action="store_true", help="serve all four services on one port"
    )
    sandbox.add_argument(
        "--order-delay",
        type=float,
        default=5.0,
        help="seconds before a placed order shows up in /v3/user (default 5)",
    )
    remind = add("remind", "run the reminder sweep", _remind)
    remind.add_argument("--once", action="store_true", help="one sweep now, then exit")
    add("migrate", "create or upgrade the database schema", _migrate)
    add("generate-key", "print a new key for TOKEN_KEYS", _generate_key)
    add("rotate-keys", "re-encrypt every stored token under the newest key", _rotate_keys)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except SettingsError as exc:
        print(f"library-bot {args.command}: configuration error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
