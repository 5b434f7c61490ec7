"""A handoff delivered by a real Celery worker process on the local Redis: the broker path of
its retries (a scheduled retry with a countdown, not the in-process loop). The API call runs in
this process; the worker shares the test database and posts to a local fake webhook."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.celery import app as celery_app
from assistant.handoff.models import Handoff
from assistant.models import Interaction, Project
from tests.fake_webhook import FakeWebhook
from tests.sms import test_worker as sms_worker

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]

BROKER_URL = sms_worker.BROKER_URL
ORIGIN = "https://app.example.com"


@pytest.fixture
def worker(settings, tmp_path) -> Iterator[str]:  # noqa: ANN001
    if not sms_worker._reachable(BROKER_URL):
        if os.environ.get("CI") == "true":
            pytest.fail(f"Redis is not reachable at {BROKER_URL}")
        pytest.skip(f"Redis is not reachable at {BROKER_URL}")
    queue = f"handoff-test-{uuid.uuid4().hex[:10]}"
    names = ("task_always_eager", "broker_url", "task_default_queue")
    saved = {name: celery_app.conf[name] for name in names}
    celery_app.conf.update(task_always_eager=False, broker_url=BROKER_URL, task_default_queue=queue)
    sms_worker._forget_broker_connections()
    env = {
        **os.environ, "DJANGO_SETTINGS_MODULE": "assistant.test_settings", "ASKDOCS_TESTING": "1",
        "ASKDOCS_DATA_DIR": str(settings.DATA_DIR), "DATABASE_URL": sms_worker._database_url(),
        "CELERY_BROKER_URL": BROKER_URL, "CELERY_TASK_ALWAYS_EAGER": "0",
    }  # fmt: skip
    command = [
        sys.executable, "-m", "celery", "-A", "assistant.celery", "worker", "--pool=solo",
        "--loglevel=INFO", "-Q", queue, "-n", f"{queue}@%h",
        "--without-gossip", "--without-mingle", "--without-heartbeat",
    ]  # fmt: skip
    log = Path(tmp_path) / "worker.log"
    with log.open("w") as output:
        process = subprocess.Popen(  # noqa: S603 - our own command line
            command, cwd=sms_worker.REPO, env=env, stdout=output, stderr=subprocess.STDOUT
        )
    try:
        yield str(log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        celery_app.conf.update(saved)
        sms_worker._forget_broker_connections()


def test_a_worker_retries_a_failing_webhook_until_it_takes_the_handoff(client, worker):
    with FakeWebhook() as hook:
        project = Project.objects.create(
            name="Shop", allowed_origins=[ORIGIN], contact_support="webhook",
            contact_support_target=hook.url,
        )  # fmt: skip
        Interaction.objects.create(
            project=project, channel="widget", conversation_id="c0ffee",
            question="Do you accept cheques?", retrieval_query="q", answer="...", refused=True,
        )  # fmt: skip
        hook.fail_next(2, status=503)
        response = client.post(
            "/api/v1/handoff",
            json.dumps({"project": project.public_key, "conversation_id": "c0ffee"}),
            content_type="application/json", HTTP_ORIGIN=ORIGIN,
        )  # fmt: skip
        assert response.status_code == 201
        hook.wait_for(1, timeout=120)
        sms_worker.wait_until(lambda: Handoff.objects.get().status == "sent", timeout=30)
    handoff = Handoff.objects.get()
    assert (handoff.attempts, hook.attempts) == (3, 3)
    assert hook.received[0]["body"]["exchanges"][0]["question"] == "Do you accept cheques?"
