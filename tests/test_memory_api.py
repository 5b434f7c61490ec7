"""Memory over HTTP: the ask API's identities, the secret-key memory API, the admin action."""

from __future__ import annotations

import json
import uuid

import pytest
from django.contrib.auth.models import User

from assistant.memory.identity import user_hash
from assistant.memory.models import UserFact
from assistant.memory.services import memory_facts, memory_remember
from assistant.models import Project
from assistant.wiring import runtime
from tests import asking
from tests.conftest import secret_of

pytestmark = pytest.mark.django_db

ORIGIN = "http://127.0.0.1:8000"


def post(client, path, body, **headers):  # noqa: ANN001, ANN201
    return client.post(path, json.dumps(body), content_type="application/json", **headers)


def bearer(project: Project) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret_of(project)}"}


def vectors_of(project: Project, user: str) -> set[str]:
    return runtime.memory_store().ids({"project_id": project.id, "user_key": user})


def test_a_browser_visitor_remembers_and_recalls_through_the_ask_api(client, demo):
    visitor = uuid.uuid4().hex
    body = {"project": demo.public_key, "visitor_id": visitor}
    said = post(client, "/api/v1/ask", {**body, "question": "remember I deploy on Kubernetes"},
                HTTP_ORIGIN=ORIGIN)  # fmt: skip
    assert said.status_code == 200 and said.json()["answer"].startswith("Got it")
    recalled = post(client, "/api/v1/ask", {**body, "question": "What do you remember about me?"},
                    HTTP_ORIGIN=ORIGIN)  # fmt: skip
    assert recalled.json()["answer"] == (
        "Here is what I remember about you:\n- I deploy on Kubernetes"
    )
    assert [f.text for f in memory_facts(project=demo, user_key=f"visitor:{visitor}")] == [
        "I deploy on Kubernetes"
    ]


@pytest.mark.parametrize(
    ("identity", "message"),
    [
        ({"visitor_id": "short"}, "visitor id"),
        ({"user_id": "42", "user_hash": "0" * 64}, "does not match"),
        ({"user_id": "42"}, "does not match"),
        ({"user": "user:42"}, "secret key"),
    ],
)
def test_it_refuses_an_identity_it_cannot_trust(client, demo, identity, message):
    secret_of(demo)  # the project has a secret key to check user hashes with
    response = post(
        client, "/api/v1/ask", {"project": demo.public_key, "question": "remember I like tea",
                                **identity}, HTTP_ORIGIN=ORIGIN,
    )  # fmt: skip
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_identity"
    assert message in response.json()["error"]["message"]
    assert not UserFact.objects.filter(project=demo).exists()


def test_a_signed_in_user_is_proven_by_the_hash_of_the_host_server(client, demo):
    secret_of(demo)
    user_id = f"u-{uuid.uuid4().hex[:8]}"
    body = {"project": demo.public_key, "user_id": user_id,
            "user_hash": user_hash(demo, user_id), "question": "remember I like tea"}  # fmt: skip
    assert post(client, "/api/v1/ask", body, HTTP_ORIGIN=ORIGIN).status_code == 200
    assert [f.text for f in memory_facts(project=demo, user_key=f"user:{user_id}")] == [
        "I like tea"
    ]


def test_the_memory_api_lists_adds_and_erases_with_the_secret_key_only(client, demo):
    user = f"sms:+1555{uuid.uuid4().int % 10**7:07d}"
    query = {"project": demo.public_key, "user": user}
    # The public key from an allowed origin is not enough: memory is personal.
    refused = client.get("/api/v1/memory/facts", query, HTTP_ORIGIN=ORIGIN)
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "secret_key_required"

    added = post(client, "/api/v1/memory/facts", {**query, "text": "I'm on the Team plan"},
                 **bearer(demo))  # fmt: skip
    assert added.status_code == 201 and added.json()["merged"] is False
    again = post(client, "/api/v1/memory/facts", {**query, "text": "I am on the team plan."},
                 **bearer(demo))  # fmt: skip
    assert again.status_code == 200 and again.json()["merged"] is True
    bad = post(client, "/api/v1/memory/facts", {**query, "text": "mail me at a@b.example"},
               **bearer(demo))  # fmt: skip
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "fact_refused"

    listed = client.get("/api/v1/memory/facts", query, **bearer(demo)).json()
    assert [f["text"] for f in listed["facts"]] == ["I am on the team plan"]
    assert len(vectors_of(demo, user)) == 1

    erased = post(client, "/api/v1/memory/erase", query, **bearer(demo))
    assert erased.json() == {"user": user, "deleted": 1}
    assert memory_facts(project=demo, user_key=user) == []
    assert vectors_of(demo, user) == set()


def test_the_memory_api_refuses_a_malformed_user(client, demo):
    response = post(client, "/api/v1/memory/erase", {"project": demo.public_key, "user": "bob"},
                    **bearer(demo))  # fmt: skip
    assert response.status_code == 400 and "user" in response.json()["error"]["fields"]


def test_the_admin_action_erases_the_selected_users_memory_with_its_vectors(client, demo):
    admin = User.objects.create_superuser("admin", "a@example.com", "pw-for-tests-only")
    client.force_login(admin)
    user, other = f"visitor:{uuid.uuid4().hex}", f"visitor:{uuid.uuid4().hex}"
    first = memory_remember(project=demo, user_key=user, text="I deploy on Kubernetes").fact
    memory_remember(project=demo, user_key=user, text="I like sci-fi books")
    memory_remember(project=demo, user_key=other, text="I like sci-fi books")
    response = client.post(
        "/django-admin/assistant/userfact/",
        {"action": "erase_users_memory", "_selected_action": [first.pk]},
        follow=True,
    )
    assert response.status_code == 200
    assert "Erased 2 facts of 1 user(s)" in response.content.decode()
    assert memory_facts(project=demo, user_key=user) == []
    assert vectors_of(demo, user) == set()
    assert len(memory_facts(project=demo, user_key=other)) == 1


def test_the_admin_shows_the_injection_rate_and_the_similarity_distribution(client, demo):

    admin = User.objects.create_superuser("admin", "a@example.com", "pw-for-tests-only")
    client.force_login(admin)
    user = f"visitor:{uuid.uuid4().hex}"
    memory_remember(project=demo, user_key=user, text="I'm on the Enterprise plan")
    asking.ask(project=demo, question="How do I pay for my plan?", user_key=user)
    asking.ask(project=demo, question="How do I get a refund?", user_key=user)
    page = client.get(f"/django-admin/assistant/userfact/?project__id__exact={demo.pk}")
    assert page.status_code == 200
    metrics = page.context["memory_metrics"]
    assert (metrics.with_memory, metrics.injected, metrics.injection_rate) == (2, 1, 0.5)
    assert sum(compared for _, _, compared, _ in metrics.distribution) == 2
    assert sum(injected for *_, injected in metrics.distribution) == 1
    assert "<strong>50%</strong>" in page.content.decode()


@pytest.mark.parametrize("text", [5, 5.5, True, ["a fact"], {"text": "a fact"}])
def test_the_memory_api_takes_a_fact_as_text_only(client, demo, text):
    response = post(
        client, "/api/v1/memory/facts", {"project": demo.public_key, "user": "visitor:" + "v" * 20,
                                         "text": text}, **bearer(demo),
    )  # fmt: skip
    assert response.status_code == 400, response.content
    assert "text" in response.json()["error"]["fields"]
    assert not UserFact.objects.exists()
