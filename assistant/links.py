"""Links that are safe to store and to render: http and https only.

A document, a support answer or an import could carry `javascript:` or `data:` URLs; every way
into the database checks with `http_url`, and every page renders links through the `safe_url`
template filter (assistant/templatetags/links.py), which drops any other scheme."""

from __future__ import annotations

from urllib.parse import urlsplit

MAX_URL_CHARS = 1000


class UnsafeUrl(ValueError):
    """A URL that is not http(s); the message says why, for the person importing it."""


def http_url(url: str) -> str:
    """`url` stripped, "" for none; UnsafeUrl for anything but an http(s) URL with a host."""
    url = (url or "").strip()
    if not url:
        return ""
    if len(url) > MAX_URL_CHARS:
        raise UnsafeUrl(f"the URL is longer than {MAX_URL_CHARS} characters")
    try:
        parts = urlsplit(url)
    except ValueError as error:
        raise UnsafeUrl(f"not a URL: {error}") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise UnsafeUrl(f"only http and https links are accepted, not {url[:40]!r}")
    return url


def safe_url(url: object) -> str:
    """The URL when it is http(s), else "" (for rendering: never raises)."""
    try:
        return http_url(str(url or ""))
    except UnsafeUrl:
        return ""
