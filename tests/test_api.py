"""The HTTP API with the real pipeline on the demo content."""

from __future__ import annotations

import json

import pytest

from assistant.models import Interaction, Project
from assistant.rag.types import SORRY
from tests.conftest import secret_of

pytestmark = pytest.mark.django_db

ORIGIN = "http://127.0.0.1:8000"


def post(client, path, body, **headers):  # noqa: ANN001, ANN201
    data = body if isinstance(body, str) else json.dumps(body)
    return client.post(path, data, content_type="application/json", **headers)


def ask(client, project, **body):  # noqa: ANN001, ANN201
    return post(client, "/api/v1/ask", {"project": project.public_key, **body}, HTTP_ORIGIN=ORIGIN)


def test_it_answers_the_refund_question_from_the_refund_document(client, demo):
    response = ask(client, demo, question="How do I get my money back?", topic="Billing")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["refused"] is False
    assert "refund" in body["answer"].lower()
    assert body["sources"][0]["url"].startswith("https://help.acme.example/refunds")
    assert body["sources"][0]["relevance"] >= 0.5
    logged = Interaction.objects.get(answer_id=body["answer_id"])
    assert logged.channel == "api" and logged.topic == "Billing"
    assert logged.retrieval_query == "(Billing) How do I get my money back?"
    assert logged.kept_count == len(body["sources"])
    assert {"embed_ms", "search_ms", "rerank_ms", "total_ms"} <= set(logged.latency_ms)
    assert len(logged.candidates) > logged.kept_count
    assert all({"similarity", "relevance", "kept"} <= set(c) for c in logged.candidates)


def test_it_refuses_the_student_discount_question(client, demo):
    response = ask(client, demo, question="Do you offer a student discount?")
    body = response.json()
    assert response.status_code == 200
    assert body == {
        "answer_id": body["answer_id"], "answer": SORRY, "refused": True, "sources": [],
        "conversation_id": body["conversation_id"], "generator": "", "fallback": "",
        "related": [],  # nothing on the subject: no page is offered
        "quote": "", "written": "", "truncated": False,
    }  # fmt: skip
    logged = Interaction.objects.get(answer_id=body["answer_id"])
    assert logged.refused and logged.generator == "" and logged.best_relevance < 0.5
    assert logged.related == []


def test_a_refusal_on_the_subject_offers_the_nearest_pages_never_as_the_answer(client, demo):
    # The invoices passage passes the gate but does not say whether cheques are accepted:
    # the answerability check refuses, and the visitor is pointed at the nearest pages.
    body = ask(client, demo, question="Can I pay my invoice by cheque?").json()
    assert body["refused"] is True and body["answer"] == SORRY and body["sources"] == []
    related = body["related"]
    assert 1 <= len(related) <= 3
    assert related[0]["url"] == "https://help.acme.example/plans#invoices-and-payment-methods"
    assert related[0]["title"] == "Plans and billing > Invoices and payment methods"
    pages = [page["url"].split("#")[0] for page in related]
    assert len(pages) == len(set(pages))  # one link per page
    assert [p["relevance"] for p in related] == sorted((p["relevance"] for p in related),
                                                       reverse=True)  # fmt: skip
    logged = Interaction.objects.get(answer_id=body["answer_id"])
    assert logged.related == related and logged.sources == []


def test_an_answer_offers_no_related_pages(client, demo):
    body = ask(client, demo, question="How do I get my money back?", topic="Billing").json()
    assert body["refused"] is False and body["related"] == []


def test_the_project_key_can_travel_in_a_header(client, demo):
    response = post(
        client, "/api/v1/ask", {"question": "How do I rotate an API key?"},
        HTTP_ORIGIN=ORIGIN, HTTP_X_PROJECT_KEY=demo.public_key,
    )  # fmt: skip
    assert response.status_code == 200
    assert response.json()["sources"][0]["url"].startswith("https://help.acme.example/api-keys")


