"""A text typed in the admin: one document."""

from __future__ import annotations

from collections.abc import Iterator

from ingestion.connectors.base import ConnectorError, Fetched, Item, Total
from ingestion.models import Source
from ingestion.services import IncomingDocument


def manual_connector(source: Source) -> ManualConnector:
    config = source.config or {}
    return ManualConnector(title=config.get("title") or source.name, text=config.get("text", ""))


class ManualConnector:
    def __init__(self, *, title: str, text: str) -> None:
        self.title = title
        self.text = text

    def read(self) -> Iterator[Item]:
        if not self.text.strip():
            raise ConnectorError("This manual source has no text yet.")
        yield Total(1)
        yield Fetched(IncomingDocument(external_id="manual", title=self.title, text=self.text))
