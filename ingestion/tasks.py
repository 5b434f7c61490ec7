"""Celery tasks: thin and idempotent. Load by id, call the service."""

from __future__ import annotations

import logging

from celery import shared_task
from django.utils import timezone

from ingestion.models import Source
from ingestion.selectors import sources_due
from ingestion.sync import SyncAlreadyRunning, source_sync

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def source_sync_task(
    source_id: int, trigger: str = "manual", confirm_removals: bool = False
) -> int | None:
    """A duplicate delivery while a run is alive does nothing; a redelivery after the worker
    died starts a new run that finishes the job (see ingestion.sync)."""
    source = Source.objects.filter(pk=source_id).first()
    if source is None:
        return None
    try:
        return source_sync(source=source, trigger=trigger, confirm_removals=confirm_removals).pk
    except SyncAlreadyRunning:
        logger.info("Source %s is already syncing; skipped", source_id)
        return None


@shared_task
def sync_due_sources() -> list[int]:
    due = [source.pk for source in sources_due(now=timezone.now())]
    for source_id in due:
        source_sync_task.delay(source_id, "schedule")
    return due
