"""Secrets the server must read back, sealed at rest with a key derived from DJANGO_SECRET_KEY
(Fernet: AES-128-CBC + HMAC-SHA256, from the `cryptography` package). A copy of the database
alone does not reveal them; DJANGO_SECRET_KEY_FALLBACKS still open what older keys sealed, so
the site's key can be rotated the way Django rotates it."""

from __future__ import annotations

import base64

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.utils.crypto import salted_hmac


def _fernet_for(secret: str) -> Fernet:
    key = salted_hmac("askdocs.sealing", "fernet", secret=secret, algorithm="sha256").digest()
    return Fernet(base64.urlsafe_b64encode(key))


def _fernets() -> MultiFernet:
    secrets = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    return MultiFernet([_fernet_for(secret) for secret in secrets])


def seal(text: str) -> str:
    return _fernets().encrypt(text.encode()).decode()


def unseal(token: str) -> str:
    """The sealed text; ValueError when it was sealed under a site key no longer known."""
    try:
        return _fernets().decrypt(token.encode()).decode()
    except (InvalidToken, ValueError):
        raise ValueError("sealed with a DJANGO_SECRET_KEY this site no longer has") from None