@pytest.mark.parametrize(
    ("body", "code", "fields"),
    [
        ({"question": ""}, "invalid", {"question"}),
        ({"question": "x" * 2001}, "question_too_long", {"question"}),
        ({"topic": "Billing"}, "invalid", {"question"}),
        ({"question": "ok", "topic": "t" * 201}, "invalid", {"topic"}),
        ({"question": 42.5, "topic": ["a"]}, "invalid", {"question", "topic"}),
    ],
)
def test_it_rejects_bad_questions_with_field_errors(client, demo, body, code, fields):
    before = Interaction.objects.count()
    response = post(client, "/api/v1/ask", {"project": demo.public_key, **body}, HTTP_ORIGIN=ORIGIN)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == code and set(error["fields"]) == fields
    assert Interaction.objects.count() == before


def test_it_rejects_malformed_json(client, demo):
    response = post(client, "/api/v1/ask", '{"question": "hi",', HTTP_ORIGIN=ORIGIN)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "malformed_json"


def test_it_rejects_a_form_body(client, demo):
    response = client.post("/api/v1/ask", {"question": "hi"}, HTTP_ORIGIN=ORIGIN)
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"


def test_it_rejects_an_unknown_project_key(client, demo):
    response = post(
        client, "/api/v1/ask", {"project": "pk_nope", "question": "Hi?"}, HTTP_ORIGIN=ORIGIN
    )
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unknown_project"


def test_it_rejects_an_origin_the_project_does_not_allow(client, demo):
    response = post(
        client, "/api/v1/ask", {"project": demo.public_key, "question": "Refund?"},
        HTTP_ORIGIN="https://evil.example",
    )  # fmt: skip
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "origin_not_allowed"
    assert not Interaction.objects.exists()


def test_without_an_origin_it_needs_the_secret_key(client, demo):
    body = {"project": demo.public_key, "question": "How do I get my money back?"}
    refused = post(client, "/api/v1/ask", body)
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "origin_required"
    wrong = post(client, "/api/v1/ask", body, HTTP_AUTHORIZATION="Bearer sk_wrong")
    assert wrong.status_code == 403
    ok = post(client, "/api/v1/ask", body, HTTP_AUTHORIZATION=f"Bearer {secret_of(demo)}")
    assert ok.status_code == 200
    # A prefix, the digest that is stored, or the key with a changed last letter: refused.
    for almost in (secret_of(demo)[:-1], demo.secret_key_digest, secret_of(demo)[:-1] + "?"):
        near = post(client, "/api/v1/ask", body, HTTP_AUTHORIZATION=f"Bearer {almost}")
        assert near.status_code == 403


def test_cors_preflight_is_allowed_only_for_a_known_origin(client, demo):
    allowed = client.options(
        "/api/v1/ask", HTTP_ORIGIN=ORIGIN, HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST"
    )
    assert allowed["Access-Control-Allow-Origin"] == ORIGIN
    denied = client.options(
        "/api/v1/ask", HTTP_ORIGIN="https://evil.example", HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST"
    )
    assert "Access-Control-Allow-Origin" not in denied


@pytest.mark.parametrize(
    "origin",
    ["http://evil.example@127.0.0.1:8000", "http://a:b@127.0.0.1:8000", "http://127.0.0.1:8001",
     "https://127.0.0.1:8000", "http://127.0.0.1:8000/path", "http://127.0.0.1:8000%2F"],
)  # fmt: skip
def test_only_the_whole_allowed_origin_gets_a_preflight_or_suggestions(client, demo, origin):
    """Scheme, host and port are compared as a whole, and a user part is refused: `hostname`
    alone reads http://evil.example@127.0.0.1:8000 as 127.0.0.1."""
    preflight = client.options(
        "/api/v1/suggestions", HTTP_ORIGIN=origin, HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST"
    )
    assert "Access-Control-Allow-Origin" not in preflight
    suggestions = post(client, "/api/v1/suggestions", {"project": demo.public_key},
                       HTTP_ORIGIN=origin)  # fmt: skip
    assert suggestions.status_code == 403
    assert suggestions.json()["error"]["code"] == "origin_not_allowed"


def test_an_origin_with_a_user_part_cannot_be_allowed(demo):
    from django.core.exceptions import ValidationError

    demo.allowed_origins = ["https://user@app.example.com"]
    with pytest.raises(ValidationError):
        demo.full_clean()


