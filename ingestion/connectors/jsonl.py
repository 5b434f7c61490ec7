"""A JSON Lines corpus (one document a line: id, title, text, url?, page?), e.g. the Ray docs
evaluation corpus. A line that is not a usable document is reported and skipped."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from assistant.links import http_url
from ingestion.connectors.base import ConnectorError, Failed, Fetched, Item, Total
from ingestion.services import IncomingDocument


class JsonlConnector:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def read(self) -> Iterator[Item]:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise ConnectorError(f"Cannot read {self.path}: {error}") from error
        yield Total(sum(1 for line in lines if line.strip()))
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                document = IncomingDocument(
                    external_id=str(row["id"]),
                    title=str(row.get("title") or row["id"]),
                    text=str(row["text"]),
                    url=http_url(str(row.get("url") or "")),
                )
            except (ValueError, KeyError, TypeError) as error:  # UnsafeUrl is a ValueError
                yield Failed(f"{self.path.name}:{number}", f"not a document line: {error}")
                continue
            yield Fetched(document)
