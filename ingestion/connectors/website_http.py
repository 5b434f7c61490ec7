"""The crawler's HTTP details: which validators of an answer to keep for the next sync, and
how a transport error reads in a run's report."""

from __future__ import annotations

from email.utils import parsedate_to_datetime

import httpx


def cache_validators(headers: httpx.Headers) -> dict[str, str]:
    """The ETag, and the Last-Modified when it can be trusted: one within a second of the
    answer's Date is weak (RFC 9110 8.8.2.2), as the page may change again within the same
    second, so the page is read again next time."""
    found = {"etag": headers["etag"]} if "etag" in headers else {}
    modified, date = headers.get("last-modified"), headers.get("date")
    if modified:
        try:
            age = parsedate_to_datetime(date) - parsedate_to_datetime(modified) if date else None
        except (TypeError, ValueError):
            age = None
        if age is None or age.total_seconds() >= 1:
            found["last-modified"] = modified
    return found


def describe(error: Exception) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
