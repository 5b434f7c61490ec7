"""Repeated questions are served from the retrieval cache until the project's index changes.

Real pipeline, real cache: in-process memory on the embedded defaults, Redis in the
scale-out pass (REDIS_URL)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.core.cache import caches
from django.utils import timezone

from assistant.ask import services
from assistant.console.sandbox import sandbox_run
from assistant.models import Interaction, Project
from assistant.rag.types import SORRY, Turn
from assistant.wiring.retrieval_cache import index_scope
from ingestion.models import Document, Source, SyncRun
from ingestion.services import document_delete, document_upsert
from ingestion.sync import sync_run_start
from tests import asking

pytestmark = pytest.mark.django_db

MONEY_BACK = {"question": "How do I get my money back?", "topic": "Billing"}
OFFICE = "When does the Lisbon office open?"


def ask(project: Project, **kwargs: object) -> services.AskResult:
    result = asking.ask(project=project, **{**MONEY_BACK, **kwargs})
    assert not result.error, result
    return result


def logged(result: services.AskResult) -> Interaction:
    return Interaction.objects.get(answer_id=result.answer_id)


def hit(result: services.AskResult) -> bool:
    return logged(result).latency_ms["cache_hit"] == 1


@pytest.fixture
def office(db) -> tuple[Project, Source]:  # noqa: ANN001
    project = Project.objects.create(name="Offices")
    source = Source.objects.create(project=project, name="Handbook", kind=Source.Kind.MANUAL)
    write_opening_hours(source, "9 am")
    return project, source


def write_opening_hours(source: Source, hour: str) -> None:
    document_upsert(
        source=source, external_id="lisbon", title="Lisbon office",
        text=f"# Opening hours\n\nThe Lisbon office opens at {hour} on weekdays and is "
             "closed on public holidays. Visitors sign in at the front desk.",
        url="https://handbook.example/lisbon",
    )  # fmt: skip


def test_a_repeated_question_is_served_from_the_cache_with_the_same_answer(demo):
    first = ask(demo)
    again = ask(demo, question="  how do I get my MONEY back ")  # same question, retyped
    assert not hit(first) and hit(again)
    assert again.answer == first.answer and "refund" in again.answer.lower()
    assert again.sources == first.sources
    assert again.sources[0]["url"].startswith("https://help.acme.example/refunds")
    one, two = logged(first), logged(again)
    assert two.candidates == one.candidates  # every candidate, score and kept flag
    # No model ran for the second one: it has no embedding or reranking time.
    assert "rerank_ms" in one.latency_ms and "rerank_ms" not in two.latency_ms
    assert two.latency_ms["cache_ms"] < one.latency_ms["rerank_ms"]


def test_a_refusal_is_served_from_the_cache_too(demo):
    first = ask(demo, question="Do you offer a student discount?", topic="")
    again = ask(demo, question="Do you offer a student discount?", topic="")
    assert first.refused and again.refused and again.answer == SORRY
    assert hit(again)


def test_a_new_threshold_applies_to_cached_candidates_at_once(demo):
    first = ask(demo)
    best = logged(first).best_relevance
    demo.threshold = best + (1 - best) / 2
    demo.save(update_fields=["threshold"])
    stricter = ask(demo)
    assert hit(stricter) and stricter.refused and stricter.answer == SORRY


def test_changing_a_document_gives_the_new_answer(office):
    project, source = office
    assert "9 am" in ask(project, question=OFFICE, topic="").answer
    assert hit(ask(project, question=OFFICE, topic=""))

    write_opening_hours(source, "10 am")
    changed = ask(project, question=OFFICE, topic="")
    assert not hit(changed)
    assert "10 am" in changed.answer and "9 am" not in changed.answer


def test_deleting_a_document_or_a_source_invalidates_the_cache(office):
    project, source = office
    ask(project, question=OFFICE, topic="")
    document_delete(document=Document.objects.get(source=source))
    gone = ask(project, question=OFFICE, topic="")
    assert not hit(gone) and gone.refused

    write_opening_hours(source, "9 am")
    assert not ask(project, question=OFFICE, topic="").refused
    source.delete()  # as the admin does: the rows go, the vectors are skipped
    after = ask(project, question=OFFICE, topic="")
    assert not hit(after) and after.refused


def test_taking_over_from_a_killed_sync_invalidates_the_cache(office):
    project, source = office
    ask(project, question=OFFICE, topic="")
    dead = SyncRun.objects.create(source=source, trigger="manual", worker="elsewhere:1")
    SyncRun.objects.filter(pk=dead.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    sync_run_start(source=source, trigger="manual")
    assert not hit(ask(project, question=OFFICE, topic=""))


def test_an_unchanged_upsert_keeps_the_cache(office):
    project, source = office
    ask(project, question=OFFICE, topic="")
    write_opening_hours(source, "9 am")  # same text: nothing is re-indexed
    assert hit(ask(project, question=OFFICE, topic=""))


def test_a_change_in_one_project_keeps_the_others_entries(demo, office):
    ask(demo)
    write_opening_hours(office[1], "10 am")
    assert hit(ask(demo))


def test_projects_and_topics_do_not_share_entries(demo):
    refunds = (demo.sources.get().documents.get(external_id="refunds.md"))  # fmt: skip
    other = Project.objects.create(name="Refunds copy")
    copy = Source.objects.create(project=other, name="Copy", kind=Source.Kind.MANUAL)
    text = "\n".join(c.text for c in refunds.chunks.order_by("ordinal"))
    document_upsert(source=copy, external_id="refunds", title=refunds.title, text=text)

    ask(demo)
    in_other = ask(other)
    assert not hit(in_other) and not in_other.refused  # same question, its own entry
    assert not hit(ask(demo, topic="Shipping"))
    assert not hit(ask(demo, topic=""))
    assert hit(ask(other))


def test_a_follow_up_after_another_question_is_not_served_the_first_ones_entry(demo):
    follow_up = {"question": "When does it expire?", "topic": ""}
    after_tokens = (Turn("user", "How do retrieval endpoint tokens work?"), Turn("assistant", "."))
    after_keys = (Turn("user", "How do I rotate an API key?"), Turn("assistant", "."))
    first = ask(demo, **follow_up, history=after_tokens)
    other = ask(demo, **follow_up, history=after_keys)
    assert not hit(other)
    # It finds passages as asked and joined to each previous question: the joined form is
    # part of the entry, so the two never share one, and the same conversation hits its own.
    again = ask(demo, **follow_up, history=after_tokens)
    assert hit(again)
    assert logged(again).query_form == logged(first).query_form
    assert again.answer == first.answer


def test_the_retrieve_api_uses_the_cache(client, demo):
    body = {"project": demo.public_key, "question": "refund", "num_results": 3}
    origin = {"HTTP_ORIGIN": "http://127.0.0.1:8000"}
    first = client.post("/api/v1/retrieve", body, content_type="application/json", **origin)
    again = client.post("/api/v1/retrieve", body, content_type="application/json", **origin)
    assert again.json() == first.json() and len(again.json()["chunks"]) == 3


def test_the_console_sandbox_always_runs_the_models(demo):
    ask(demo)
    run = sandbox_run(project=demo, threshold=demo.threshold, **MONEY_BACK)
    assert "rerank_ms" in run.timings_ms and "cache_hit" not in run.timings_ms


def test_it_can_be_turned_off(demo, settings):  # noqa: ANN001
    settings.ASKDOCS_RETRIEVAL_CACHE_SECONDS = 0
    ask(demo)
    again = logged(ask(demo))
    assert "cache_hit" not in again.latency_ms and "rerank_ms" in again.latency_ms


@pytest.mark.skipif(not django_settings.REDIS_URL, reason="one process without REDIS_URL")
def test_an_index_change_in_another_process_invalidates_this_ones_entries(office):
    """A Celery worker syncs; the web processes must stop serving what they cached."""
    project, _ = office
    assert caches["retrieval"].__class__.__name__ == "RedisCache"
    ask(project, question=OFFICE, topic="")
    before = index_scope(project_id=project.id)
    code = (
        "import django; django.setup()\n"
        "from assistant.wiring.retrieval_cache import index_changed\n"
        f"index_changed(project_id={project.id})\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.test_settings"}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    assert index_scope(project_id=project.id) != before
    assert not hit(ask(project, question=OFFICE, topic=""))


def test_the_latency_measure_reports_hits_for_every_repeated_question(demo):
    from measuring.evaluation.cache_latency import retrieval_cache_latency

    report = retrieval_cache_latency(
        project=demo, questions=[("Billing", "How do I get my money back?"), ("", "refund")],
        rounds=2,
    )  # fmt: skip
    assert report["questions"] == 2 and report["hit_rate"] == 1.0
    assert report["repeated_ms"]["median"] < report["uncached_ms"]["median"]
