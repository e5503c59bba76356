"""`library-bot demo` and `library-bot sandbox`: the commands the sandbox adds to the bot's CLI
(entry points `library_bot.commands` in pyproject.toml), loaded only when asked for."""

from __future__ import annotations

import argparse
import sys

from bot.cli import Command
from bot.config.settings import load_settings
from bot.runtime import loop
from bot.runtime.signals import stop_on_signals
from sandbox import demo
from sandbox.library import LibrarySandbox

DEFAULT_ORDER_DELAY = 5.0  # seconds before a placed order shows in /v3/user, as for a person


async def serve(
    *, host: str, port: int, single_port: bool, order_delay: float = DEFAULT_ORDER_DELAY
) -> int:
    """Serve until SIGINT or SIGTERM; with `port`, the four services use port .. port+3."""
    sandbox = LibrarySandbox(host=host, port=port, single_port=single_port, order_delay=order_delay)
    await sandbox.start()
    try:
        with stop_on_signals() as stop:
            for name, value in sandbox.env().items():
                print(f"{name}={value}")
            for patron in sandbox.patrons:
                print(f"patron {patron.user_id} {patron.pin} {patron.description}")
            sys.stdout.flush()
            await stop.wait()
    finally:
        await sandbox.stop()
    return 0


def _sandbox_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)"
    )
    parser.add_argument("--port", type=int, default=0, help="first port (default: any free ports)")
    parser.add_argument(
        "--single-port", action="store_true", help="serve all four services on one port"
    )
    parser.add_argument(
        "--order-delay",
        type=float,
        default=DEFAULT_ORDER_DELAY,
        help="seconds before a placed order shows up in /v3/user (default 5)",
    )


def _sandbox(args: argparse.Namespace) -> int:
    return loop.run(
        serve(
            host=args.host,
            port=args.port,
            single_port=args.single_port,
            order_delay=args.order_delay,
        )
    )


def _demo(_: argparse.Namespace) -> int:
    # `PORT` (when set) is the chat page's port; `.demo/` holds the data.
    base = load_settings()
    chat_port = base.PORT if "PORT" in base.model_fields_set else None
    return loop.run(demo.serve(demo.DEFAULT_DIR, base=base, chat_port=chat_port))


DEMO = Command(
    help="run the library sandbox, a Telegram stand-in with a chat page, and the bot",
    handler=_demo,
)
SANDBOX = Command(
    help="run only the library sandbox and print how to point a bot at it",
    handler=_sandbox,
    configure=_sandbox_arguments,
)
