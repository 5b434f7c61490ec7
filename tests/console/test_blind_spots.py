"""Blind spots are clustered by meaning with the project's own embedder: paraphrases of one
question land together, unrelated questions apart, and embeddings are cached."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from assistant.models import Interaction, Project
from feedback.blind_spots import blind_spots
from feedback.models import QuestionVector

pytestmark = pytest.mark.django_db


def refused(project: Project, question: str, *, topic: str = "Account", times: int = 1) -> None:
    Interaction.objects.bulk_create(
        Interaction(
            project=project,
            channel="widget",
            question=question,
            topic=topic,
            retrieval_query=question,
            best_relevance=0.05,
            kept_count=0,
            refused=True,
            total_ms=40,
        )  # fmt: skip
        for _ in range(times)
    )


@pytest.fixture
def helpdesk(db):  # noqa: ANN001, ANN201
    project = Project.objects.create(name="Helpdesk", threshold=0.5)
    refused(project, "How do I reset my password?", times=3)
    refused(project, "I forgot my password, how to reset it", times=2)
    refused(project, "reset password")
    refused(project, "Do you offer a student discount?")
    refused(project, "Is there a discount for students?")
    refused(project, "How long does shipping take?", topic="Shipping")
    return project


def _report(project: Project, **kwargs):  # noqa: ANN003, ANN202
    return blind_spots(
        project=project, since=timezone.now() - timedelta(days=1), below=0.5, **kwargs
    )


def test_paraphrases_land_in_one_cluster_and_unrelated_questions_apart(helpdesk):
    report = _report(helpdesk)
    account = report.topics[0]
    assert account.topic == "Account" and account.times == 8
    password, discount = account.clusters
    assert password.question == "How do I reset my password?"  # the most asked leads
    assert [v.text for v in password.variants] == [
        "How do I reset my password?", "I forgot my password, how to reset it", "reset password",
    ]  # fmt: skip
    assert password.times == 6 and password.refused == 6
    assert {v.text for v in discount.variants} == {
        "Do you offer a student discount?", "Is there a discount for students?",
    }  # fmt: skip
    assert [c.question for c in report.topics[1].clusters] == ["How long does shipping take?"]


def test_embeddings_are_cached_so_a_second_view_embeds_nothing(helpdesk):
    with CaptureQueriesContext(connection) as first:
        _report(helpdesk)
    assert QuestionVector.objects.count() == 6
    assert any("INSERT" in q["sql"] for q in first.captured_queries)
    with CaptureQueriesContext(connection) as second:
        _report(helpdesk)
    assert not any("INSERT" in q["sql"] for q in second.captured_queries)
    assert len(second.captured_queries) == 2  # the questions, then their cached vectors


def test_only_the_most_recent_questions_are_clustered_and_the_page_says_so(staff_client, helpdesk):
    report = _report(helpdesk, limit=4)
    assert (report.clustered, report.total, report.limit) == (4, 9, 4)
    html = staff_client.get("/admin/blind-spots/", {"project": helpdesk.pk}).content.decode()
    assert "Clustered the 9 questions" in html and "at most 300 are clustered" in html
    assert "2 similar questions" in html


def test_the_page_links_the_representative_question_to_the_sandbox(staff_client, helpdesk):
    html = staff_client.get("/admin/blind-spots/", {"project": helpdesk.pk}).content.decode()
    assert (
        f"/admin/sandbox/?project={helpdesk.pk}&question=How%20do%20I%20reset%20my%20password%3F"
        "&topic=Account"
    ) in html


def test_htmx_gets_the_body_only(staff_client, helpdesk):
    response = staff_client.get(
        "/admin/blind-spots/", {"project": helpdesk.pk}, HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    assert "<html" not in html and "blind-group" in html


def test_clustering_puts_each_text_with_the_nearest_centroid_above_the_threshold():
    import numpy as np

    from feedback.clustering import cluster_texts

    def unit(*xs: float) -> np.ndarray:
        v = np.array(xs, dtype=np.float32)
        return v / np.linalg.norm(v)

    vectors = {"a": unit(1, 0, 0), "a2": unit(0.95, 0.2, 0), "b": unit(0, 1, 0), "c": unit(0, 0, 1)}
    clusters = cluster_texts([("b", 2), ("a", 3), ("a2", 1), ("c", 4)], vectors, threshold=0.8)
    # Ties keep the order clusters were started in (the most asked text first).
    assert [(c.members, c.weight) for c in clusters] == [(["c"], 4), (["a", "a2"], 4), (["b"], 2)]
    apart = cluster_texts([("a", 3), ("a2", 1)], vectors, threshold=0.99)
    assert [c.members for c in apart] == [["a"], ["a2"]]
