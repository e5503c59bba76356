"""Layer: the library services: typed async client (`client.LibraryClient`), models, errors."""

from library_bot.library.client import LibraryClient
from library_bot.library.errors import (
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
]
