"""Queues per kind of work on the broker path, as the lanes of the embedded default: syncs,
handoff deliveries, SMS replies and check runs each wait on a Celery queue of their own on the
real Redis, so a worker given only the handoffs delivers while no worker takes syncs (or
while every sync worker is busy with a long crawl); a worker started without `-Q` takes every
queue. The workers are real processes (tests/celery_worker.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.discord.tasks import discord_answer
from assistant.handoff.models import Handoff
from assistant.models import Interaction, Project
from assistant.slack.tasks import slack_answer
from assistant.sms.tasks import sms_send_reply
from assistant.wiring import background
from feedback.tasks import check_run_task
from ingestion.dispatch import sync_enqueue
from ingestion.models import Source, SyncRun
from tests.celery_worker import queue_on_redis, queued, worker_process
from tests.fake_webhook import FakeWebhook
from tests.sms.conftest import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]

ORIGIN = "https://app.example.com"


def shop(webhook_url: str) -> Project:
    project = Project.objects.create(
        name="Shop", allowed_origins=[ORIGIN], contact_support="webhook",
        contact_support_target=webhook_url,
    )  # fmt: skip
    Interaction.objects.create(
        project=project, channel="widget", conversation_id="c0ffee",
        question="Do you accept cheques?", retrieval_query="q", answer="...", refused=True,
    )  # fmt: skip
    return project


def ask_a_person(client, project: Project) -> None:  # noqa: ANN001
    response = client.post(
        "/api/v1/handoff",
        json.dumps({"project": project.public_key, "conversation_id": "c0ffee"}),
        content_type="application/json", HTTP_ORIGIN=ORIGIN,
    )  # fmt: skip
    assert response.status_code == 201, response.content


def new_source(project: Project) -> Source:
    source = Source.objects.create(
        project=project, kind=Source.Kind.MANUAL, name="Notes",
        config={"title": "Refunds", "text": "Refunds take five working days."},
    )  # fmt: skip
    sync_enqueue(source=source)
    return source


def test_each_kind_of_work_waits_on_a_queue_of_its_own(client):  # noqa: ANN001
    with queue_on_redis("queues-test") as name:
        project = shop("https://desk.example.com/hooks/support")  # never reached: no worker
        new_source(project)
        ask_a_person(client, project)
        background.enqueue(sms_send_reply, 1)
        background.enqueue(slack_answer, 1)
        background.enqueue(discord_answer, 1)
        background.enqueue(check_run_task, 1)

        def tasks(queue: str) -> list[str]:
            return [headers["task"] for headers in queued(name, queue)]

        assert tasks("syncs") == ["ingestion.tasks.source_sync_task"]
        assert tasks("handoffs") == ["handoff.send"]
        assert tasks("sms") == ["sms.send_reply"]
        assert tasks("slack") == ["slack.answer"]
        assert tasks("discord") == ["discord.answer"]
        assert tasks("checks") == ["feedback.tasks.check_run_task"]
        assert tasks("celery") == []


def test_a_handoff_worker_delivers_while_the_syncs_wait_for_theirs(client, settings, tmp_path):  # noqa: ANN001
    log = Path(tmp_path) / "worker.log"
    with (
        FakeWebhook() as hook,
        queue_on_redis("queues-test") as name,
        worker_process(name, data_dir=settings.DATA_DIR, log=log, queues="handoffs,sms"),
    ):
        project = shop(hook.url)
        new_source(project)
        hook.fail_next(1, status=503)  # the retry must come back on the handoffs queue
        ask_a_person(client, project)

        hook.wait_for(1, timeout=120)  # the worker's start included
        wait_until(lambda: Handoff.objects.get().status == "sent", timeout=30)
        assert hook.attempts == 2
        assert [headers["task"] for headers in queued(name, "syncs")] == [
            "ingestion.tasks.source_sync_task"
        ]  # still waiting for a sync worker
        assert not SyncRun.objects.exists()
    taken = log.read_text()
    assert "Task handoff.send[" in taken and "Task ingestion.tasks.source_sync_task[" not in taken


def test_a_worker_started_without_queues_named_takes_every_kind(client, settings, tmp_path):  # noqa: ANN001
    log = Path(tmp_path) / "worker.log"
    with (
        FakeWebhook() as hook,
        queue_on_redis("queues-test") as name,
        worker_process(name, data_dir=settings.DATA_DIR, log=log),
    ):
        project = shop(hook.url)
        source = new_source(project)
        ask_a_person(client, project)

        hook.wait_for(1, timeout=120)
        wait_until(lambda: SyncRun.objects.filter(source=source, status="succeeded").exists(),
                   timeout=120)  # fmt: skip
    assert SyncRun.objects.get().added == 1
