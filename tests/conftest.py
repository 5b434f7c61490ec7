"""Shared fixtures. Models are real (ONNX from PyPI packages); they load once per session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.wiring.adapters.flashrank_reranker import FlashrankReranker
from assistant.wiring.adapters.onnx_embedder import OnnxEmbedder
from tests.fake_ollama import FakeOllama

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def embedder() -> OnnxEmbedder:
    return OnnxEmbedder("bge-small-en-v1.5", threads=2)


@pytest.fixture(scope="session")
def reranker(tmp_path_factory: pytest.TempPathFactory) -> FlashrankReranker:
    return FlashrankReranker(cache_dir=tmp_path_factory.mktemp("flashrank"), threads=2)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):  # noqa: ANN001, ANN201
    """The demo project is indexed once per session, outside the per-test transactions.
    The vector store is not rolled back with the database, so tests that index documents
    of their own do it in a project of their own (retrieval filters by project), and no test
    deletes demo documents."""
    from assistant.demo import demo_seed

    with django_db_blocker.unblock():
        demo_seed()
    yield
    with django_db_blocker.unblock():
        _end_other_sessions_of_the_test_database()


def _end_other_sessions_of_the_test_database() -> None:
    """Async tests reach the ORM through asgiref's worker threads (`acount()`, async views
    under the test client), and Django closes a thread's connection only when a request ends
    in that thread, so those connections outlive the tests. PostgreSQL refuses to drop a
    database others are connected to, which left test_askdocs_* behind after a green run.
    The database is this run's own: end the other sessions on it before it is dropped."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.fixture(autouse=True)
def _fresh_retrieval_cache() -> None:
    """Each test starts with no cached retrievals and no rate-limit counts: project ids repeat
    across rolled-back tests (SQLite), and the Redis cache outlives a test run."""
    from assistant.ask import ratelimits
    from assistant.wiring.retrieval_cache import retrieval_cache_clear

    retrieval_cache_clear()
    ratelimits.reset()  # counters outlive a test (process memory, or Redis across runs)


@pytest.fixture
def demo(db):  # noqa: ANN001, ANN201
    """The demo project with its help-centre documents indexed."""
    from assistant.demo import PROJECT_NAME
    from assistant.models import Project

    return Project.objects.get(name=PROJECT_NAME)


@pytest.fixture
def fake_ollama() -> Iterator[FakeOllama]:
    """A running fake Ollama server (see tests/fake_ollama.py), stopped after the test."""
    with FakeOllama() as server:
        yield server
