"""One fetch of the website crawler: a page, a robots.txt or a sitemap, each with an end.

Every fetch has a total deadline (body included, so a server that trickles bytes is cut
off), a size cap read as a stream (a 100 MB robots.txt is never held whole), and redirects
followed one at a time: each new address is shown to `follow` before it is requested, and
its connection is checked like the first (assistant/wiring/outbound.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urljoin

import httpx

from assistant.wiring import outbound
from ingestion.extraction import decode_page

MAX_REDIRECTS = 10
_HTML_TYPES = ("text/html", "application/xhtml+xml")


@dataclass(frozen=True, slots=True)
class Page:
    url: str  # as requested
    final_url: str = ""
    status: int = 0
    html: str = ""
    error: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    #: The body was longer than the cap and `keep_start` asked for its start: `html` holds it.
    cut: bool = False
    #: Why it is not read although it answered: another kind of file than a web page.
    not_a_page: str = ""


def fetch(
    client: httpx.Client,
    url: str,
    *,
    seconds: float,
    max_bytes: int,
    what: str = "page",
    html_only: bool = True,
    keep_start: bool = False,
    headers: Mapping[str, str] | None = None,
    follow: Callable[[str], str] = lambda _url: "",
) -> Page:
    """GET `url` within `seconds` and `max_bytes`. `follow(next_url)` says why a redirect
    must not be followed ("" to follow it). Over the cap, the fetch fails, or with
    `keep_start` returns the first `max_bytes` marked `cut`."""
    target = url
    with outbound.deadline(seconds):
        try:
            for _ in range(MAX_REDIRECTS + 1):
                with client.stream("GET", target, headers=dict(headers or {})) as response:
                    if response.is_redirect and "location" in response.headers:
                        target = urljoin(target, response.headers["location"])
                        if reason := follow(target):
                            return Page(url, target, response.status_code, error=reason)
                        continue
                    return _read(response, url, max_bytes, what, html_only, keep_start)
            return Page(url, target, error="too many redirects")
        except httpx.HTTPError as error:
            late = outbound.deadline_passed()
            return Page(url, target, error=_late(what, seconds) if late else describe(error))


def _read(
    response: httpx.Response,
    url: str,
    max_bytes: int,
    what: str,
    html_only: bool,
    keep_start: bool,
) -> Page:
    final = str(response.url)
    if response.status_code == 304 or response.status_code >= 400:
        return Page(url, final, response.status_code)
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if html_only and kind and kind not in _HTML_TYPES:
        return Page(url, final, response.status_code, not_a_page=f"not a web page ({kind})")
    declared = int(response.headers.get("content-length") or 0)
    if declared > max_bytes and not keep_start:
        return Page(url, final, response.status_code, error=too_big(what, max_bytes))
    body = bytearray()
    cut = False
    for part in response.iter_bytes():
        body += part
        if len(body) > max_bytes:
            if not keep_start:
                return Page(url, final, response.status_code, error=too_big(what, max_bytes))
            del body[max_bytes:]
            cut = True
            break
    return Page(
        url,
        final,
        response.status_code,
        decode_page(bytes(body), response.charset_encoding),
        headers=response.headers,
        cut=cut,
    )


def too_big(what: str, max_bytes: int) -> str:
    return f"{what} larger than {max_bytes // 1000} kB; skipped"


def _late(what: str, seconds: float) -> str:
    return f"{what} not received within {seconds:g} s; stopped"


def describe(error: Exception) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
