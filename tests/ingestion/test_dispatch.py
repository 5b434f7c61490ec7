"""Where syncs run without a broker: on a background thread of the web process, and the
schedule check that Celery beat (or the in-process scheduler) calls."""

from __future__ import annotations

import uuid

import pytest

from assistant.models import Project
from ingestion.dispatch import sync_enqueue
from ingestion.models import Source, SyncRun
from ingestion.tasks import sync_due_sources


def manual_source(schedule: str = "off") -> Source:
    project = Project.objects.create(name=f"dispatch-{uuid.uuid4().hex[:8]}")
    return Source.objects.create(
        project=project,
        kind=Source.Kind.MANUAL,
        name="notes",
        schedule=schedule,
        config={"title": "Parking", "text": "Visitors park in the blue zone behind building C."},
    )


def test_without_a_broker_a_sync_runs_on_a_background_thread(
    store,
    tasks_here,
    django_db_blocker,  # noqa: ANN001
) -> None:
    """Committed rows (not a test transaction, which the worker thread could not see, and not
    a flushing transactional test, which would wipe the shared demo project); cleaned up.
    Celery's own switch decides (assistant/wiring/background.py), as it does for the SMS path."""
    with django_db_blocker.unblock():
        source = manual_source()
        try:
            future = sync_enqueue(source=source, trigger="admin")  # no transaction: at once
            assert future is not None
            run = SyncRun.objects.get(pk=future.result(timeout=120))
            assert (run.status, run.trigger, run.added) == (SyncRun.Status.SUCCEEDED, "admin", 1)
        finally:
            source.project.delete()


@pytest.mark.django_db
def test_the_schedule_check_syncs_the_sources_that_are_due(store, tasks_here) -> None:  # noqa: ANN001
    due = manual_source(schedule="hourly")
    not_scheduled = manual_source(schedule="off")
    assert due.pk in sync_due_sources.apply().get()
    assert SyncRun.objects.filter(source=due, trigger="schedule").count() == 1
    assert not SyncRun.objects.filter(source=not_scheduled).exists()
    # Just synced: not due again within the hour.
    assert due.pk not in sync_due_sources.apply().get()
