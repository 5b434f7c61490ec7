"""The whole answer path with the Ollama generator, against a local server that speaks
Ollama's API (the only faked part), and the friendly message when it fails."""

from __future__ import annotations

import pytest

from assistant.models import Interaction
from assistant.rag.judge.model_judge import DRAFT_SYSTEM
from assistant.rag.types import SORRY
from assistant.rag.write.prompting import REMINDER
from assistant.wiring import runtime
from tests import asking

pytestmark = pytest.mark.django_db

ORIGIN = "http://127.0.0.1:8000"


def ask_over_rest(client, project, question: str) -> dict:  # noqa: ANN001
    """`POST /api/v1/ask`, the door that answers in one piece; its body."""
    response = client.post(
        "/api/v1/ask",
        {"project": project.public_key, "question": question},
        content_type="application/json",
        HTTP_ORIGIN=ORIGIN,
    )
    assert response.status_code == 200
    return response.json()


def test_it_streams_the_ollama_answer_grounded_in_the_kept_chunks(ollama_project, fake_ollama):
    fake_ollama.tokens = ["You can ", "ask for a refund ", "within 30 days [1]."]
    events = list(
        asking.ask_stream(
            project=ollama_project, question="How do I get my money back?", topic="Billing"
        )
    )
    kinds = [e.kind for e in events]
    # The quote at once, then the written answer, checked sentence by sentence.
    assert kinds[0] == "sources" and kinds[1] == "token"
    assert kinds[-3:] == ["written", "token", "done"]
    quote = "".join(e.data["text"] for e in events[: kinds.index("written")] if e.kind == "token")
    assert "refund within 30 days" in quote
    assert events[-2].data["text"] == "You can ask for a refund within 30 days [1]."
    assert events[-1].data["written"] == "complete" and not events[-1].data["truncated"]
    (chat,) = fake_ollama.requests_to("/api/chat")
    messages = chat.body["messages"]
    assert messages[0]["role"] == "system"
    assert "Getting your money back" in messages[0]["content"]
    assert "general topic: Billing" in messages[0]["content"]
    assert messages[-1]["role"] == "user"
    # The question, then the rules said again where a small model reads them last.
    assert messages[-1]["content"] == f"How do I get my money back?\n\n{REMINDER}"
    logged = Interaction.objects.get(answer_id=events[-1].data["answer_id"])
    assert logged.generator == "ollama:llama3.2" and not logged.refused
    assert logged.answer == "You can ask for a refund within 30 days [1]."
    assert 0 < logged.latency_ms["first_token_ms"] < logged.latency_ms["written_first_ms"]


def test_a_refusal_never_has_ollama_write(ollama_project, fake_ollama):
    result = asking.ask(project=ollama_project, question="Do you offer a student discount?")
    assert result.refused and result.answer == SORRY
    # The model was asked only to draft the question in the documents' terms for a second
    # reading ("The answer is 42." finds nothing), never to write an answer.
    asked = [r.body["messages"][0]["content"] for r in fake_ollama.requests_to("/api/chat")]
    assert asked == [DRAFT_SYSTEM]


def test_a_model_that_finds_nothing_leaves_the_quote_standing(ollama_project, fake_ollama):
    fake_ollama.tokens = ["I'm sorry, I couldn't find ", "an answer to your question."]
    result = asking.ask(project=ollama_project, question="How do I get my money back?")
    assert not result.refused and result.written == "refused"
    assert result.answer == result.quote and "refund within 30 days" in result.answer
    assert result.generator == "extractive"


def test_an_error_mid_stream_keeps_the_quote_with_no_503(ollama_project, fake_ollama, client):
    fake_ollama.tokens = ["Refunds ", "take ", "five ", "days."]
    fake_ollama.error_after = 2
    body = ask_over_rest(client, ollama_project, "How do I get my money back?")
    assert body["written"] == "unavailable" and body["answer"] == body["quote"]
    assert "refund within 30 days" in body["answer"] and body["generator"] == "extractive"
    logged = Interaction.objects.get(project=ollama_project)
    assert logged.error == "" and logged.answer == body["quote"]
    # Half a sentence of the model's never reached anyone.
    assert "Refunds take" not in logged.answer


