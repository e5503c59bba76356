"""Start-up steps that fail as one line: what failed and what the operator should check.

A failure at start is usually the operator's to fix (an address, a token, a proxy, TLS), and
150 lines of traceback bury the one that says so. Each step of `run`'s start is wrapped in
`startup_stage`; the CLI logs the resulting `StartupFailure` as one record in the configured
format (text or JSON) and exits 1, so systemd or the orchestrator retries. What a retry cannot
mend (a database migrated by a newer release) is a `SettingsError` instead: exit 2.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

from telegram.error import InvalidToken, NetworkError

from bot.config.settings import SettingsError
from storage.engine import connection_problem


class StartupFailure(Exception):
    """A start-up step failed; the message is one line naming the step and what to check."""


def first_line(exc: BaseException) -> str:
    """The first line of `exc`'s message, or its type when it has none."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def telegram_problem(exc: BaseException) -> str:
    if isinstance(exc, InvalidToken):
        return "Telegram refused the bot token"
    if isinstance(exc, NetworkError):
        cause = exc.__cause__ or exc.__context__
        detail = f" ({first_line(cause)})" if cause is not None else ""
        return f"cannot reach the Bot API: {first_line(exc)}{detail}"
    return first_line(exc)


def database_problem(url: str) -> Callable[[BaseException], str]:
    return lambda exc: connection_problem(url, exc)


def database_stage(url: str) -> AbstractContextManager[None]:
    """`startup_stage` of opening (and migrating) the database at `url`."""
    return startup_stage(
        "database", "DATABASE_URL and that the server is up", database_problem(url)
    )


def telegram_stage(api_url: str) -> AbstractContextManager[None]:
    """`startup_stage` of the bot's first call to the Bot API at `api_url` (`getMe`)."""
    return startup_stage(
        "Telegram",
        f"TELEGRAM_API_URL ({api_url}), TELEGRAM_BOT_TOKEN, the network and HTTPS_PROXY/NO_PROXY",
        telegram_problem,
    )


@contextmanager
def startup_stage(
    what: str, check: str, describe: Callable[[BaseException], str] = first_line
) -> Iterator[None]:
    """Turn any failure inside into a one-line `StartupFailure` (cancellation passes, and so
    does a `SettingsError`: a configuration mistake found on the way exits 2, not 1)."""
    try:
        yield
    except (StartupFailure, SettingsError):
        raise
    except Exception as exc:
        raise StartupFailure(f"{what}: {describe(exc)}; check {check}") from exc


def freeze_start_up_heap(_: object = None) -> None:
    """Once the bot serves: move what start-up built (modules, catalogues, PTB's and
    SQLAlchemy's tables, the stores) out of the garbage collector's reach.

    Those objects (150,000 and more) live as long as the process, yet each full collection walks
    them all: 50 to 80 ms, once every few thousand updates, in the middle of answering. Frozen,
    a full collection walks only what was made since (`gc.freeze`; under 1 ms). For a process's
    entry point only (`library-bot run`), never for a bot started inside a longer-lived process
    such as a test's.
    """
    gc.collect()
    gc.freeze()
