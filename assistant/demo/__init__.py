"""Demo content: a small help centre for a fictional product, so a newcomer can ask at once."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction

from assistant.models import Project
from assistant.origins import normalise_origin
from ingestion.models import Source, SyncRun
from ingestion.sync import source_sync

DOCS_DIR = Path(__file__).parent / "docs"
PROJECT_NAME = "Demo"
SOURCE_NAME = "Acme help centre"
DEMO_ORIGINS = ["http://127.0.0.1:8000", "http://localhost:8000"]
DOCS_URL = "https://help.acme.example/"
#: The demo's SMS number (555-01xx: reserved for fiction), so `sms_text` can text it at once.
DEMO_SMS_NUMBER = "+15550100100"


@dataclass(frozen=True, slots=True)
class SeedResult:
    project: Project
    added: int
    changed: int
    unchanged: int
    removed: int


def demo_seed(*, origins: Sequence[str] = (), docs_url: str = DOCS_URL) -> SeedResult:
    """Create or refresh the demo project and its documents. Safe to run again. `origins`
    (where the demo pages are served, e.g. another port) are allowed too; a bad one raises
    ValueError before anything is written. `docs_url`: where the help centre's pages are read
    (`.bin/run` passes this server's /demo/help/, so a citation opens a real page)."""
    wanted = [normalise_origin(origin) for origin in origins]
    with transaction.atomic():
        project, created = Project.objects.get_or_create(
            name=PROJECT_NAME, defaults={"allowed_origins": list(DEMO_ORIGINS)}
        )
        if created and not Project.objects.filter(sms_number=DEMO_SMS_NUMBER).exists():
            project.sms_number = DEMO_SMS_NUMBER
            project.save(update_fields=["sms_number"])
        missing = [origin for origin in wanted if origin not in project.allowed_origins]
        if missing:
            project.allowed_origins = [*project.allowed_origins, *missing]
            project.save(update_fields=["allowed_origins"])
        source, _ = Source.objects.get_or_create(
            project=project, name=SOURCE_NAME, defaults={"kind": Source.Kind.FILES}
        )
    # The source reads the help centre as a JSON Lines export, so "Sync now" in the console
    # (or sync_source) re-reads exactly what this seed loads, and never finds it gone.
    Source.objects.filter(pk=source.pk).update(config={"jsonl": str(demo_export(docs_url))})
    source.refresh_from_db()
    run = source_sync(source=source, trigger="seed", confirm_removals=True)
    if run.status != SyncRun.Status.SUCCEEDED:
        raise RuntimeError(f"The demo help centre could not be loaded: {run.message}")
    return SeedResult(
        project, added=run.added, changed=run.changed, unchanged=run.unchanged,
        removed=run.removed,
    )  # fmt: skip


def demo_export(docs_url: str = DOCS_URL) -> Path:
    """The demo documents as a JSON Lines export (id, title, text, url) in the data folder."""
    docs_url = docs_url if docs_url.endswith("/") else docs_url + "/"
    rows = []
    for path in sorted(DOCS_DIR.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        first_line = text.splitlines()[0]
        title = first_line.lstrip("# ").strip() if first_line.startswith("#") else path.stem
        body = "\n".join(text.splitlines()[1:]) if first_line.startswith("#") else text
        rows.append({"id": path.name, "title": title, "text": body, "url": docs_url + path.stem})
    export = Path(settings.DATA_DIR) / "demo" / "help-centre.jsonl"
    export.parent.mkdir(parents=True, exist_ok=True)
    export.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return export
