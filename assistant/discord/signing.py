"""Discord's request signatures: Ed25519 over the timestamp and the raw body, checked with the
application's public key (from the Developer Portal; Discord publishes it, it is no secret).
No Django here.

A request whose timestamp is more than five minutes from now is refused as a replay: a
signature stays valid forever, so without this a recorded request could be sent again."""

from __future__ import annotations

import re

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

MAX_AGE_SECONDS = 300
_HEX_KEY = re.compile(r"[0-9a-f]{64}")
_HEX_SIGNATURE = re.compile(r"[0-9a-fA-F]{128}")


def public_key_problem(key: str) -> str:
    """What is wrong with a public key as pasted, in plain words ("" when nothing is)."""
    if not _HEX_KEY.fullmatch(key):
        return (
            "A public key is 64 hexadecimal characters (0-9, a-f), on the application's "
            "General Information page."
        )
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(key))
    except ValueError:
        return "These 64 characters are not an Ed25519 public key."
    return ""


def is_signed(*, public_key: str, signature: str, timestamp: str, body: bytes, now: float) -> bool:
    """True when `signature` (hex) is the application's signature of timestamp + body, made
    within the last five minutes (or as far ahead, for clocks that differ)."""
    if not (timestamp.isdigit() and _HEX_SIGNATURE.fullmatch(signature)):
        return False
    if abs(now - int(timestamp)) > MAX_AGE_SECONDS:
        return False
    try:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key))
        key.verify(bytes.fromhex(signature), timestamp.encode() + body)
    except (ValueError, InvalidSignature):
        return False
    return True
