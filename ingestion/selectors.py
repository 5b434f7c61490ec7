"""Reads for ingestion."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Max

from ingestion.models import Chunk, Source, SyncRun

SCHEDULE_INTERVALS = {
    Source.Schedule.HOURLY: timedelta(hours=1),
    Source.Schedule.DAILY: timedelta(days=1),
    Source.Schedule.WEEKLY: timedelta(weeks=1),
}


def sources_due(*, now: datetime) -> list[Source]:
    """Scheduled sources whose last run started longer ago than their interval."""
    due = []
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
