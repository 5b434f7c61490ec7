"""Background lanes on the embedded default: each kind of work on a thread of its own, so a
handoff to a webhook that hangs does not hold a new source's first sync (three such handoffs
once kept it from starting for over two minutes)."""

from __future__ import annotations

import json
import os
import threading

import pytest

from assistant.handoff.models import Handoff
from assistant.models import Interaction, Project
from assistant.wiring.adapters.workers import Workers, niceness
from ingestion.dispatch import sync_enqueue
from ingestion.models import Source, SyncRun
from tests.fake_webhook import FakeWebhook

ORIGIN = "https://app.example.com"


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("allow_loopback")
def test_a_hanging_webhook_does_not_delay_a_new_sources_first_sync(client, settings, tasks_here):  # noqa: ANN001
    settings.ASKDOCS_HANDOFF_WEBHOOK_TIMEOUT = 600.0  # the delivery hangs as long as the test
    with FakeWebhook() as hook:
        hook.hold()
        project = Project.objects.create(
            name="Shop", allowed_origins=[ORIGIN], contact_support="webhook",
            contact_support_target=hook.url,
        )  # fmt: skip
        Interaction.objects.create(
            project=project, channel="widget", conversation_id="c0ffee",
            question="Do you accept cheques?", retrieval_query="q", answer="...", refused=True,
        )  # fmt: skip
        response = client.post(
            "/api/v1/handoff",
            json.dumps({"project": project.public_key, "conversation_id": "c0ffee"}),
            content_type="application/json", HTTP_ORIGIN=ORIGIN,
        )  # fmt: skip
        assert response.status_code == 201
        hook.wait_for_attempts(1)  # the delivery has started and now hangs

        source = Source.objects.create(
            project=project, kind=Source.Kind.MANUAL, name="Notes",
            config={"title": "Refunds", "text": "Refunds take five working days."},
        )  # fmt: skip
        future = sync_enqueue(source=source)
        assert future is not None
        run_id = future.result(timeout=120)  # on one shared thread: after the 600 s delivery
        run = SyncRun.objects.get(pk=run_id)

        assert run.status == SyncRun.Status.SUCCEEDED and run.added == 1
        assert Handoff.objects.get().status == Handoff.Status.SENDING  # still hanging
        hook.released.set()


def test_a_lower_priority_callers_model_runs_never_stand_before_an_answers():
    """The sync lane's thread runs at a lower priority, and so must its embeddings: a crawl's
    batch queued hundreds of runs on the embedder's two shared threads, at the answers'
    priority, and an answer's query waited behind all of them (first words 2-25 s)."""
    workers = Workers(2, "test")
    lower = min(19, niceness() + 10)
    held, release = threading.Event(), threading.Event()
    done: dict[str, list[int]] = {}

    def slow(_: int) -> int:
        held.set()
        release.wait(60)
        return niceness()

    def sync_lane() -> None:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), lower)
        done["sync"] = list(workers.map(slow, range(20)))

    def answer() -> None:
        done["answer"] = list(workers.map(lambda _: niceness(), range(2)))

    syncing = threading.Thread(target=sync_lane)
    syncing.start()
    try:
        assert held.wait(10)
        answering = threading.Thread(target=answer)
        answering.start()
        answering.join(10)  # with one shared pool: after every run of the sync's
        assert done.get("answer") == [niceness()] * 2
    finally:
        release.set()
        syncing.join(60)
    assert done["sync"] == [lower] * 20  # the sync's runs ran at its priority
