"""Reads for ingestion."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, Max, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.timesince import timeuntil

from assistant.models import Project
from assistant.rag.chunking.sections import title_path
from assistant.rag.reading.scoring import passage_text
from assistant.rag.types import Chunk as PassageChunk
from ingestion.models import Chunk, Document, Source, SyncRun

SCHEDULE_INTERVALS = {
    Source.Schedule.HOURLY: timedelta(hours=1),
    Source.Schedule.DAILY: timedelta(days=1),
    Source.Schedule.WEEKLY: timedelta(weeks=1),
}


def sources_due(*, now: datetime) -> list[Source]:
    """Scheduled sources whose last run started longer ago than their interval."""
    due: list[Source] = []
    sources = Source.objects.exclude(schedule=Source.Schedule.OFF).annotate(
        last_run=Max("runs__started_at")
    )
    for source in sources:
        interval = SCHEDULE_INTERVALS[Source.Schedule(source.schedule)]
        if source.last_run is None or now - source.last_run >= interval:
            due.append(source)
    return due


def sync_run_latest(*, source: Source) -> SyncRun | None:
    return SyncRun.objects.filter(source=source).first()


@dataclass(slots=True)
class IndexReport:
    """Database rows and vectors that do not match."""

    rows: int = 0
    vectors: int = 0
    vectors_without_rows: list[str] = field(default_factory=list)
    rows_without_vectors: list[str] = field(default_factory=list)

    @property
    def consistent(self) -> bool:
        return not (self.vectors_without_rows or self.rows_without_vectors)


def index_report(*, store_ids: set[str], project_id: int | None = None) -> IndexReport:
    rows = Chunk.objects.all()
    if project_id is not None:
        rows = rows.filter(document__source__project_id=project_id)
    row_ids = set(rows.values_list("vector_id", flat=True))
    return IndexReport(
        rows=len(row_ids),
        vectors=len(store_ids),
        vectors_without_rows=sorted(store_ids - row_ids),
        rows_without_vectors=sorted(row_ids - store_ids),
    )


def sources_overview(*, project: Project) -> list[Source]:
    """The project's sources with their document and chunk counts, last run and next
    scheduled sync. Counts are subqueries: joining both relations would multiply rows."""
    documents = (
        Document.objects.filter(source=OuterRef("pk"))
        .order_by()
        .values("source")
        .annotate(n=Count("id"))
        .values("n")
    )
    chunks = (
        Chunk.objects.filter(document__source=OuterRef("pk"))
        .order_by()
        .values("document__source")
        .annotate(n=Count("id"))
        .values("n")
    )
    rows = (
        Source.objects.filter(project=project)
        .annotate(
            documents_count=Coalesce(Subquery(documents), 0),
            chunks_count=Coalesce(Subquery(chunks), 0),
            last_run=Max("runs__started_at"),
        )
        .order_by("name")
    )
    return [_with_next_sync(source) for source in rows]


def _with_next_sync(source: Source) -> Source:
    interval = SCHEDULE_INTERVALS.get(Source.Schedule(source.schedule))
    last_run = getattr(source, "last_run", None)
    source.next_sync = last_run + interval if interval and last_run else None  # type: ignore[attr-defined]
    source.next_sync_text = next_sync_text(source=source, last_run=last_run)  # type: ignore[attr-defined]
    return source


def next_sync_text(
    *, source: Source, last_run: datetime | None, now: datetime | None = None
) -> str:
    """When the source will be read next, in words: what the scheduler (Celery beat, or the
    embedded one `.bin/run` starts; both look once a minute) will do, by the rule of
    `sources_due`."""
    interval = SCHEDULE_INTERVALS.get(Source.Schedule(source.schedule))
    if interval is None:
        return "Manual only: press Sync now"
    every = Source.Schedule(source.schedule).label.lower()
    now = now or timezone.now()
    if last_run is None or last_run + interval <= now:
        return f"Within a minute, then {every}"
    due = last_run + interval
    return f"In {timeuntil(due, now, depth=1)} ({timezone.localtime(due):%b %-d, %H:%M}, {every})"


def source_counts(*, source: Source) -> dict[str, int]:
    return {
        "documents": Document.objects.filter(source=source).count(),
        "chunks": Chunk.objects.filter(document__source=source).count(),
        "answers": source.answers.count(),
        "suspected_injection": Document.objects.filter(
            source=source, suspected_injection=True
        ).count(),
    }


def documents_of(*, source: Source, search: str = "") -> QuerySet[Document]:
    """A source's documents by title with their chunk counts, for the document browser."""
    rows = Document.objects.filter(source=source)
    if search:
        rows = rows.filter(Q(title__icontains=search) | Q(url__icontains=search))
    return rows.annotate(chunks_count=Count("chunks")).order_by("title", "pk")


