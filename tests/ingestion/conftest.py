"""Fixtures for ingestion tests: a local website, a vector store of the test's own, and a
project of the test's own (the demo project is shared and never touched here)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.models import Project
from assistant.rag.types import Question, Settings
from assistant.wiring import runtime
from ingestion.models import Chunk, Source
from tests.ingestion.site_server import Site


@pytest.fixture
def site(tmp_path: Path, allow_loopback: None) -> Iterator[Site]:
    server = Site.copy_of_fixture(tmp_path).start()
    yield server
    server.stop()


@pytest.fixture
def store(settings, tmp_path: Path) -> Iterator[object]:  # noqa: ANN001
    """A fresh Chroma folder: vectors are not rolled back with the test's transaction, and
    `check_index` must see only this test's vectors. The embedder stays loaded."""
    settings.CHROMA_PATH = tmp_path / "chroma"
    runtime.chunk_store.cache_clear()
    yield runtime.chunk_store()
    runtime.chunk_store.cache_clear()


@pytest.fixture
def project(db) -> Project:  # noqa: ANN001
    return Project.objects.create(name=f"ingestion-test-{uuid.uuid4().hex[:8]}")


def docs_source(project: Project, site: Site) -> Source:
    """A website source of the project that crawls the test site from its docs/index.html."""
    return Source.objects.create(
        project=project, kind=Source.Kind.WEBSITE, name="docs",
        config={"start_url": f"{site.url}/docs/index.html"},
    )  # fmt: skip


def retrieved(project: Project, question: str, k: int = 20) -> list[str]:
    """Chunk texts the retriever finds for a question in this project, nearest first."""
    from assistant.rag.retrieve.retriever import Retriever
    from ingestion.selectors import chunks_by_vector_id

    retriever = Retriever(
        embedder=runtime.embedder(),
        store=runtime.chunk_store(),
        reranker=None,  # type: ignore[arg-type] - not used with rerank=False
        chunks=chunks_by_vector_id,
    )
    result = retriever.retrieve(
        Question(question),
        Settings(rerank=False, num_candidates=k, max_kept=k),
        where={"project_id": project.pk},
    )
    return [c.chunk.text for c in result.candidates]


def vector_ids(project: Project) -> dict[str, str]:
    """vector id -> document external id, from the database."""
    return dict(
        Chunk.objects.filter(document__source__project=project).values_list(
            "vector_id", "document__external_id"
        )
    )