def test_a_written_sentence_no_passage_backs_is_withheld(ollama_project, fake_ollama):
    fake_ollama.tokens = [
        "Ask for a refund within 30 days [1]. ",
        "Or run `billing-cli refund --fast` to get it sooner [1].",
    ]
    result = asking.ask(project=ollama_project, question="How do I get my money back?")
    assert result.written == "complete"
    assert result.answer == "Ask for a refund within 30 days [1]."


def test_a_written_answer_without_the_command_the_quote_gives_leaves_the_quote_as_the_answer(
    ollama_project, fake_ollama, client
):
    fake_ollama.tokens = ["Install the command-line tool with pip [1]."]
    body = ask_over_rest(client, ollama_project, "How do I install the CLI?")
    assert "pip install" in body["quote"] and "--version" in body["quote"]
    # Complete and grounded, but the reader would not learn the command: the quote answers.
    assert body["written"] == "omits" and body["answer"] == body["quote"]
    logged = Interaction.objects.get(project=ollama_project)
    assert logged.answer == body["quote"] and "--version" in logged.fallback


REFUND = {"question": "How do I get my money back?", "topic": "Billing"}


def test_a_stalled_server_falls_back_to_quoting_the_passages_after_the_first_token_timeout(
    ollama_project, fake_ollama
):
    fake_ollama.stall_before_first_token = 5.0
    result = asking.ask(project=ollama_project, **REFUND)
    # The passages were found: the user gets them quoted, with their citation, not an error.
    assert result.error == "" and not result.refused
    assert "refund within 30 days" in result.answer and result.answer.rstrip().endswith("[1]")
    assert result.generator == "extractive"
    assert result.fallback == "unavailable"  # the server's own words are for the log only
    assert result.sources[0]["title"] == "Refunds and returns > Getting your money back"
    logged = Interaction.objects.get(project=ollama_project)
    assert (logged.generator, logged.error) == ("extractive", "")
    assert logged.fallback.startswith("ollama:llama3.2 unavailable")
    # It gave up after the 0.5 s first-token timeout, not after the 5 s stall.
    assert logged.latency_ms["generate_ms"] < 4000


def test_a_server_that_is_down_falls_back_over_rest_and_says_so(ollama_project, settings, client):
    from tests.fake_ollama import unused_url

    settings.OLLAMA_HOST = unused_url()
    runtime.reset()
    response = client.post(
        "/api/v1/ask", {"project": ollama_project.public_key, **REFUND},
        content_type="application/json", HTTP_ORIGIN=ORIGIN,
    )  # fmt: skip
    assert response.status_code == 200
    body = response.json()
    assert "refund within 30 days" in body["answer"] and not body["refused"]
    assert body["generator"] == "extractive" and "unavailable" in body["fallback"]


def test_the_answerability_check_guards_ollama_only_when_the_project_asks(
    ollama_project, fake_ollama
):
    fake_ollama.tokens = ["Ask for a refund [1]."]
    asked = {"question": "How do I get my money back?", "topic": "Billing"}
    first = asking.ask(project=ollama_project, **asked)
    # Judged either way (it decides whether a quote comes first), refusing only when asked.
    assert Interaction.objects.get(answer_id=first.answer_id).answerability["answerable"]

    ollama_project.check_llm_answers = True
    ollama_project.save()
    second = asking.ask(project=ollama_project, **asked)
    check = Interaction.objects.get(answer_id=second.answer_id).answerability
    assert check["answerable"] is True and check["reason"] == ""
    assert "refund" in check["best_sentence"].lower()
    assert len(fake_ollama.requests_to("/api/chat")) == 2
