"""Read settings from the environment and fail loudly, naming the variable, on a bad value."""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env(name: str, default: str = "") -> str:
    """A string setting; `NAME_FILE` (a path to a file holding the value) wins, for secrets."""
    file_path = os.environ.get(f"{name}_FILE")
    if file_path:
        try:
            return Path(file_path).read_text().strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE={file_path!r} cannot be read: {exc}") from exc
    return os.environ.get(name, default)


def envbool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean; use 1/0, true/false, yes/no.")


def envint(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number.") from None
    _check_range(name, value, minimum, maximum)
    return value


def envrate(name: str, default: str) -> str:
    """A rate limit like '20/m' (count per s, m, h or d; '5/10m' is five per ten minutes)."""
    import re

    value = os.environ.get(name, "").strip() or default
    if not re.fullmatch(r"[1-9]\d*/\d*[smhd]", value):
        raise ImproperlyConfigured(f"{name}={value!r} is not a rate like 20/m, 100/h or 5/10m.")
    return value


def envfloat(
    name: str, default: float, *, minimum: float | None = None, maximum: float | None = None
) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number.") from None
    _check_range(name, value, minimum, maximum)
    return value


def envlist(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in env(name, default).split(",") if item.strip()]


def envurl(name: str, *, schemes: tuple[str, ...]) -> str:
    """An optional URL; empty means 'not configured'."""
    raw = env(name).strip()
    if not raw:
        return ""
    parsed = urlparse(raw)
    if parsed.scheme not in schemes or not (parsed.hostname or parsed.path):
        allowed = ", ".join(f"{s}://" for s in schemes)
        raise ImproperlyConfigured(f"{name}={raw!r} is not a valid URL (expected {allowed}...).")
    return raw


def envchoice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """One of `choices`, compared without case; returns the choice as spelled in `choices`."""
    value = env(name, default).strip()
    for choice in choices:
        if choice.lower() == value.lower():
            return choice
    raise ImproperlyConfigured(f"{name}={value!r} must be one of: {', '.join(choices)}.")


def _check_range(name: str, value: float, minimum: float | None, maximum: float | None) -> None:
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} is below the minimum {minimum}.")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name}={value} is above the maximum {maximum}.")


def check_twilio_settings(*, account_sid: str, auth_token: str, public_base_url: str) -> None:
    """The SMS channel is off when none is set; set, it needs all three, well formed."""
    given = {
        "TWILIO_ACCOUNT_SID": account_sid,
        "TWILIO_AUTH_TOKEN": auth_token,
        "TWILIO_PUBLIC_BASE_URL": public_base_url,
    }
    if not any(given.values()):
        return
    missing = [name for name, value in given.items() if not value]
    if missing:
        raise ImproperlyConfigured(
            f"The SMS channel needs {', '.join(missing)} as well "
            f"(set all of {', '.join(given)}, or none to turn SMS off)."
        )
    if not re.fullmatch(r"AC[0-9a-fA-F]{32}", account_sid):
        raise ImproperlyConfigured(
            f"TWILIO_ACCOUNT_SID={account_sid!r} is not an account SID (AC + 32 hex digits)."
        )
    if urlparse(public_base_url).path not in ("", "/"):
        raise ImproperlyConfigured(
            f"TWILIO_PUBLIC_BASE_URL={public_base_url!r} must be the site's base URL only "
            "(e.g. https://askdocs.example.com); the webhook path is added to it."
        )
