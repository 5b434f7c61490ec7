"""The scale-out path end to end: a real Celery worker on the local Redis and a real Chroma
server on a free loopback port, each in its own process, sharing one database file."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests.ingestion.processes import REPO, drive, environment, manage, start_chroma, stop
from tests.ingestion.site_server import Site

pytestmark = pytest.mark.redis


def redis_url() -> str:
    url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/15"
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as error:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"Redis is not reachable at {url}: {error}")
    return url


def wait_for_runs(
    env: dict[str, str], count: int, worker: subprocess.Popen[bytes], log: Path
) -> dict:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        state = drive(env, "state")
        finished = [r for r in state["runs"] if r["status"] != "running"]
        if len(finished) >= count and len(finished) == len(state["runs"]):
            # A fresh snapshot: the one above read rows before it saw the runs finish.
            return drive(env, "state")
        assert worker.poll() is None, f"the worker died:\n{log.read_text()[-3000:]}"
        time.sleep(1)
    raise AssertionError(f"runs did not finish: {state['runs']}\n{log.read_text()[-3000:]}")


def test_a_celery_worker_syncs_into_a_chroma_server(tmp_path: Path) -> None:
    broker = redis_url()
    site = Site.copy_of_fixture(tmp_path).start()
    chroma, chroma_url = start_chroma(tmp_path)
    queue = f"askdocs-test-{uuid.uuid4().hex[:8]}"
    env = environment(tmp_path / "data", REDIS_URL=broker, CHROMA_URL=chroma_url)
    log = tmp_path / "worker.log"
    worker = None
    try:
        manage(env, "migrate", "-v0")
        source_id = drive(env, "setup", f"{site.url}/docs/index.html")["source_id"]
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "-Q",
                queue,
                "--pool",
                "solo",
                "--without-mingle",
                "--without-gossip",
                "-l",
                "info",
            ],
            cwd=REPO,
            env=env,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
        )
        # Queued twice, as a retried delivery would be: the index ends the same.
        drive(env, "enqueue", str(source_id), queue)
        state = wait_for_runs(env, 2, worker, log)
        first, second = state["runs"]
        detail = f"{state}\n{log.read_text()[-4000:]}"
        assert (first["status"], first["added"]) == ("partial", 4)  # broken.html answers 500
        assert (second["added"], second["unchanged"], second["chunks_embedded"]) == (0, 4, 0)
        assert state["row_ids"] == state["store_ids"], detail
        assert len(state["row_ids"]) == state["row_positions"] > 0

        # The vectors are in the Chroma server, where a web process would query them.
        collections = httpx.get(
            f"{chroma_url}/api/v2/tenants/default_tenant/databases/default_database/collections"
        ).json()
        assert any(c["name"].startswith("chunks-") for c in collections)

        site.remove("docs/faq.html")
        drive(env, "enqueue", str(source_id), queue)
        state = wait_for_runs(env, 4, worker, log)
        assert state["runs"][2]["removed"] == 1
        assert not any(d.endswith("faq.html") for d in state["documents"])
        assert state["row_ids"] == state["store_ids"]
    finally:
        if worker is not None:
            stop(worker)
        stop(chroma)
        site.stop()
