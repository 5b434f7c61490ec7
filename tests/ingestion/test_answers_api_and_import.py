"""Approved answers pushed by an authenticated webhook or imported from JSON/CSV."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from ingestion.models import Source, SupportAnswer
from ingestion.support_answers import (
    ImportRejected,
    source_webhook_token_issue,
    source_webhook_token_revoke,
    support_answers_import,
)
from ingestion.sync import source_sync
from tests.ingestion.conftest import retrieved

pytestmark = pytest.mark.django_db


@pytest.fixture
def answers(project) -> Source:  # noqa: ANN001
    return Source.objects.create(
        project=project, kind=Source.Kind.SUPPORT, name="answers", config={"provider": "import"}
    )


def push(client: Client, source: Source, token: str, **body: object):  # noqa: ANN201
    return client.post(
        f"/api/v1/sources/{source.pk}/answers",
        data=json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


def test_the_webhook_stores_one_scrubbed_answer_and_it_is_indexed(
    answers,
    store,
    project,
    django_capture_on_commit_callbacks,  # noqa: ANN001
) -> None:
    token = source_webhook_token_issue(source=answers)
    with django_capture_on_commit_callbacks() as queued:
        response = push(
            Client(),
            answers,
            token,
            id="ticket-42",
            question="Hi, I'm Ana (ana@shop.example). Can I pause my subscription?",
            answer="Yes: Settings > Plan > Pause keeps your data for 90 days. Call 020 7946 0958.",
        )
    assert response.status_code == 202, response.content
    assert response.json() == {"id": "ticket-42", "status": "approved"}
    assert len(queued) == 1  # a sync is queued once the answer is committed
    row = SupportAnswer.objects.get(source=answers, external_id="ticket-42")
    assert "ana@shop.example" not in row.question and "7946" not in row.answer

    source_sync(source=answers)
    assert any("Pause keeps your data" in t for t in retrieved(project, "pause subscription"))

    # A retried delivery changes nothing; un-approving removes it from answers.
    assert (
        push(
            Client(),
            answers,
            token,
            id="ticket-42",
            question=row.question,
            answer=row.answer,
        ).status_code
        == 202
    )
    assert SupportAnswer.objects.filter(source=answers).count() == 1
    push(Client(), answers, token, id="ticket-42", question="q", answer="a", approved=False)
    assert source_sync(source=answers).removed == 1
    assert not any("Pause" in t for t in retrieved(project, "pause subscription"))


def test_the_webhook_refuses_a_wrong_token_and_bad_bodies(answers) -> None:  # noqa: ANN001
    token = source_webhook_token_issue(source=answers)
    wrong = push(Client(), answers, "whk_guess", id="1", question="q", answer="a")
    assert wrong.status_code == 401
    assert wrong.json()["error"]["code"] == "invalid_token"
    missing = Client().post(
        f"/api/v1/sources/{answers.pk}/answers", data="{}", content_type="application/json"
    )
    assert missing.status_code == 401
    unknown = Client().post(
        "/api/v1/sources/999999/answers",
        data="{}",
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert unknown.status_code == 401
    invalid = push(Client(), answers, token, id="1", question="", answer="a")
    assert invalid.status_code == 400
    assert "question" in invalid.json()["error"]["fields"]
    assert not SupportAnswer.objects.exists()


def test_json_and_csv_imports_are_all_or_nothing(answers, store, project) -> None:  # noqa: ANN001
    rows = [
        {"id": "a1", "question": "Do you ship to Norway?", "answer": "Yes, in 3 to 5 days."},
        {"id": "a2", "question": "Gift wrap?", "answer": "Not offered.", "approved": False},
    ]
    assert (
        support_answers_import(source=answers, data=json.dumps(rows).encode(), filename="a.json")
        == 2
    )
    csv_data = (
        b"id,question,answer\n"
        b"b1,Can I return shoes?,Within 30 days with the receipt.\n"
        b"b2,,missing\n"
    )
    with pytest.raises(ImportRejected, match="row 2: missing question"):
        support_answers_import(source=answers, data=csv_data, filename="b.csv")
    assert not SupportAnswer.objects.filter(external_id="b1").exists()
    with pytest.raises(ImportRejected, match="invalid JSON"):
        support_answers_import(source=answers, data=b"[{", filename="c.json")

    run = source_sync(source=answers)
    assert run.added == 1
    assert any("3 to 5 days" in t for t in retrieved(project, "shipping to Norway"))


def test_a_new_token_replaces_the_old_one_and_a_revoked_token_is_refused(answers) -> None:  # noqa: ANN001
    old = source_webhook_token_issue(source=answers)
    token = source_webhook_token_issue(source=answers)
    assert push(Client(), answers, old, id="1", question="q", answer="a").status_code == 401
    assert answers.config["webhook_token_hint"] == f"whk_…{token[-4:]}"
    source_webhook_token_revoke(source=answers)
    answers.refresh_from_db()
    assert answers.config == {"provider": "import"}
    assert push(Client(), answers, token, id="1", question="q", answer="a").status_code == 401
