"""Typed async client for the library services: see `client.LibraryClient`."""

from bot.library.client import LibraryClient, install_log_redaction
from bot.library.errors import (
    BadRequest,
    LibraryError,
    NotLoggedIn,
    OrderRefused,
    Refused,
    ServiceUnavailable,
    TokenRejected,
)

__all__ = [
    "BadRequest",
    "LibraryClient",
    "LibraryError",
    "NotLoggedIn",
    "OrderRefused",
    "Refused",
    "ServiceUnavailable",
    "TokenRejected",
    "install_log_redaction",
]
