"""A real Celery worker process on the local Redis, for the tests of the broker path: this
process queues under a Redis key prefix of its own, on the product's queues (syncs, handoffs,
...), and the worker (`celery -A config.celery worker` in another process) takes them under
the same prefix, so two test runs on one Redis never meet."""

from __future__ import annotations

import json
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

from config.celery import app as celery_app

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
    """This process queues tasks on Redis (not eagerly), routed as in production, under a key
    prefix of its own (the name it yields; give it to `worker_process`)."""
    require_redis()
    name = f"{prefix}-{uuid.uuid4().hex[:10]}"
    names = ("task_always_eager", "broker_url", "broker_transport_options")
    saved = {key: celery_app.conf[key] for key in names}
    celery_app.conf.update(
        task_always_eager=False, broker_url=BROKER_URL,
        broker_transport_options={**saved["broker_transport_options"],
                                  "global_keyprefix": broker_keyprefix(name)},
    )  # fmt: skip
    forget_broker_connections()
    try:
        yield name
    finally:
        celery_app.conf.update(saved)
        forget_broker_connections()
        import redis

        store = redis.Redis.from_url(BROKER_URL)
        for key in store.scan_iter(f"{name}:*"):
            store.delete(key)


def broker_keyprefix(name: str) -> str:
    """What settings make of ASKDOCS_REDIS_KEY_PREFIX=`name` for the broker's keys."""
    return f"{name}:celery:"


def queued(name: str, queue: str) -> list[dict]:
    """The messages waiting on `queue` under `name`'s key prefix, by their headers."""
    import redis

    store = redis.Redis.from_url(BROKER_URL)
    waiting = store.lrange(f"{broker_keyprefix(name)}{queue}", 0, -1)
    return [json.loads(raw)["headers"] for raw in waiting]


@contextmanager
def worker_process(
    name: str, *, data_dir: Path | str, log: Path, queues: str = "", **env: str
) -> Iterator[subprocess.Popen[bytes]]:
    """A worker under `name`'s key prefix sharing the test database and data folder: it takes
    `queues` (comma-separated, as `-Q`), every queue when none are named; its output goes to
    `log`; `env` adds variables (a fake API's address)."""
    environment = {
        **os.environ, "DJANGO_SETTINGS_MODULE": "config.test_settings", "ASKDOCS_TESTING": "1",
        "ASKDOCS_DATA_DIR": str(data_dir), "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": BROKER_URL, "CELERY_TASK_ALWAYS_EAGER": "0",
        "ASKDOCS_REDIS_KEY_PREFIX": name,
        "ASKDOCS_ALLOWED_PRIVATE_HOSTS": "127.0.0.1",  # the tests' local webhooks and sites
        **env,
    }  # fmt: skip
    command = [
        sys.executable, "-m", "celery", "-A", "config.celery", "worker", "--pool=solo",
        "--loglevel=INFO", "-n", f"{name}@%h",
        "--without-gossip", "--without-mingle", "--without-heartbeat",
        *(["-Q", queues] if queues else []),
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
