"""Celery tasks of retention, thin: beat runs `privacy.retention` nightly
(CELERY_BEAT_SCHEDULE); on the embedded default (no broker) `privacy.retention_daily` runs on
the background lanes and queues itself again for the next day (schedule.py starts it)."""

from __future__ import annotations

from celery import shared_task

from assistant.privacy.retention import retention_run
from assistant.wiring import background

DAY = 24 * 3600.0


@shared_task(name="privacy.retention", ignore_result=True)
def privacy_retention_task() -> None:
    # Idempotent: a second run finds nothing older than the periods left to delete.
    retention_run(actor="schedule")


@shared_task(name="privacy.retention_daily", ignore_result=True)
def privacy_retention_daily() -> None:
    background.enqueue_later(DAY, privacy_retention_daily)
    retention_run(actor="schedule")
