"""A project's allowed origins and model-server URL: what may be stored, and how an origin is
compared (scheme, host and port, as a whole). The widget's doors, the CORS check and the
console's forms read origins through these."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

#: What may stand between `//` and the path of an origin: a host name, IPv4 or [IPv6] address,
#: and a port. No user part, no percent-escapes, no backslashes.
_HOST_AND_PORT = re.compile(r"(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")


def normalise_origin(value: str) -> str:
    """'HTTPS://Docs.Example.com:443/' -> 'https://docs.example.com': the whole origin (scheme,
    host, port), compared as a whole. Raises ValueError, also for a user part
    (`http://evil.example@app.example.com`): no browser sends one, and `hostname` alone would
    read it as app.example.com."""
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{value!r} is not an origin like https://app.example.com")
    if "@" in parts.netloc or not _HOST_AND_PORT.fullmatch(parts.netloc):
        raise ValueError(f"{value!r} must be an origin only: scheme, host and port")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError(f"{value!r} must be an origin only, without a path")
    default_port = {"http": 80, "https": 443}[parts.scheme]
    port = f":{parts.port}" if parts.port and parts.port != default_port else ""
    host = parts.hostname.lower()
    return f"{parts.scheme}://{f'[{host}]' if ':' in host else host}{port}"


def validate_server_url(value: str) -> None:
    """An http(s) URL of a model server. Unlike URLValidator, a host without a dot is fine:
    servers on a private network are often called `vllm` or `gpu-box`."""
    try:
        parts = urlsplit(value.strip())
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError("Enter an http(s) URL, like http://gpu-box:8000/v1.")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ValidationError("Enter the URL without credentials, query or fragment.")


def validate_origins(value: list[str]) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValidationError("Allowed origins must be a list of origins.")
    for origin in value:
        try:
            normalise_origin(origin)
        except ValueError as exc:
            raise ValidationError(str(exc)) from None


def stored_origin(origin: str) -> str | None:
    """A stored origin as compared now; None for one that today's rules refuse (saved before
    they were tightened, e.g. with a user part): it lets nothing in, and never fails a door."""
    try:
        return normalise_origin(origin)
    except ValueError:
        return None
