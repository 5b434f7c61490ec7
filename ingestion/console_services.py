"""Writes behind the console's source pages."""

from __future__ import annotations

from assistant.models import Project
from ingestion.models import Source


def website_source_create(
    *, project: Project, name: str, start_url: str, schedule: str, max_pages: int
) -> Source:
    return Source.objects.create(
        project=project, kind=Source.Kind.WEBSITE, name=name, schedule=schedule,
        config={"start_url": start_url, "max_pages": max_pages},
    )  # fmt: skip
