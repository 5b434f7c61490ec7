"""A visitor's personal data is masked at the intake, so that what is stored (the interaction
log, SMS texts, feedback comments, handoffs), embedded (question vectors), clustered and sent
to the model server is masked: real pipeline, real stores, a fake Ollama at its HTTP edge."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from assistant.ask import intake
from assistant.ask.handoff_intake import handoff_request
from assistant.memory.models import UserFact
from assistant.models import Interaction, Project
from assistant.wiring import runtime
from feedback.blind_spots import blind_spots
from feedback.models import Feedback, QuestionVector
from feedback.question_vectors import _key, normalised
from feedback.services import feedback_record

pytestmark = pytest.mark.django_db

ORIGIN = "http://127.0.0.1:8000"
PERSONAL = {
    "email": "jane.doe@example.com",
    "phone": "+44 20 7946 0958",
    "card": "4111 1111 1111 1111",
    "iban": "DE89 3704 0044 0532 0130 00",
    "secret": "sk-proj-abcdefghijklmnopqrstuvwx0123",
}
QUESTION = (
    f"How do I get a refund? I paid with card {PERSONAL['card']}, my e-mail is "
    f"{PERSONAL['email']}, call me on {PERSONAL['phone']}, refund to IBAN {PERSONAL['iban']}. "
    f"My API key is {PERSONAL['secret']}."
)


def assert_masked(text: str) -> None:
    for kind, value in PERSONAL.items():
        assert value not in text, kind
        assert f"[{kind}]" in text, kind


def ask_over_rest(client, project: Project, question: str) -> dict:  # noqa: ANN001
    response = client.post(
        "/api/v1/ask",
        {"project": project.public_key, "question": question, "topic": "Billing"},
        content_type="application/json",
        HTTP_ORIGIN=ORIGIN,
    )
    assert response.status_code == 200, response.content
    return response.json()


def test_a_question_is_logged_sent_to_the_model_and_embedded_only_masked(
    ollama_project, fake_ollama, client
):
    fake_ollama.tokens = ["You can ask for a refund within 30 days [1]."]
    body = ask_over_rest(client, ollama_project, QUESTION)
    logged = Interaction.objects.get(answer_id=body["answer_id"])
    assert_masked(logged.question)
    assert_masked(logged.retrieval_query)
    (chat,) = fake_ollama.requests_to("/api/chat")
    sent = json.dumps(chat.body)
    assert_masked(json.loads(sent)["messages"][-1]["content"])
    for value in PERSONAL.values():
        assert value not in sent
    # The blind-spot clustering embeds the logged (masked) text, never the raw one.
    Interaction.objects.filter(pk=logged.pk).update(refused=True)
    report = blind_spots(
        project=ollama_project, since=timezone.now() - timedelta(days=1), below=0.5
    )
    assert report.clustered == 1
    embedder_id = runtime.embedder().id
    keys = set(QuestionVector.objects.values_list("key", flat=True))
    assert _key(embedder_id, normalised(logged.question)) in keys
    assert _key(embedder_id, normalised(QUESTION)) not in keys


def test_a_project_that_does_not_mask_keeps_the_text_as_written(demo, client):
    demo.mask_personal_data = False
    demo.save()
    body = ask_over_rest(client, demo, QUESTION)
    assert Interaction.objects.get(answer_id=body["answer_id"]).question == QUESTION


def test_a_projects_own_pattern_is_masked_at_the_intake(demo):
    demo.mask_patterns = [{"label": "account", "pattern": r"ACC-\d{8}"}]
    demo.save()
    caller = intake.Caller(key=demo.public_key, origin=ORIGIN, client="10.1.2.3")
    asked = intake.ask_request(
        {"question": "Why is ACC-12345678 locked? Write to a@b.co"}, project=demo, caller=caller
    )
    assert asked.question == "Why is [account] locked? Write to [email]"


def test_feedback_comments_and_handoff_messages_are_masked(demo, client):
    body = ask_over_rest(client, demo, "How do I get a refund?")
    interaction = Interaction.objects.get(answer_id=body["answer_id"])
    feedback_record(
        interaction=interaction, client_id="c1", vote=-1,
        comment=f"Wrong, mail me at {PERSONAL['email']}",
    )  # fmt: skip
    assert Feedback.objects.get().comment == "Wrong, mail me at [email]"
    demo.contact_support = Project.ContactSupport.EMAIL
    demo.contact_support_target = "support@example.org"
    handed = handoff_request(
        {"conversation_id": body["conversation_id"], "email": PERSONAL["email"],
         "message": f"Call me on {PERSONAL['phone']}"},
        project=demo, caller=intake.Caller(key=demo.public_key, origin=ORIGIN, client="10.0.0.9"),
    )  # fmt: skip
    assert handed.message == "Call me on [phone]"
    assert handed.email == PERSONAL["email"]  # given on purpose, for support to reply


def test_what_a_visitor_asks_to_be_remembered_is_remembered_masked(demo, client):
    visitor = "v" * 24
    response = client.post(
        "/api/v1/ask",
        {"project": demo.public_key, "visitor_id": visitor,
         "question": f"Remember that my billing address is {PERSONAL['email']}, plan Pro"},
        content_type="application/json", HTTP_ORIGIN=ORIGIN,
    )  # fmt: skip
    assert response.status_code == 200, response.content
    stored = list(UserFact.objects.filter(user_key=f"visitor:{visitor}"))
    assert all(PERSONAL["email"] not in fact.text for fact in stored)
    logged = Interaction.objects.get(answer_id=response.json()["answer_id"])
    assert PERSONAL["email"] not in logged.question + logged.answer
