"""What a website source reads: its crawl limits, its path rules, the links that are no pages,
and the URL and header rules every page goes through (a page's identity, its validators)."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urldefrag, urljoin

from ingestion.connectors.base import ConnectorError

#: Links to files a page shows or loads rather than pages to read (a Sphinx page links its
#: figures, `_images/*.png`): never fetched, never counted as failures.
NOT_PAGES = re.compile(
    r"\.(png|jpe?g|gif|svg|webp|ico|bmp|css|js|map|json|xml|txt|pdf|zip|gz|tgz|bz2|xz|tar"
    r"|woff2?|ttf|eot|mp4|webm|mp3|ogg|wav|ipynb|py|csv)$",
    re.IGNORECASE,
)
#: Pages documentation generators make for machines or for browsing, not for reading: the
#: general index, search pages, module indexes. Matched against the URL's path (fnmatch).
DEFAULT_EXCLUDE = (
    "*/genindex*", "*/search.html", "*/search/", "*/py-modindex.html", "*/modindex.html",
    "*/index-all.html", "*/_sources/*", "*/_modules/*",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class CrawlLimits:
    max_pages: int = 500
    max_depth: int = 5
    max_page_bytes: int = 2_000_000
    concurrency: int = 2
    #: Seconds one read may wait for the next bytes.
    timeout: float = 15.0
    #: Seconds a page, robots.txt or a sitemap may take in all, and the whole crawl.
    page_seconds: float = 60.0
    run_seconds: float = 3600.0
    #: robots.txt beyond this is not read (the rules in its start are followed, as Google
    #: does at 500 KiB); a sitemap beyond this is skipped.
    max_robots_bytes: int = 500_000
    max_sitemap_bytes: int = 10_000_000


NOT_INCLUDED = "not matched by the include patterns"


@dataclass(frozen=True, slots=True)
class PathRules:
    """Which pages of the site to read, by path patterns (fnmatch, `*` crosses folders)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE

    def reason_to_skip(self, path: str) -> str:
        # A folder's page is read as the folder (/docs/index.html is /docs/): a pattern may
        # name it either way (/docs/*.html matches it).
        paths = (path, f"{path}index.html") if path.endswith("/") else (path,)
        if self.include and not any(
            fnmatch.fnmatchcase(each, p) for each in paths for p in self.include
        ):
            return NOT_INCLUDED
        matched = next(
            (p for p in self.exclude if any(fnmatch.fnmatchcase(each, p) for each in paths)), None
        )
        return f"excluded by the pattern {matched}" if matched else ""


def canonical_url(tree: Any, base: str) -> str:
    for href in tree.xpath('//link[@rel="canonical"]/@href'):
        return normalise(urljoin(base, href.strip()))
    return normalise(base)


def normalise(url: str) -> str:
    """Without fragment; a folder's index page is the folder (/docs/index.html is /docs/)."""
    url = urldefrag(url)[0]
    for index in ("index.html", "index.htm"):
        if url.endswith("/" + index):
            return url[: -len(index)]
    return url


def cache_validators(headers: Mapping[str, str]) -> dict[str, str]:
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


def path_patterns(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = value.splitlines()
    if not isinstance(value, Sequence) or not all(isinstance(p, str) for p in value):
        raise ConnectorError("Path patterns must be a list of strings.")
    return tuple(p.strip() for p in value if p.strip())
