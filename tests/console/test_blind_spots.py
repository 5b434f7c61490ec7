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
from tests.ingestion.conftest import store  # noqa: F401 - fixture

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
    # The questions, visitors' comments on them, their cached vectors, the project's sources,
    # the admins' marks.
    assert len(second.captured_queries) == 5


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


# Kinds, marks and voted-down answers, on the demo project's indexed help centre.
def asked_at(project, question, *, topic="", ago=timedelta(hours=1), refused=True):  # noqa: ANN001, ANN201
    row = Interaction.objects.create(
        project=project, channel="widget", question=question, topic=topic,
        retrieval_query=question, best_relevance=0.02 if refused else 0.9,
        kept_count=0 if refused else 2, refused=refused,
        answer="I'm sorry, I couldn't find an answer to your question." if refused
        else "Open **Billing > Invoices** [1].",
    )  # fmt: skip
    Interaction.objects.filter(pk=row.pk).update(created_at=timezone.now() - ago)
    return row


@pytest.fixture
def asked_demo(demo):  # noqa: ANN001, ANN201
    for question in ("Write me a poem about cats", "Tell me a joke", "Do you ship to Antarctica?"):
        asked_at(demo, question, topic="Billing")
    asked_at(demo, "Do you offer a student discount?", topic="Billing")
    asked_at(demo, "Is there a discount for students?", topic="Billing")
    return demo


def test_off_topic_requests_are_told_apart_from_documentation_gaps(asked_demo):
    report = _report(asked_demo)
    gaps = {c.question for t in report.topics for c in t.clusters}
    assert {c.question for c in report.off_topic} == {
        "Write me a poem about cats",
        "Tell me a joke",
    }
    assert "Do you ship to Antarctica?" in gaps
    assert any("discount" in q for q in gaps)
    assert all(c.nearest is not None for t in report.topics for c in t.clusters)


def test_the_page_lists_the_kinds_apart(staff_client, asked_demo):
    html = staff_client.get("/admin/blind-spots/", {"project": asked_demo.pk}).content.decode()
    off_topic = html.split('data-testid="off-topic"', 1)[1].split("</section>", 1)[0]
    assert "Write me a poem about cats" in off_topic and "Antarctica" not in off_topic
    assert 'data-kind="gap"' in html.split('data-testid="off-topic"', 1)[0]


def mark(client, project, question, state, *texts, topic="Billing"):  # noqa: ANN001, ANN201
    return client.post(
        "/admin/blind-spots/mark/",
        {"project": project.pk, "question": question, "topic": topic, "state": state,
         "text": list(texts), "next": f"/admin/blind-spots/?project={project.pk}"},
    )  # fmt: skip


def test_a_dismissed_cluster_is_hidden_until_it_is_asked_again(staff_client, asked_demo):
    response = mark(
        staff_client, asked_demo, "Do you offer a student discount?", "dismissed",
        "Do you offer a student discount?", "Is there a discount for students?",
    )  # fmt: skip
    assert response.status_code == 302
    assert response["Location"] == f"/admin/blind-spots/?project={asked_demo.pk}"
    report = _report(asked_demo)
    questions = {c.question for t in report.topics for c in t.clusters}
    assert not any("discount" in q for q in questions)
    assert [m.question for m in report.hidden] == ["Do you offer a student discount?"]
    html = staff_client.get("/admin/blind-spots/", {"project": asked_demo.pk}).content.decode()
    assert 'data-testid="hidden"' in html and "Dismissed" in html
    # A reader asks it again after the mark (in other words): the cluster is back, marked so.
    asked_at(asked_demo, "Student pricing?", topic="Billing", ago=timedelta(0))
    asked_at(asked_demo, "Is there a discount for students?", topic="Billing", ago=timedelta(0))
    report = _report(asked_demo)
    back = [c for t in report.topics for c in t.clusters if c.returned_from is not None]
    assert len(back) == 1 and back[0].returned_from.state == "dismissed"
    assert not report.hidden


def test_a_resolved_mark_can_be_undone(staff_client, asked_demo):
    mark(staff_client, asked_demo, "Do you ship to Antarctica?", "resolved",
         "Do you ship to Antarctica?")  # fmt: skip
    assert "Antarctica" not in str([c.question for t in _report(asked_demo).topics
                                    for c in t.clusters])  # fmt: skip
    hidden = _report(asked_demo).hidden[0]
    assert hidden.state == "resolved" and hidden.marked_by.get_username() == "ada"
    undo = staff_client.post(
        f"/admin/blind-spots/marks/{hidden.pk}/undo/", {"project": asked_demo.pk}
    )
    assert undo.status_code == 302
    assert "Antarctica" in str([c.question for t in _report(asked_demo).topics
                                for c in t.clusters])  # fmt: skip


