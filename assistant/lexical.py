"""The product's lexical index: one BM25 index per project, built from its chunk rows.

An index is rebuilt when the project's indexed content changes (its index version). While a
rebuild runs in the background, questions keep using the previous index: a passage that
changed a moment ago may be missed by word search for a second or two, never shown wrongly,
because candidates are always read back from the chunk rows."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from assistant.rag.adapters.bm25_index import Bm25Index
from assistant.rag.retrieval import passage_text
from assistant.rag.types import Chunk
from ingestion.models import Chunk as ChunkRow

logger = logging.getLogger(__name__)


def project_index_build(project_id: int) -> Bm25Index:
    rows = (
        ChunkRow.objects.filter(document__source__project_id=project_id)
        .select_related("document")
        .only("vector_id", "text", "heading_path", "document__title")
        .order_by("pk")
    )
    ids: list[str] = []
    texts: list[str] = []
    for row in rows.iterator(chunk_size=2000):
        ids.append(row.vector_id)
        texts.append(passage_text(Chunk(id=row.vector_id, text=row.text, title=row.title)))
    return Bm25Index(ids, texts)


class ProjectLexicalIndexes:
    """Implements `LexicalIndex` for `where={"project_id": ...}`."""

    def __init__(
        self,
        *,
        version: Callable[[int], str],
        build: Callable[[int], Bm25Index] = project_index_build,
    ) -> None:
        self._version = version
        self._build = build
        self._lock = threading.Lock()
        self._indexes: dict[int, tuple[str, Bm25Index]] = {}
        self._rebuilding: set[int] = set()

    def search(
        self, query: str, *, k: int, where: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        project_id = (where or {}).get("project_id")
        if not isinstance(project_id, int):
            return []
        return self.index_for(project_id).search(query, k=k)

    def index_for(self, project_id: int) -> Bm25Index:
        version = self._version(project_id)
        with self._lock:
            held = self._indexes.get(project_id)
            if held is not None and held[0] == version:
                return held[1]
            if held is not None:
                self._rebuild_later(project_id)
                return held[1]
        index = self._build(project_id)
        with self._lock:
            self._indexes[project_id] = (version, index)
        return index

    def _rebuild_later(self, project_id: int) -> None:
        if project_id in self._rebuilding:
            return
        self._rebuilding.add(project_id)

        def rebuild() -> None:
            try:
                version = self._version(project_id)
                index = self._build(project_id)
                with self._lock:
                    self._indexes[project_id] = (version, index)
            except Exception:
                logger.exception("Rebuilding the lexical index of project %s failed", project_id)
            finally:
                from django.db import connection

                connection.close()
                with self._lock:
                    self._rebuilding.discard(project_id)

        threading.Thread(target=rebuild, name=f"bm25-{project_id}", daemon=True).start()
