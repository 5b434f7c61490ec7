"""A handoff delivered by a real Celery worker process on the local Redis: the broker path of
its retries (a scheduled retry with a countdown, not the in-process loop). The API call runs in
this process; the worker shares the test database and posts to a local fake webhook."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.handoff.models import Handoff
from assistant.models import Interaction, Project
from tests.celery_worker import queue_on_redis, worker_process
from tests.fake_webhook import FakeWebhook
from tests.sms.conftest import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]

ORIGIN = "https://app.example.com"


@pytest.fixture
def worker(settings, tmp_path) -> Iterator[str]:  # noqa: ANN001
    log = Path(tmp_path) / "worker.log"
    with (
        queue_on_redis("handoff-test") as queue,
        worker_process(queue, data_dir=settings.DATA_DIR, log=log),
    ):
        yield str(log)


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
        wait_until(lambda: Handoff.objects.get().status == "sent", timeout=30)
    handoff = Handoff.objects.get()
    assert (handoff.attempts, hook.attempts) == (3, 3)
    assert hook.received[0]["body"]["exchanges"][0]["question"] == "Do you accept cheques?"