def chunks_of(*, document: Document) -> QuerySet[Chunk]:
    return Chunk.objects.filter(document=document).order_by("ordinal", "pk")


@dataclass(frozen=True, slots=True)
class SearchScope:
    #: The vector-store filter of the project's questions: its sources, each searched in its
    #: own collection (a small source stays findable next to a large one).
    where: dict[str, Any]
    #: The sources' index versions: changes whenever any process writes to their index.
    stamp: tuple[tuple[int, int], ...]


def search_scope(*, project_id: int) -> SearchScope:
    """What a question of the project searches, and how fresh its index is. One query."""
    rows = tuple(
        Source.objects.filter(project_id=project_id)
        .order_by("pk")
        .values_list("pk", "index_version")
    )
    sources = [pk for pk, _ in rows]
    return SearchScope({"project_id": project_id, "source_id": {"$in": sources}}, rows)


def passages_in_scope(where: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The vector ids and texts (title path, then text, as the reranker reads them) of the
    chunks a search scope's `where` (search_scope) selects: the lexical index's corpus."""
    rows = Chunk.objects.filter(document__source__project_id=where["project_id"])
    sources = where.get("source_id")
    if isinstance(sources, Mapping):
        rows = rows.filter(document__source_id__in=sources["$in"])
    elif sources is not None:
        rows = rows.filter(document__source_id=sources)
    ids: list[str] = []
    texts: list[str] = []
    columns = rows.values_list("vector_id", "document__title", "heading_path", "text")
    for vector_id, page, heading_path, text in columns.iterator():
        title = title_path(page, heading_path)
        ids.append(vector_id)
        texts.append(passage_text(PassageChunk(id=vector_id, text=text, title=title, url="")))
    return ids, texts


def chunks_by_vector_id(ids: Sequence[str]) -> dict[str, PassageChunk]:
    rows = Chunk.objects.filter(vector_id__in=list(ids)).select_related("document__source")
    return {
        row.vector_id: PassageChunk(
            id=row.vector_id,
            text=row.text,
            title=row.title,
            url=row.url,
            source_id=row.document.source_id,
            document=str(row.document_id),
            ordinal=row.ordinal,
            kind=row.document.kind,
            curated=row.document.source.kind == Source.Kind.CURATED,
        )
        for row in rows
    }


def section_chunks(
    chunks: Sequence[PassageChunk], *, depth: int = 3, before: int = 1
) -> list[PassageChunk]:
    """The chunks around each given one in its section (same document, same link): at most
    `before` right before it and `depth` right after it, in document order
    (ports.SectionLookup)."""
    wanted: dict[tuple[int, str], set[int]] = {}
    for chunk in chunks:
        if chunk.document.isdigit() and chunk.url and chunk.ordinal >= 0:
            places = wanted.setdefault((int(chunk.document), chunk.url), set())
            places.update(range(max(0, chunk.ordinal - before), chunk.ordinal))
            places.update(range(chunk.ordinal + 1, chunk.ordinal + 1 + depth))
    if not wanted:
        return []
    rows = Chunk.objects.filter(document_id__in={d for d, _ in wanted}).select_related(
        "document__source"
    )
    rows = rows.filter(ordinal__in={o for places in wanted.values() for o in places})
    given = {c.id for c in chunks}
    found = [
        PassageChunk(
            id=row.vector_id, text=row.text, title=row.title, url=row.url,
            source_id=row.document.source_id, document=str(row.document_id),
            ordinal=row.ordinal, kind=row.document.kind,
            curated=row.document.source.kind == Source.Kind.CURATED,
        )
        for row in rows
        if row.ordinal in wanted.get((row.document_id, row.url), ()) and row.vector_id not in given
    ]  # fmt: skip
    return sorted(found, key=lambda c: (c.document, c.ordinal))


@dataclass(frozen=True, slots=True)
class ChunkPlace:
    """Where a passage stands in its document."""

    document_title: str
    heading_path: str


def chunk_places(ids: Sequence[str]) -> dict[str, ChunkPlace]:
    rows = Chunk.objects.filter(vector_id__in=list(ids)).values_list(
        "vector_id", "document__title", "heading_path"
    )
    return {vector_id: ChunkPlace(title, path) for vector_id, title, path in rows}


def fetch_states(*, source: Source) -> dict[str, dict[str, Any]]:
    """What the last sync stored of each page of a website source, by its URL and by the
    address the crawl reached it at (a link that redirects, a non-canonical URL)."""
    rows = Document.objects.filter(source=source, fetch_state__isnull=False).exclude(
        content_hash=""  # an unfinished write: read the page again
    )
    states: dict[str, dict[str, Any]] = {}
    for url, state in rows.values_list("url", "fetch_state"):
        if not isinstance(state, dict):
            continue
        for address in (state.get("requested"), url):
            if address:
                states[address] = state
    return states
