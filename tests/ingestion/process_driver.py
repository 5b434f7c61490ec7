"""Run by tests in a separate process with its own data folder (and broker/Chroma server from
the environment): sets up a website source, queues syncs, and reports database and vector
store state as JSON. Usage: python process_driver.py setup URL | enqueue ID QUEUE | state"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

from assistant.models import Project  # noqa: E402
from assistant.wiring import runtime  # noqa: E402
from ingestion.models import Chunk, Document, Source, SyncRun  # noqa: E402


def setup(url: str) -> dict:
    project, _ = Project.objects.get_or_create(name="Processes")
    source, _ = Source.objects.get_or_create(
        project=project,
        name="site",
        defaults={"kind": Source.Kind.WEBSITE, "config": {"start_url": url, "concurrency": 2}},
    )
    return {"source_id": source.pk, "project_id": project.pk}


def enqueue(source_id: str, queue: str) -> dict:
    from ingestion.tasks import source_sync_task

    ids = [
        source_sync_task.apply_async(args=(int(source_id), "test"), queue=queue).id
        for _ in range(2)
    ]
    return {"queued": ids}


def state() -> dict:
    store_ids = sorted(runtime.chunk_store().ids())  # first: building the store loads a model
    rows = list(Chunk.objects.values_list("vector_id", "document_id", "ordinal"))
    return {
        "row_ids": sorted(r[0] for r in rows),
        "row_positions": len({(r[1], r[2]) for r in rows}),
        "store_ids": store_ids,
        "documents": sorted(Document.objects.values_list("external_id", flat=True)),
        "unfinished_documents": Document.objects.filter(content_hash="").count(),
        "runs": list(
            SyncRun.objects.order_by("pk").values(
                "status", "done", "added", "unchanged", "removed", "chunks_embedded"
            )
        ),
    }


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    print(json.dumps({"setup": setup, "enqueue": enqueue, "state": state}[command](*args)))
