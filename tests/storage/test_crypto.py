"""Token envelopes, key ids, hashes and one-time codes."""

from __future__ import annotations

import secrets

import pytest

from storage.crypto import (
    CODE_ALPHABET,
    MissingKeyError,
    TokenCipher,
    TokenDecryptError,
    hash_secret,
    key_id,
    new_code,
    normalize_code,
)

TOKEN = "a3f9c0ffee-access-token"


def test_round_trip_and_envelope_shape() -> None:
    key = secrets.token_bytes(32)
    cipher = TokenCipher([key])
    sealed = cipher.encrypt(TOKEN, 42)
    version, kid, body = sealed.split(".")
    assert (version, kid) == ("v1", key_id(key))
    assert TOKEN not in sealed and len(body) > 20
    assert cipher.decrypt(sealed, 42) == TOKEN
    assert cipher.encrypt(TOKEN, 42) != sealed  # fresh nonce every time


def test_other_chat_unknown_key_and_tampering_are_refused() -> None:
    cipher = TokenCipher([secrets.token_bytes(32)])
    sealed = cipher.encrypt(TOKEN, 42)
    assert cipher.decrypt(sealed, 42) == TOKEN  # opened once, and kept open for chat 42 only
    with pytest.raises(TokenDecryptError):
        cipher.decrypt(sealed, 43)
    with pytest.raises(TokenDecryptError):
        TokenCipher([secrets.token_bytes(32)]).decrypt(sealed, 42)
    version, kid, body = sealed.split(".")
    flipped = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1]
    with pytest.raises(TokenDecryptError):
        cipher.decrypt(f"{version}.{kid}.{flipped}", 42)
    with pytest.raises(TokenDecryptError):
        cipher.decrypt("not an envelope", 42)


def test_old_keys_open_and_need_rotation() -> None:
    old, new = secrets.token_bytes(32), secrets.token_bytes(32)
    sealed_old = TokenCipher([old]).encrypt(TOKEN, 7)
    both = TokenCipher([new, old])
    assert both.decrypt(sealed_old, 7) == TOKEN
    assert both.needs_rotation(sealed_old)
    assert not both.needs_rotation(both.encrypt(TOKEN, 7))


def test_no_key_is_a_clear_error() -> None:
    with pytest.raises(MissingKeyError, match="TOKEN_KEYS"):
        TokenCipher([])
    with pytest.raises(ValueError, match="32 bytes"):
        TokenCipher([b"short"])


def test_codes_are_short_typeable_and_case_insensitive() -> None:
    codes = {new_code() for _ in range(200)}
    assert len(codes) == 200
    for code in codes:
        assert len(code) == 8 and set(code) <= set(CODE_ALPHABET)
    assert not set("IL01O") & set(CODE_ALPHABET)
    assert normalize_code(" abcd-efgh ") == "ABCDEFGH"
    assert hash_secret("x") == hash_secret("x") != hash_secret("y")
