"""Celery's broker keys carry the deployment's ASKDOCS_REDIS_KEY_PREFIX like every other key,
so two deployments on one Redis database do not share a queue. A task is queued by a process
of its own (the settings are read at start) on the real Redis; runs on the Redis pass."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from tests.ingestion.processes import environment, manage

pytestmark = pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="the Redis pass")

REDIS = "redis://127.0.0.1:6379/13"


def test_the_broker_keys_are_under_the_deployments_prefix(tmp_path: Path) -> None:
    import redis

    prefix = f"askdocs_keys_{uuid.uuid4().hex[:8]}"
    store = redis.Redis.from_url(REDIS)
    queued_before = store.llen("celery")
    env = environment(tmp_path, REDIS_URL=REDIS, ASKDOCS_REDIS_KEY_PREFIX=prefix)
    try:
        task_id = manage(env, "shell", "-v", "0", "-c", (
            "from config.celery import app; "
            "print(app.send_task('ingestion.tasks.sync_due_sources').id)"
        )).strip()  # fmt: skip
        ours = {key.decode() for key in store.scan_iter(f"{prefix}*")}
        assert f"{prefix}:celery:celery" in ours, ours  # the queue
        assert any(key.startswith(f"{prefix}:celery:_kombu.binding.") for key in ours), ours
        queued = store.lrange(f"{prefix}:celery:celery", 0, -1)
        assert any(task_id.encode() in message for message in queued)
        assert store.llen("celery") == queued_before  # nothing in an unprefixed queue
    finally:
        for key in store.scan_iter(f"{prefix}*"):
            store.delete(key)
