"""An answer's sources as the pages a chat door lists under it (Slack, Discord): each page once,
under the number the answer cites it by; related pages, which the answer does not cite, are
numbered in their order."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def cited_pages(sources: Iterable[Mapping[str, Any]]) -> list[tuple[int, str, str]]:
    """(number, url, title) for each page once: two chunks of one page are one link."""
    pages: list[tuple[int, str, str]] = []
    seen: set[str] = set()
    for position, source in enumerate(sources, 1):
        url, title = str(source.get("url") or ""), str(source.get("title") or "")
        if (url or title) in seen:
            continue
        seen.add(url or title)
        pages.append((int(source.get("n") or position), url, title))
    return pages
