"""Celery tasks of the feedback app: thin, load by id, call the service."""

from __future__ import annotations

import logging

from celery import shared_task
from django.utils import timezone

from feedback.checks import check_run
from feedback.models import CheckRun

logger = logging.getLogger(__name__)


@shared_task
def check_run_task(run_id: int) -> int | None:
    """Run a project's checks for a CheckRun the console created; a run already finished (a
    duplicate delivery) is left alone."""
    run = CheckRun.objects.filter(pk=run_id, finished_at__isnull=True).select_related("project")
    found = run.first()
    if found is None:
        return None
    try:
        check_run(project=found.project, run=found)
    except Exception as exc:
        logger.exception("checks of project %s failed", found.project_id)
        CheckRun.objects.filter(pk=run_id).update(
            finished_at=timezone.now(), error=type(exc).__name__[:200]
        )
        raise
    return run_id
