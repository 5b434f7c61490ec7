"""check_index, ingest_jsonl, sync_source, manual sources and schedules."""

from __future__ import annotations

import io
import json
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from ingestion.models import Chunk, Document, Source, SyncRun
from ingestion.selectors import sources_due
from ingestion.sync import SyncAlreadyRunning, source_sync, sync_run_start

pytestmark = pytest.mark.django_db


@pytest.fixture
def manual(project) -> Source:  # noqa: ANN001
    return Source.objects.create(
        project=project,
        kind=Source.Kind.MANUAL,
        name="manual",
        config={
            "title": "Shipping",
            "text": "# Shipping\n\nOrders leave the warehouse within two days.\n\n"
            "## Returns\n\nReturns are free within 30 days.",
        },
    )


def check(project, *args: str) -> dict:  # noqa: ANN001
    out = io.StringIO()
    call_command("check_index", "--json", "--project", project.name, *args, stdout=out)
    return json.loads(out.getvalue())


def test_check_index_finds_and_repairs_both_kinds_of_mismatch(manual, store, project) -> None:  # noqa: ANN001
    source_sync(source=manual)
    assert check(project)["vectors_without_rows"] == check(project)["rows_without_vectors"] == []
    store.upsert(["orphan-vector"], [[0.1] * 384], [{"project_id": project.pk, "source_id": 0}])
    lost = Chunk.objects.filter(document__source=manual).first()
    store.delete([lost.vector_id])

    with pytest.raises(CommandError, match="disagree"):
        call_command("check_index", "--project", project.name, stdout=io.StringIO())
    report = check(project, "--repair")
    assert report["vectors_without_rows"] == ["orphan-vector"]
    assert report["rows_without_vectors"] == [lost.vector_id]
    assert check(project)["vectors_without_rows"] == check(project)["rows_without_vectors"] == []

    # The document lost a vector, so its next sync re-embeds exactly that chunk.
    run = source_sync(source=manual)
    assert (run.changed, run.chunks_embedded) == (1, 1)
    assert lost.vector_id in store.ids()
    assert check(project)["rows"] == 2


def test_ingest_jsonl_loads_a_corpus_and_resyncs_only_changes(project, store, tmp_path) -> None:  # noqa: ANN001
    lines = [
        {
            "id": "d1",
            "title": "Actors",
            "text": "An actor is a stateful worker.",
            "url": "https://x/a",
            "page": "x",
        },
        {
            "id": "d2",
            "title": "Tasks",
            "text": "A task is a remote function call.",
            "url": "https://x/t",
        },
    ]
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n{not json\n")
    out = io.StringIO()
    call_command("ingest_jsonl", str(path), "--project", project.name, stdout=out)
    assert "added 2" in out.getvalue() and "failed 1" in out.getvalue()
    assert "corpus.jsonl:3: not a document line" in out.getvalue()
    assert set(Document.objects.filter(source__project=project).values_list("url", flat=True)) == {
        "https://x/a",
        "https://x/t",
    }

    lines[1]["text"] = "A task is a stateless remote function call."
    path.write_text("\n".join(json.dumps(line) for line in lines[1:]))
    out = io.StringIO()
    call_command("ingest_jsonl", str(path), "--project", project.name, stdout=out)
    assert "added 0, changed 1, unchanged 0, removed 1" in out.getvalue()


def test_sync_source_shows_progress_and_a_summary(manual, store) -> None:  # noqa: ANN001
    out = io.StringIO()
    call_command("sync_source", str(manual.pk), stdout=out)
    text = out.getvalue()
    assert "[##############################] 1/1 items" in text
    assert "Succeeded" in text and "chunks embedded 2" in text


def test_a_live_run_blocks_a_second_one_but_a_dead_one_does_not(manual) -> None:  # noqa: ANN001
    sync_run_start(source=manual, trigger="test")  # this process: alive
    with pytest.raises(SyncAlreadyRunning):
        sync_run_start(source=manual, trigger="test")
    SyncRun.objects.filter(source=manual).update(
        worker="elsewhere:1", heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    run = sync_run_start(source=manual, trigger="test")
    assert SyncRun.objects.filter(source=manual, status=SyncRun.Status.INTERRUPTED).count() == 1
    assert run.status == SyncRun.Status.RUNNING


def test_a_manual_source_without_text_fails_clearly(project, store) -> None:  # noqa: ANN001
    empty = Source.objects.create(project=project, kind=Source.Kind.MANUAL, name="empty")
    run = source_sync(source=empty)
    assert run.status == SyncRun.Status.FAILED
    assert run.message == "This manual source has no text yet."


def test_sources_are_due_by_their_schedule(project) -> None:  # noqa: ANN001
    now = timezone.now()
    hourly = Source.objects.create(project=project, kind="manual", name="h", schedule="hourly")
    daily = Source.objects.create(project=project, kind="manual", name="d", schedule="daily")
    Source.objects.create(project=project, kind="manual", name="off", schedule="off")
    for source in (hourly, daily):
        run = SyncRun.objects.create(source=source, status=SyncRun.Status.SUCCEEDED)
        SyncRun.objects.filter(pk=run.pk).update(started_at=now - timedelta(hours=2))
    due = {s.name for s in sources_due(now=now) if s.project_id == project.pk}
    assert due == {"h"}
