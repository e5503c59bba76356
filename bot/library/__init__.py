"""Layer: the library services: typed async client (`client.LibraryClient`), models, errors."""

from bot.library.client import LibraryClient
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
]
