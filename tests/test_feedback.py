"""POST /api/v1/feedback: thumbs up / down on an answer, idempotent per answer and client."""

from __future__ import annotations

import json
import random

import pytest

from assistant.models import Interaction, Project
from feedback.models import Feedback

pytestmark = pytest.mark.django_db

ORIGIN = "http://127.0.0.1:8000"
CLIENT = "c0ffee-client-1234"


@pytest.fixture
def answer(demo):  # noqa: ANN001, ANN201
    return Interaction.objects.create(
        project=demo, channel="widget", question="How do I get my money back?",
        retrieval_query="How do I get my money back?", answer="Ask within 30 days [1].",
    )  # fmt: skip


def vote(client, project, answer_id, origin=ORIGIN, **body):  # noqa: ANN001, ANN201
    payload = {"project": project.public_key, "answer_id": str(answer_id), "client_id": CLIENT}
    payload.update(body)
    return client.post(
        "/api/v1/feedback", json.dumps(payload), content_type="application/json",
        HTTP_ORIGIN=origin,
    )  # fmt: skip


def test_a_second_click_changes_the_vote_and_never_duplicates_it(client, demo, answer):
    first = vote(client, demo, answer.answer_id, vote="up")
    assert first.status_code == 201, first.content
    assert first.json() == {"answer_id": str(answer.answer_id), "vote": "up", "comment": ""}
    second = vote(client, demo, answer.answer_id, vote="down", comment=" Missing the fee. ")
    assert second.status_code == 200
    assert second.json()["vote"] == "down" and second.json()["comment"] == "Missing the fee."
    again = vote(client, demo, answer.answer_id, vote=-1)
    assert again.json()["comment"] == "Missing the fee."  # a vote alone keeps the comment
    row = Feedback.objects.get()
    assert (row.interaction, row.client_id, row.vote) == (answer, CLIENT, -1)
    assert row.updated_at >= row.created_at


def test_another_client_gets_a_vote_of_its_own(client, demo, answer):
    vote(client, demo, answer.answer_id, vote="up")
    vote(client, demo, answer.answer_id, vote="down", client_id="another-client-99")
    assert sorted(answer.feedback.values_list("vote", flat=True)) == [-1, 1]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"vote": "sideways"}, "vote"),
        ({"vote": True}, "vote"),
        ({"vote": 2}, "vote"),
        ({}, "vote"),
        ({"vote": "up", "client_id": "short"}, "client_id"),
        ({"vote": "up", "client_id": "<script>alert(1)</script>"}, "client_id"),
        ({"vote": "up", "comment": "x" * 2001}, "comment"),
        ({"vote": "up", "answer_id": "not-a-uuid"}, "answer_id"),
    ],
)
def test_it_rejects_bad_feedback_and_stores_nothing(client, demo, answer, body, field):
    body = {"answer_id": answer.answer_id, **body}
    response = vote(client, demo, **body)
    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]
    assert not Feedback.objects.exists()


def test_it_refuses_unknown_answers_and_answers_of_other_projects(client, demo, answer):
    other = Project.objects.create(name="Other", allowed_origins=[ORIGIN])
    assert vote(client, other, answer.answer_id, vote="up").status_code == 404
    unknown = vote(client, demo, "0" * 8 + "-0000-4000-8000-" + "0" * 12, vote="up")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_answer"
    assert not Feedback.objects.exists()


def test_it_refuses_origins_the_project_does_not_allow(client, demo, answer):
    response = vote(client, demo, answer.answer_id, origin="https://evil.example", vote="up")
    assert response.status_code == 403
    assert not Feedback.objects.exists()


def test_cors_lets_in_the_projects_origins_only(client, demo):
    def preflight(origin):  # noqa: ANN001, ANN202
        return client.options(
            "/api/v1/feedback", HTTP_ORIGIN=origin,
            HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
            HTTP_ACCESS_CONTROL_REQUEST_HEADERS="content-type",
        )  # fmt: skip

    allowed = preflight(ORIGIN)
    assert allowed["Access-Control-Allow-Origin"] == ORIGIN
    assert "Access-Control-Allow-Origin" not in preflight("https://evil.example")


def test_it_rate_limits_feedback_per_client(client, demo, answer, settings):
    # per hour: a minute window may roll over mid-test
    settings.ASKDOCS_RATE_FEEDBACK_PER_CLIENT = "2/h"
    address = f"10.9.{random.randint(0, 255)}.{random.randint(1, 254)}"
    for expected in (201, 200, 429):
        response = client.post(
            "/api/v1/feedback",
            json.dumps({"project": demo.public_key, "answer_id": str(answer.answer_id),
                        "client_id": CLIENT, "vote": "up"}),
            content_type="application/json", HTTP_ORIGIN=ORIGIN, REMOTE_ADDR=address,
        )  # fmt: skip
        assert response.status_code == expected
    assert response.json()["error"]["code"] == "rate_limited"