def test_an_origin_stored_before_the_rules_were_tightened_lets_nothing_in_and_breaks_nothing(
    client, demo
):
    # Saved by an older version, which kept only the hostname: today's rules refuse it.
    type(demo).objects.filter(pk=demo.pk).update(
        allowed_origins=["http://evil.example@127.0.0.1:8000", *demo.allowed_origins]
    )
    demo.refresh_from_db()
    assert not demo.allows_origin("http://evil.example@127.0.0.1:8000")
    assert demo.allows_origin("http://127.0.0.1:8000")  # the project's other origins still work
    answer = post(client, "/api/v1/suggestions", {"project": demo.public_key},
                  HTTP_ORIGIN="http://127.0.0.1:8000")  # fmt: skip
    assert answer.status_code == 200


def test_a_new_origin_is_allowed_as_soon_as_it_is_saved(client, demo):
    demo.allowed_origins = [*demo.allowed_origins, "https://app.example.com"]
    demo.save()
    response = client.options(
        "/api/v1/ask", HTTP_ORIGIN="https://app.example.com",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
    )  # fmt: skip
    assert response["Access-Control-Allow-Origin"] == "https://app.example.com"


def test_retrieve_returns_scored_chunks(client, demo):
    response = post(
        client, "/api/v1/retrieve",
        {"project": demo.public_key, "question": "When does it expire?",
         "topic": "Retrieval endpoint token management", "num_results": 3},
        HTTP_ORIGIN=ORIGIN,
    )  # fmt: skip
    assert response.status_code == 200
    body = response.json()
    assert body["query"] == "(Retrieval endpoint token management) When does it expire?"
    assert len(body["chunks"]) == 3
    top = body["chunks"][0]
    assert "Token expiry" in top["title"] and top["relevant"] is True
    assert top["relevance"] >= 0.5 and 0 < top["similarity"] <= 1
    assert [c["relevance"] for c in body["chunks"]] == sorted(
        [c["relevance"] for c in body["chunks"]], reverse=True
    )


def test_retrieve_without_rerank_orders_by_similarity(client, demo):
    response = post(
        client, "/api/v1/retrieve",
        {"project": demo.public_key, "question": "refund", "rerank": False, "num_results": 4},
        HTTP_ORIGIN=ORIGIN,
    )  # fmt: skip
    chunks = response.json()["chunks"]
    assert all(c["relevance"] is None for c in chunks)
    assert [c["similarity"] for c in chunks] == sorted(
        [c["similarity"] for c in chunks], reverse=True
    )


def test_retrieve_validates_num_results(client, demo):
    response = post(
        client, "/api/v1/retrieve",
        {"project": demo.public_key, "question": "refund", "num_results": 500},
        HTTP_ORIGIN=ORIGIN,
    )  # fmt: skip
    assert response.status_code == 400
    assert "num_results" in response.json()["error"]["fields"]


def test_projects_do_not_see_each_others_documents(client, demo):
    other = Project.objects.create(name="Other", allowed_origins=[ORIGIN])
    response = ask(client, other, question="How do I get my money back?", topic="Billing")
    assert response.json()["refused"] is True
    assert Interaction.objects.get(project=other).candidates == []


