"""A run whose worker died (a real process that has exited) is recognised the same way
everywhere: the console shows it interrupted, the source can be deleted, the next sync takes
over. Progress counts documents, also inside archives, and never passes 100%."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from config.celery import app as celery_app
from ingestion.console.services import source_delete
from ingestion.models import Source, SyncRun
from ingestion.sync import INTERRUPTED_MESSAGE, source_sync
from ingestion.uploads import source_file_add
from tests.ingestion.test_files_source import zip_of

pytestmark = pytest.mark.django_db


def a_dead_worker() -> str:
    """host:pid of a process that ran on this machine and has exited."""
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)  # fmt: skip
    return f"{socket.gethostname()}:{finished.stdout.strip()}"


@pytest.fixture
def stuck(project, settings, tmp_path) -> Source:  # noqa: ANN001
    """A files source whose sync was killed mid-way: its run still says running."""
    settings.DATA_DIR = tmp_path
    source = Source.objects.create(project=project, kind=Source.Kind.FILES, name="stuck",
                                   status=Source.Status.SYNCING)  # fmt: skip
    SyncRun.objects.create(source=source, worker=a_dead_worker(), done=431, total=1)
    return source


def test_the_console_shows_a_dead_run_as_interrupted(stuck, admin_client) -> None:  # noqa: ANN001
    page = admin_client.get(f"/admin/sources/{stuck.pk}/").content.decode()
    run = stuck.runs.get()
    assert run.status == SyncRun.Status.INTERRUPTED and run.message == INTERRUPTED_MESSAGE
    assert "431 of 1" not in page and "43100%" not in page
    assert INTERRUPTED_MESSAGE in page
    stuck.refresh_from_db()
    assert stuck.status == Source.Status.FAILED


def test_a_source_whose_worker_died_can_be_deleted(stuck) -> None:  # noqa: ANN001
    source_delete(source=stuck)
    assert not Source.objects.filter(pk=stuck.pk).exists()


def test_a_live_run_still_blocks_deleting(stuck) -> None:  # noqa: ANN001
    from ingestion.console.services import SourceBusy
    from ingestion.sync import _worker

    stuck.runs.update(worker=_worker())  # this very process: alive
    with pytest.raises(SourceBusy):
        source_delete(source=stuck)


def test_progress_counts_the_documents_inside_an_archive(stuck, store) -> None:  # noqa: ANN001
    stuck.runs.all().delete()
    source_file_add(source=stuck, name="guide.md", data=b"# Guide\n\nThe guide says hello.")
    bundle = {f"page-{n}.md": f"# Page {n}\n\nPage {n} explains topic {n}.".encode()
              for n in range(5)}  # fmt: skip
    source_file_add(source=stuck, name="bundle.zip", data=zip_of(bundle))
    seen: list[tuple[int, int]] = []
    run = source_sync(source=stuck, on_progress=lambda r: seen.append((r.done, r.total)))
    assert run.status == SyncRun.Status.SUCCEEDED and run.added == 6
    assert (run.done, run.total) == (6, 6)
    assert all(done <= total for done, total in seen), seen


def test_a_task_of_a_dead_worker_comes_back_within_the_visibility_timeout() -> None:
    options = celery_app.conf.broker_transport_options
    assert options["visibility_timeout"] == 1800  # not Redis's default hour
