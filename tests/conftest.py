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
    from django.db import connection

    from assistant.demo import demo_seed

    with django_db_blocker.unblock():
        demo_seed()
    yield
    if connection.vendor == "postgresql":
        # Threads of the suite (answer workers, asgiref's thread for async ORM calls) may
        # still hold a pooled connection, which would keep PostgreSQL from dropping the test
        # database ("being accessed by other users"); end them first.
        with django_db_blocker.unblock(), connection._nodb_cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                [connection.settings_dict["NAME"]],
            )


@pytest.fixture(autouse=True)
def _fresh_retrieval_cache() -> None:
    """Each test starts with no cached retrievals and no rate-limit counts: project ids repeat
    across rolled-back tests (SQLite), and the Redis cache outlives a test run."""
    from assistant.ask import ratelimits
    from assistant.ask.consumers import forget_open_sockets
    from assistant.wiring.retrieval_cache import retrieval_cache_clear

    retrieval_cache_clear()
    ratelimits.reset()  # counters outlive a test (process memory, or Redis across runs)
    forget_open_sockets()


@pytest.fixture
def demo(db):  # noqa: ANN001, ANN201
    """The demo project with its help-centre documents indexed."""
    from assistant.demo import PROJECT_NAME
    from assistant.models import Project

    return Project.objects.get(name=PROJECT_NAME)


@pytest.fixture
def allow_loopback(settings):  # noqa: ANN001, ANN201
    """The tests' local sites and webhooks listen on 127.0.0.1, which requests made for
    others do not reach unless the deployment allows it (assistant/wiring/outbound.py)."""
    settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1"]


@pytest.fixture
def tasks_here() -> Iterator[None]:
    """Queued tasks (syncs, deliveries) run in this process on every pass of the suite;
    tests/celery_worker.py has the real worker for the broker path."""
    from tests.celery_worker import tasks_in_this_process

    with tasks_in_this_process():
        yield


@pytest.fixture
def fake_ollama() -> Iterator[FakeOllama]:
    """A running fake Ollama server (see tests/fake_ollama.py), stopped after the test."""
    with FakeOllama() as server:
        yield server


@pytest.fixture
def ollama_project(demo, fake_ollama, settings):  # noqa: ANN001, ANN201
    """The demo project answered by an Ollama model: the fake server, short timeouts."""
    from assistant.wiring import runtime
    from assistant.wiring.resilience import reset_circuits

    settings.OLLAMA_HOST = fake_ollama.url
    settings.ASKDOCS_OLLAMA_TIMEOUTS = {"connect": 1.0, "first_token": 0.5, "between_tokens": 0.5}
    runtime.reset()
    reset_circuits()
    demo.generator = "ollama"
    demo.save()
    yield demo
    runtime.reset()
    reset_circuits()


def secret_of(project):  # noqa: ANN001, ANN201
    """The project's secret key in clear, as its owner was shown it: only its digest is
    stored, so a test issues one (once per project instance) and keeps it."""
    if not hasattr(project, "_secret_for_tests"):
        project._secret_for_tests = project.issue_secret_key()
        project.save()
    return project._secret_for_tests


@pytest.fixture(scope="session")
def built_docs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The manual built as `mkdocs build --strict` builds it: (its folder, the build's output)."""
    import os
    import subprocess
    import sys

    site = tmp_path_factory.mktemp("docs_site")
    done = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return site, done.stdout + done.stderr


@pytest.fixture
def narrow_gate(settings):  # noqa: ANN001, ANN201
    """The answering gate of two slots and a deadline of two answers each: four places, three
    for one project (assistant/admission.py); tickets still held are dropped with it."""
    from assistant import admission

    settings.ASKDOCS_ANSWER_SLOTS = 2
    settings.ASKDOCS_ANSWER_DEADLINE_SECONDS = 1.0
    admission.reset()
    yield
    admission.reset()
