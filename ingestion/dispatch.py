"""Start a sync without waiting for it.

With a broker (REDIS_URL or CELERY_BROKER_URL) the task goes to Celery workers once the
current transaction commits. On the embedded default there is no broker: tasks run eagerly,
and to keep a request from waiting for a crawl they run on one background thread of this
process (one at a time, so the in-process Chroma store and SQLite see a single writer).
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

from django.conf import settings
from django.db import close_old_connections, connections, transaction
from django.utils import timezone

from ingestion.models import Source
from ingestion.tasks import source_sync_task, sync_due_sources

logger = logging.getLogger(__name__)
_background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="askdocs-sync")
_scheduler_started = threading.Event()


def sync_enqueue(
    *, source: Source, trigger: str = "manual", confirm_removals: bool = False
) -> Future[object] | None:
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        transaction.on_commit(lambda: source_sync_task.delay(source.pk, trigger, confirm_removals))
        return None
    future: Future[object] = Future()

    def submit() -> None:
        inner = _background.submit(_in_background, source.pk, trigger, confirm_removals)
        inner.add_done_callback(lambda f: _copy(f, future))

    transaction.on_commit(submit)
    return future


def _in_background(source_id: int, trigger: str, confirm_removals: bool) -> object:
    close_old_connections()
    try:
        return source_sync_task.apply(args=(source_id, trigger, confirm_removals)).get()
    finally:
        connections.close_all()  # this thread's connections: syncs are rare, do not hold one


def _copy(source: Future[object], target: Future[object]) -> None:
    error = source.exception()
    if error is not None:
        logger.error("Background sync failed: %s", error)
        target.set_exception(error)
    else:
        target.set_result(source.result())


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
                        _background.submit(_in_background, source.pk, "schedule")
            except Exception:
                logger.exception("Scheduled sync check failed")

    threading.Thread(target=loop, name="askdocs-scheduler", daemon=True).start()
    return True


__all__ = ["scheduler_start", "sync_enqueue", "sync_due_sources"]
