"""Demo content: a small help centre for a fictional product, so a newcomer can ask at once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from assistant.models import Project, normalise_origin
from ingestion.models import Source
from ingestion.services import document_delete, document_upsert

DOCS_DIR = Path(__file__).parent / "docs"
PROJECT_NAME = "Demo"
SOURCE_NAME = "Acme help centre"
DEMO_ORIGINS = ["http://127.0.0.1:8000", "http://localhost:8000"]
DOCS_URL = "https://help.acme.example/"


@dataclass(frozen=True, slots=True)
class SeedResult:
    project: Project
    added: int
    changed: int
    unchanged: int
    removed: int


def demo_seed(*, origins: Sequence[str] = ()) -> SeedResult:
    """Create or refresh the demo project and its documents. Safe to run again. `origins`
    (where the demo pages are served, e.g. another port) are allowed too; a bad one raises
    ValueError before anything is written."""
    wanted = [normalise_origin(origin) for origin in origins]
    with transaction.atomic():
        project, _ = Project.objects.get_or_create(
            name=PROJECT_NAME, defaults={"allowed_origins": list(DEMO_ORIGINS)}
        )
        missing = [origin for origin in wanted if origin not in project.allowed_origins]
        if missing:
            project.allowed_origins = [*project.allowed_origins, *missing]
            project.save(update_fields=["allowed_origins"])
        source, _ = Source.objects.get_or_create(
            project=project, name=SOURCE_NAME, defaults={"kind": Source.Kind.FILES}
        )
    counts = {"added": 0, "changed": 0, "unchanged": 0}
    seen = set()
    for path in sorted(DOCS_DIR.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        first_line = text.splitlines()[0]
        title = first_line.lstrip("# ").strip() if first_line.startswith("#") else path.stem
        body = "\n".join(text.splitlines()[1:]) if first_line.startswith("#") else text
        result = document_upsert(
            source=source,
            external_id=path.name,
            title=title,
            text=body,
            url=DOCS_URL + path.stem,
        )
        counts[result.status] += 1
        seen.add(path.name)
    removed = 0
    for document in source.documents.exclude(external_id__in=seen):
        document_delete(document=document)
        removed += 1
    Source.objects.filter(pk=source.pk).update(status=Source.Status.READY)
    return SeedResult(project, removed=removed, **counts)
