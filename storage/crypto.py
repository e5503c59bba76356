"""Token encryption at rest, and the hashes and codes of the login handshake.

Tokens are sealed with AES-GCM under the newest key; the envelope names the key that sealed it
so older keys keep working until `Store.rotate_keys` re-encrypts. The chat id is the associated
data: a ciphertext copied into another chat's row does not open.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import secrets
from collections.abc import Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

# A token key's length (AES-256); the settings check `TOKEN_KEYS` against it.
KEY_BYTES = 32
NONCE_BYTES = 12
ENVELOPE_VERSION = "v1"
# Tokens opened lately, by envelope and chat, kept in this process only: a patron's commands
# come in runs, and opening one costs some 60 us at a patron's pace (AES-GCM's set-up, cold)
# against 2 us in a loop. The process holds the keys that open every token anyway; an envelope
# no longer stored (rotated, logged out) is never looked up again, and falls out.
OPENED_TOKENS = 1024
# No I, L, O, 0 or 1: the patron may read the code off one screen and type it on another.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8


class TokenDecryptError(Exception):
    """A stored token could not be opened: wrong chat, unknown key id, or tampering."""


class MissingKeyError(ValueError):
    """No encryption key was configured."""


def key_id(key: bytes) -> str:
    """A short, non-secret name for a key, stored in each envelope."""
    return hashlib.sha256(key).hexdigest()[:8]


def _associated_data(chat_id: int) -> bytes:
    return f"library-bot:chat:{chat_id}".encode()


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class TokenCipher:
    """AES-GCM over a list of keys, newest first; the first one seals, all of them open."""

    def __init__(self, keys: Sequence[bytes]) -> None:
        if not keys:
            raise MissingKeyError(
                "no token encryption key: set TOKEN_KEYS (make one with `library-bot generate-key`)"
            )
        for key in keys:
            if len(key) != KEY_BYTES:
                raise ValueError(f"each token encryption key must be {KEY_BYTES} bytes")
        self._ciphers = {key_id(key): AESGCM(key) for key in reversed(keys)}
        self.current_key_id = key_id(keys[0])
        self._opened = functools.lru_cache(maxsize=OPENED_TOKENS)(self._open)

    def encrypt(self, plaintext: str, chat_id: int) -> str:
        nonce = secrets.token_bytes(NONCE_BYTES)
        sealed = self._ciphers[self.current_key_id].encrypt(
            nonce, plaintext.encode(), _associated_data(chat_id)
        )
        return f"{ENVELOPE_VERSION}.{self.current_key_id}.{_b64encode(nonce + sealed)}"

    def decrypt(self, envelope: str, chat_id: int) -> str:
        """The token sealed in `envelope` for `chat_id`; TokenDecryptError if it does not open
        (a failure is not kept: it is tried again the next time)."""
        return self._opened(envelope, chat_id)

    def _open(self, envelope: str, chat_id: int) -> str:
        version, kid, body = _split(envelope)
        if version != ENVELOPE_VERSION:
            raise TokenDecryptError(f"unknown envelope version {version!r}")
        cipher = self._ciphers.get(kid)
        if cipher is None:
            raise TokenDecryptError(f"no key with id {kid} (was it removed before rotation?)")
        try:
            raw = _b64decode(body)
            plain = cipher.decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], _associated_data(chat_id))
        except (InvalidTag, binascii.Error, ValueError) as exc:
            raise TokenDecryptError(
                "token does not open for this chat (tampered or moved)"
            ) from exc
        return plain.decode()

    def needs_rotation(self, envelope: str) -> bool:
        """True unless `envelope` was sealed under the newest key."""
        try:
            version, kid, _ = _split(envelope)
        except TokenDecryptError:
            return True
        return version != ENVELOPE_VERSION or kid != self.current_key_id

    @property
    def current_prefix(self) -> str:
        """Every envelope sealed under the newest key starts with this."""
        return f"{ENVELOPE_VERSION}.{self.current_key_id}."


def _split(envelope: str) -> tuple[str, str, str]:
    parts = envelope.split(".")
    if len(parts) != 3:
        raise TokenDecryptError("malformed token envelope")
    return parts[0], parts[1], parts[2]


def hash_secret(value: str) -> str:
    """SHA-256 hex: states and codes are high-entropy and short-lived, so no slow hash."""
    return hashlib.sha256(value.encode()).hexdigest()


def new_state() -> str:
    """An OAuth `state`: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


def new_code() -> str:
    """A one-time link code: 8 characters, about 40 bits, typeable."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(code: str) -> str:
    """Codes are case-insensitive and may be typed with spaces or dashes."""
    return "".join(ch for ch in code.upper() if ch.isalnum())


def envelope_key_id(envelope: str) -> str:
    """The id of the key that sealed `envelope` (not secret)."""
    return _split(envelope)[1]
