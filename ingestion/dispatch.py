"""Start a sync without waiting for it.

With a broker (REDIS_URL or CELERY_BROKER_URL) the task goes to Celery workers once the
current transaction commits. On the embedded default there is no broker: syncs run on the one
background thread of this process (assistant/wiring/background.py), so a request never waits
for a crawl, and the in-process scheduler below stands in for Celery beat.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from assistant.wiring import background
from ingestion.models import Source
from ingestion.tasks import source_sync_task, sync_due_sources

logger = logging.getLogger(__name__)
_scheduler_started = threading.Event()


def sync_enqueue(
    *, source: Source, trigger: str = "manual", confirm_removals: bool = False
) -> Future[object] | None:
    """Sync a source in the background (see assistant/wiring/background.py)."""
    return background.enqueue(source_sync_task, source.pk, trigger, confirm_removals)


def scheduler_start(*, interval: float = 60.0) -> bool:
    """The embedded stand-in for Celery beat: once a minute, queue the sources that are due
    onto the background thread. Started by the run command (ASKDOCS_INPROCESS_SCHEDULER=1)."""
    if not settings.CELERY_TASK_ALWAYS_EAGER or _scheduler_started.is_set():
        return False
    _scheduler_started.set()

    def loop() -> None:
        while True:
            time.sleep(interval)
            try:
                close_old_connections()
                from ingestion.selectors import sources_due

                for source in sources_due(now=timezone.now()):
                    if source.status != Source.Status.SYNCING:
                        background.run_now_in_background(source_sync_task, source.pk, "schedule")
            except Exception:
                logger.exception("Scheduled sync check failed")

    threading.Thread(target=loop, name="askdocs-scheduler", daemon=True).start()
    return True


__all__ = ["scheduler_start", "sync_enqueue", "sync_due_sources"]
