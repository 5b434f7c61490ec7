"""Check and repair agreement between chunk rows and the vector store."""

from __future__ import annotations

from django.db.models import F

from assistant.wiring import runtime
from assistant.wiring.retrieval_cache import index_changed, retrieval_cache_clear
from ingestion.models import Chunk, Document, Source
from ingestion.selectors import IndexReport, index_report


def index_check(*, repair: bool = False, project_id: int | None = None) -> IndexReport:
    """Vectors without rows are deleted; documents with rows missing their vectors are marked
    changed (their hash cleared) and their rows removed, so the next sync of their source
    embeds them again."""
    store = runtime.chunk_store()
    where = {"project_id": project_id} if project_id is not None else None
    report = index_report(store_ids=store.ids(where), project_id=project_id)
    if not repair:
        return report
    if report.vectors_without_rows:
        store.delete(report.vectors_without_rows)
        # Retrieval skipped those vectors, but a cached result may hold fewer candidates.
        _changed(project_id)
    if report.rows_without_vectors:
        broken = Chunk.objects.filter(vector_id__in=report.rows_without_vectors)
        document_ids = set(broken.values_list("document_id", flat=True))
        Document.objects.filter(pk__in=document_ids).update(content_hash="")
        # The document's other vectors stay; a re-sync re-embeds only the missing ones.
        broken.delete()
        _changed(project_id)
    return report


def _changed(project_id: int | None) -> None:
    if project_id is not None:
        index_written(project_id=project_id)
    else:
        Source.objects.update(index_version=F("index_version") + 1)
        retrieval_cache_clear()


def index_written(*, project_id: int) -> None:
    """Call after any write to a project's chunks or vectors: its cached retrievals are dropped
    (in every process sharing the cache) and its sources' index version grows in the database,
    which every process reads with each question (`runtime.index_seen`)."""
    Source.objects.filter(project_id=project_id).update(index_version=F("index_version") + 1)
    index_changed(project_id=project_id)
