"""The faces' vocabulary: the value types, limits and small pure helpers of storage that the
faces (`bot.telegram`, `bot.web`) render and check, named in this one place.

The faces reach storage only through `bot.actions` (an import-linter contract); what they
show of it (a `Card`, a chat's `ChatSettings`, a `Refusal`, the most cards a chat holds) they
take from here, so that nothing else of storage is in their reach.
"""

from storage.calendar import SECRET_CHARS
from storage.callbacks import CallbackRef, new_callback_id
from storage.cards import MAX_CARDS, Card, RemovedCard
from storage.chats import NOTICES, ChatSettings
from storage.crypto import CODE_ALPHABET, CODE_LENGTH, normalize_code
from storage.database import is_unavailable
from storage.refusals import Refusal
from storage.store import ChatRead, Linked
from storage.watches import MAX_WATCHES, Watch

__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "MAX_CARDS",
    "MAX_WATCHES",
    "NOTICES",
    "SECRET_CHARS",
    "CallbackRef",
    "Card",
    "ChatRead",
    "ChatSettings",
    "Linked",
    "Refusal",
    "RemovedCard",
    "Watch",
    "is_unavailable",
    "new_callback_id",
    "normalize_code",
]
