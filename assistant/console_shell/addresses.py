"""Where the outside world (Slack, Discord) reaches this server, as the Connect pages give it."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def public_url(request: HttpRequest, path: str) -> str:
    """ASKDOCS_PUBLIC_BASE_URL + path (behind a proxy the request's own host and scheme may not
    be the public ones), or the address the console was opened at."""
    base = settings.ASKDOCS_PUBLIC_BASE_URL
    return base + path if base else request.build_absolute_uri(path)