@pytest.mark.parametrize(
    "bad",
    [{"state": "deleted"}, {"question": ""}, {"text": ["x" * 3000]},
     {"next": "https://evil.example.com/"}],
)  # fmt: skip
def test_a_bad_mark_is_refused_and_an_outside_next_is_ignored(staff_client, asked_demo, bad):
    data = {"project": asked_demo.pk, "question": "Tell me a joke", "topic": "Billing",
            "state": "dismissed", "text": ["Tell me a joke"], **bad}  # fmt: skip
    response = staff_client.post("/admin/blind-spots/mark/", data)
    if "next" in bad:
        assert response.status_code == 302 and "evil" not in response["Location"]
    else:
        assert response.status_code == 400
        assert not asked_demo.blind_spot_marks.exists()


def test_marking_needs_staff_and_post(client, reader_client, asked_demo):
    assert reader_client.post("/admin/blind-spots/mark/", {}).status_code == 403
    assert reader_client.get("/admin/blind-spots/mark/").status_code in (403, 405)


def test_answers_voted_down_are_listed_as_a_third_kind(staff_client, asked_demo):
    from feedback.models import Feedback

    given = asked_at(asked_demo, "Where are my invoices?", topic="Billing", refused=False)
    Feedback.objects.create(interaction=given, client_id="r-1", vote=-1, comment="Not there")
    refusal = Interaction.objects.get(question="Tell me a joke")
    Feedback.objects.create(interaction=refusal, client_id="r-2", vote=-1)  # a refusal: not here
    html = staff_client.get("/admin/blind-spots/", {"project": asked_demo.pk}).content.decode()
    disliked = html.split('data-testid="disliked"', 1)[1].split("</section>", 1)[0]
    assert disliked.count("data-disliked") == 1
    assert "Where are my invoices?" in disliked and "Not there" in disliked
    assert "<strong>Billing &gt; Invoices</strong>" in disliked  # Markdown, rendered and escaped


SQL_MANUAL = """# ALTER TABLE

## Dropping a constraint

To drop a constraint you need to know its name. The planner estimates the cost of each plan
node; `ALTER TABLE products DROP CONSTRAINT some_name;` removes it. The price column of the
products table keeps its values.

## Adding a column

`ALTER TABLE products ADD COLUMN description text;` adds a column, filled with nulls.
"""


def test_prices_and_other_products_are_off_topic_even_near_the_manual(store):  # noqa: ANN001, F811
    from ingestion.models import Source
    from ingestion.services import document_upsert

    project = Project.objects.create(name="Database manual")
    source = Source.objects.create(project=project, kind="manual", name="Manual")
    document_upsert(source=source, external_id="manual", title="ALTER TABLE", text=SQL_MANUAL)
    for question in ("How much does the database cost?", "Can I pay for support with bitcoin?",
                     "How do I configure MongoDB sharding?", "How do I rename a constraint?",
                     "Can I drop a constraint of the products table?"):  # fmt: skip
        asked_at(project, question)
    report = _report(project)
    gaps = {c.question for t in report.topics for c in t.clusters}
    aside = {c.question: c.aside for c in report.off_topic}
    assert set(aside) == {
        "How much does the database cost?", "Can I pay for support with bitcoin?",
        "How do I configure MongoDB sharding?",
    }  # fmt: skip
    assert aside["How much does the database cost?"] == "a price; the documents state none"
    assert aside["Can I pay for support with bitcoin?"] == "a price; the documents state none"
    assert gaps == {
        "How do I rename a constraint?", "Can I drop a constraint of the products table?",
    }  # fmt: skip


def test_a_help_centre_that_states_prices_keeps_price_questions_as_gaps(asked_demo):
    asked_at(asked_demo, "How much does Slack cost?", topic="Billing")
    asked_at(asked_demo, "How much does the Team plan cost for 40 users?", topic="Billing")
    asked_at(asked_demo, "Can I pay with Bitcoin?", topic="Billing")
    report = _report(asked_demo)
    gaps = {c.question for t in report.topics for c in t.clusters}
    aside = {c.question: c.aside for c in report.off_topic}
    assert aside["How much does Slack cost?"] == "Slack: the documents never name it"
    assert "How much does the Team plan cost for 40 users?" in gaps
    assert "Can I pay with Bitcoin?" in gaps  # a way to pay for this product: a gap
    assert any("discount" in q for q in gaps) and "Do you ship to Antarctica?" in gaps
