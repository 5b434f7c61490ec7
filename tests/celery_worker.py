"""A real Celery worker process on the local Redis, for the tests of the broker path: this
process queues on a queue of its own, the worker (`celery -A assistant.celery worker` in
another process) takes only that queue, so two test runs on one Redis never meet."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

import pytest
from django.db import connection

from assistant.celery import app as celery_app

REPO = Path(__file__).resolve().parents[1]
BROKER_URL = os.environ.get("TEST_SMS_BROKER_URL", "redis://127.0.0.1:6379/13")


def require_redis(url: str = BROKER_URL) -> None:
    """Skip the test where Redis is not running (fail in CI, where it must be)."""
    parts = urlparse(url)
    try:
        socket.create_connection((parts.hostname, parts.port or 6379), timeout=2).close()
    except OSError:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Redis is not reachable at {url}")
        pytest.skip(f"Redis is not reachable at {url}")


def database_url() -> str:
    """The test database as a DATABASE_URL, for a worker process to share it."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    user = db["USER"] or "postgres"
    return f"postgres://{user}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def forget_broker_connections() -> None:
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@contextmanager
def tasks_in_this_process() -> Iterator[None]:
    """Queued tasks run in this process, as on the embedded default (a background thread),
    also on the suite's Redis pass, where a broker would hand them to Celery workers."""
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    try:
        yield
    finally:
        celery_app.conf.task_always_eager = eager


@contextmanager
def queue_on_redis(prefix: str) -> Iterator[str]:
    """This process queues tasks on Redis (not eagerly), on a queue of its own."""
    require_redis()
    queue = f"{prefix}-{uuid.uuid4().hex[:10]}"
    names = ("task_always_eager", "broker_url", "task_default_queue")
    saved = {name: celery_app.conf[name] for name in names}
    celery_app.conf.update(task_always_eager=False, broker_url=BROKER_URL, task_default_queue=queue)
    forget_broker_connections()
    try:
        yield queue
    finally:
        celery_app.conf.update(saved)
        forget_broker_connections()


@contextmanager
def worker_process(
    queue: str, *, data_dir: Path | str, log: Path, **env: str
) -> Iterator[subprocess.Popen[bytes]]:
    """A worker on `queue` sharing the test database and data folder; its output goes to
    `log`; `env` adds variables (a fake API's address)."""
    environment = {
        **os.environ, "DJANGO_SETTINGS_MODULE": "assistant.test_settings", "ASKDOCS_TESTING": "1",
        "ASKDOCS_DATA_DIR": str(data_dir), "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": BROKER_URL, "CELERY_TASK_ALWAYS_EAGER": "0",
        "ASKDOCS_ALLOWED_PRIVATE_HOSTS": "127.0.0.1",  # the tests' local webhooks and sites
        **env,
    }  # fmt: skip
    command = [
        sys.executable, "-m", "celery", "-A", "assistant.celery", "worker", "--pool=solo",
        "--loglevel=INFO", "-Q", queue, "-n", f"{queue}@%h",
        "--without-gossip", "--without-mingle", "--without-heartbeat",
    ]  # fmt: skip
    with log.open("w") as output:
        process = subprocess.Popen(  # noqa: S603 - our own command line
            command, cwd=REPO, env=environment, stdout=output, stderr=subprocess.STDOUT
        )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
