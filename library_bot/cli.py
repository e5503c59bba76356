"""The `library-bot` console script: one sub-command per operator task (see the contract)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Sequence

from library_bot.config.settings import Settings, SettingsError, load_settings, new_key

EXIT_CONFIG = 2


def _generate_key(_: argparse.Namespace) -> int:
    print(new_key())
    return 0


def _not_built(name: str) -> Callable[[argparse.Namespace], int]:
    def command(_: argparse.Namespace) -> int:
        load_settings()
        print(f"library-bot {name}: not built yet", file=sys.stderr)
        return 1

    return command


def _run(args: argparse.Namespace) -> int:
    from library_bot.runtime.runner import main as run_main

    return run_main(args)


def _sandbox(args: argparse.Namespace) -> int:
    from library_bot.sandbox.cli import serve

    return asyncio.run(
        serve(
            host=args.host,
            port=args.port,
            single_port=args.single_port,
            order_delay=args.order_delay,
        )
    )


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

    add(
        "run",
        "run the bot: Telegram updates, the HTTP server and the reminder scheduler",
        _run,
    )

    def _demo(args: argparse.Namespace) -> int:
        from library_bot.demo import demo_command

        return demo_command(args)

    add(
        "demo",
        "run the library sandbox, a Telegram stand-in with a chat page, and the bot",
        _demo,
    )
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

    def _remind(args: argparse.Namespace) -> int:
        from library_bot.jobs.reminders import remind_command

        return remind_command(args)

    remind = add("remind", "run the reminder sweep", _remind)
    remind.add_argument("--once", action="store_true", help="one sweep now, then exit")

    def _migrate(args: argparse.Namespace) -> int:
        from library_bot.storage.commands import migrate_command

        return migrate_command(args)

    add("migrate", "create or upgrade the database schema", _migrate)
    add("generate-key", "print a new key for TOKEN_KEYS", _generate_key)

    def _rotate_keys(args: argparse.Namespace) -> int:
        from library_bot.storage.commands import rotate_keys_command

        return rotate_keys_command(args)

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


def settings_for(command: str, *required: str) -> Settings:
    """Load settings and insist on the variables `command` cannot do without."""
    settings = load_settings()
    settings.require(*required, command=command)
    return settings


if __name__ == "__main__":
    sys.exit(main())