def test_unknown_api_paths_answer_json(client):
    response = client.get("/api/v1/nope")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_the_openapi_schema_is_served(client):
    response = client.get("/api/v1/schema", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    assert b"/api/v1/ask" in response.content and b"/api/v1/retrieve" in response.content


def logged(project, question, topic="Billing", asker="a1", **fields):  # noqa: ANN001, ANN201
    defaults = {"retrieval_query": question, "answer": "An answer [1].", "generator": "extractive",
                "conversation_id": f"c-{asker}"}  # fmt: skip
    return Interaction.objects.create(
        project=project, question=question, topic=topic, asker=asker, **{**defaults, **fields}
    )


def test_suggestions_are_the_topics_questions_answered_well_for_several_askers(client, demo):
    from feedback.models import Feedback

    for asker in ("a1", "a2", "a3", "a4"):
        logged(demo, "How long do refunds take?", asker=asker)
    logged(demo, "how long do refunds take", asker="a5")  # the same question
    for asker in ("a1", "a2", "a3"):
        logged(demo, "Can I pay by invoice?", asker=asker)
        logged(demo, "Is there a student discount?", asker=asker, refused=True, answer=SORRY)
        logged(demo, "What is a token?", topic="Tokens", asker=asker)
        disliked = logged(demo, "Why was I charged twice?", asker=asker)
        Feedback.objects.create(interaction=disliked, client_id=f"client-{asker}", vote=-1)
    logged(demo, "What about my order 12345?", asker="a1")
    logged(demo, "What about my order 12345?", asker="a2")  # two askers: not yet several
    for conversation in range(6):  # one asker, many conversations: still one visitor
        logged(demo, "My order 12345 for Jane Doe?", asker="a1", conversation_id=f"c{conversation}")
    for _ in range(3):  # asked where nobody is known (console, command line)
        logged(demo, "Staff test question?", asker="")

    response = post(client, "/api/v1/suggestions", {"project": demo.public_key, "topic": "Billing"},
                    HTTP_ORIGIN="http://127.0.0.1:8000")  # fmt: skip
    assert response.status_code == 200, response.content
    assert response.json() == {"questions": ["How long do refunds take?", "Can I pay by invoice?"]}
    other = post(client, "/api/v1/suggestions", {"project": demo.public_key, "topic": "Billing"},
                 HTTP_ORIGIN="https://evil.example")  # fmt: skip
    assert other.status_code == 403


def test_one_visitor_asking_in_many_conversations_is_not_suggested_to_others(client, demo):
    """Through the API: the same client address in new conversations (and with new made-up
    visitor ids) stays one asker; three addresses are three."""
    planted = "How do I get my money back?"
    for n in range(4):
        visitor = f"visitor-{n}-" + "v" * 16
        response = post(
            client, "/api/v1/ask",
            {"project": demo.public_key, "question": planted, "topic": "Billing",
             "visitor_id": visitor},
            HTTP_ORIGIN=ORIGIN, REMOTE_ADDR="203.0.113.7",
        )  # fmt: skip
        assert response.status_code == 200 and not response.json()["refused"], response.json()

    def suggestions() -> list[str]:
        return post(client, "/api/v1/suggestions", {"project": demo.public_key, "topic": "Billing"},
                    HTTP_ORIGIN=ORIGIN).json()["questions"]  # fmt: skip

    assert suggestions() == []
    for address in ("198.51.100.1", "198.51.100.2"):
        post(client, "/api/v1/ask", {"project": demo.public_key, "question": planted,
             "topic": "Billing"}, HTTP_ORIGIN=ORIGIN, REMOTE_ADDR=address)  # fmt: skip
    assert suggestions() == [planted]
    assert "203.0.113.7" not in {i.asker for i in Interaction.objects.all()}  # hashed


def test_the_secret_key_is_not_stored_and_user_hashes_still_verify(demo):
    """Only its digest, last four characters and a copy sealed with the site's key are kept;
    a host server's user hash, keyed by the secret key, still verifies."""
    import hashlib
    import hmac

    from assistant.memory.identity import user_hash

    secret = secret_of(demo)
    row = Project.objects.filter(pk=demo.pk).values().get()
    assert not any(secret in str(value) for value in row.values())
    assert row["secret_key_digest"] == hashlib.sha256(secret.encode()).hexdigest()
    assert demo.secret_key_hint == f"sk_…{secret[-4:]}"
    fresh = Project.objects.get(pk=demo.pk)
    expected = hmac.new(secret.encode(), b"42", hashlib.sha256).hexdigest()
    assert user_hash(fresh, "42") == expected


def test_a_secret_sealed_under_a_forgotten_site_key_refuses_user_hashes(client, demo, settings):
    import hashlib
    import hmac

    secret, old_site_key = secret_of(demo), settings.SECRET_KEY
    signed = hmac.new(secret.encode(), b"42", hashlib.sha256).hexdigest()
    body = {"question": "How do I get my money back?", "user_id": "42", "user_hash": signed}
    settings.SECRET_KEY = "another-site-key-" + "x" * 40
    refused = ask(client, demo, **body)
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "invalid_identity"
    settings.SECRET_KEY_FALLBACKS = [old_site_key]  # rotated the way Django rotates it
    assert ask(client, demo, **body).status_code == 200


def test_a_project_is_found_by_its_secret_key_alone(demo):
    """For doors that name no public key (an AI tool's Bearer secret key)."""
    from assistant.ask.selectors import project_by_secret_key

    secret = secret_of(demo)
    assert project_by_secret_key(secret) == demo
    for wrong in ("", "sk_", secret[:-1], demo.secret_key_digest, "pk_" + secret[3:]):
        assert project_by_secret_key(wrong) is None
