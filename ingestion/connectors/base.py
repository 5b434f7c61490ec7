"""What a connector yields while it reads a source, and the error that stops a whole sync."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from ingestion.services import IncomingDocument


class ConnectorError(Exception):
    """The source as a whole cannot be read (bad token, unreachable site, bad settings).
    The sync stops, nothing is removed, and the message is shown on the source."""


@dataclass(frozen=True, slots=True)
class Fetched:
    document: IncomingDocument


@dataclass(frozen=True, slots=True)
class Gone:
    """The item answered that it no longer exists (HTTP 404/410, answer un-approved). `reason`
    is what the run lists when nothing was indexed under it (a link that leads to no page)."""

    external_id: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Failed:
    """This item could not be read this time; an indexed copy of it is kept."""

    external_id: str
    error: str


@dataclass(frozen=True, slots=True)
class Unchanged:
    """The origin says this item has not changed since it was last read (HTTP 304): the
    indexed copy stays as it is, without reading it again."""

    external_id: str


@dataclass(frozen=True, slots=True)
class Skipped:
    """An item the source's settings leave out (a path pattern, a noindex page): not an error,
    and nothing indexed for it."""

    external_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class Cut:
    """The read stopped before the end (a deadline passed): what was not seen this time is
    not known to be gone, so nothing is removed."""

    reason: str


@dataclass(frozen=True, slots=True)
class Total:
    """How many items the connector knows of so far (for progress). `at_most`: how many there
    can be in all while more may still be found (a crawl's page limit); None when `count` is
    the whole (a folder listed, a sitemap read), so the bar can measure against it."""

    count: int
    at_most: int | None = None


Item = Fetched | Gone | Failed | Unchanged | Skipped | Cut | Total


class Connector(Protocol):
    def read(self) -> Iterator[Item]: ...
