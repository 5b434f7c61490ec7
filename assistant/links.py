"""Links that are safe to store and to render: http and https only.

A document, a support answer or an import could carry `javascript:` or `data:` URLs, or a host
that is no host (`http://exa mple.com/`); every way into the database checks with `http_url`,
and every page renders links through the `safe_url` template filter
(assistant/templatetags/links.py), which drops anything else."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import SplitResult, urlsplit

MAX_URL_CHARS = 1000

#: One label of a host name, as IDNA writes it (underscores are seen in the wild).
_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)")


class UnsafeUrl(ValueError):
    """A URL that is not http(s), or whose host is none; the message says why, for the person
    importing it."""


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
    if problem := _host_problem(url, parts):
        raise UnsafeUrl(f"{problem} in {url[:60]!r}")
    return url


def _host_problem(url: str, parts: SplitResult) -> str:
    """Why the URL's host and port are not ones a browser could open ("" when they are). The
    path is left alone: a crawled page's own URL may hold a space a browser would encode."""
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return "not a port number"
    host = parts.hostname or ""
    # urlsplit drops tabs and newlines (as browsers do): the host is judged as it was written.
    authority = re.split(r"[/?#]", url.split("//", 1)[-1], maxsplit=1)[0]
    if any(c.isspace() or not c.isprintable() for c in authority) or not host:
        return "not a host name"
    if host.startswith("[") or ":" in host:
        try:
            ipaddress.IPv6Address(host.strip("[]").split("%")[0])
        except ValueError:
            return "not a host name"
        return ""
    try:
        ascii_host = host.rstrip(".").encode("idna").decode("ascii")
    except UnicodeError:
        return "not a host name"
    if not all(_LABEL.fullmatch(label) for label in ascii_host.split(".")):
        return "not a host name"
    return ""


def safe_url(url: object) -> str:
    """The URL when it is http(s), else "" (for rendering: never raises)."""
    try:
        return http_url(str(url or ""))
    except UnsafeUrl:
        return ""
