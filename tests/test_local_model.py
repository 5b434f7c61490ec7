"""The real local model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, through llama.cpp) writing
answers under the product's prompt rules. `.bin/test` fetches the file first (manage.py
fetch_model, checked against the publisher's SHA-256). Each answer takes seconds on two cores,
so the prompts are small; the model loads once for the module."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import replace

import pytest
from channels.testing import WebsocketCommunicator
from django.conf import settings as django_settings

from assistant.models import Interaction
from assistant.rag.answer import Fallback, is_refusal
from assistant.rag.answering import Pipeline
from assistant.rag.types import SORRY, Candidate, Chunk, Question, Retrieval, Turn, Waiting
from assistant.rag.write.prompting import build_prompt
from assistant.wiring import runtime
from assistant.wiring.adapters.local_llm import LocalGenerator
from tests import asking

pytestmark = pytest.mark.local_model

_MARKER = re.compile(r"\[(\d+)\]")


@pytest.fixture(scope="module")
def model() -> LocalGenerator:
    if not django_settings.ASKDOCS_LOCAL_MODEL.is_file():
        message = "the local model is not fetched: .venv/bin/python manage.py fetch_model"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    runtime.reset()
    generator = runtime.local_generator()
    generator.model.server()  # load once, outside the timings of each test
    return generator


def passages(*texts: tuple[str, str]) -> list[Candidate]:
    return [
        # Scored as the cross-encoder scores a passage that answers (the check reads it).
        Candidate(
            Chunk(id=f"c{n}", text=text, title=title), similarity=0.8, relevance=0.999, kept=True
        )
        for n, (title, text) in enumerate(texts, start=1)
    ]


def write(model: LocalGenerator, question: Question, kept: list[Candidate]) -> str:
    parts = list(model.stream(build_prompt(question, kept)))
    assert all(isinstance(p, str | Waiting) for p in parts)
    return "".join(p for p in parts if isinstance(p, str))


def cited_numbers(text: str) -> set[int]:
    return {int(n) for n in _MARKER.findall(text)}


REFUNDS = (
    "Refunds > Getting your money back",
    "You can get a refund within 30 days of purchase. Open Billing > Invoices, pick the "
    "invoice and press Request refund. Refunds reach your card in 5 to 10 business days.",
)
EXPORT = (
    "Exporting your data > How long an export takes",
    "Exports run in the background. Small workspaces finish within minutes; large ones may "
    "take up to an hour. You receive an e-mail with a download link when it is ready.",
)


@pytest.mark.django_db(transaction=True)
def test_it_writes_a_grounded_answer_that_cites_its_passage(model, settings):  # noqa: ANN001
    from assistant.demo import demo_seed

    settings.ASKDOCS_WRITE_WITHIN = 0  # wait for the written answer, however busy the machine
    project = demo_seed().project
    project.generator = "local"
    project.save()

    result = asking.ask(project=project, question="How do I get my money back?", topic="Billing")

    assert result.generator == model.id and not result.fallback and not result.refused
    assert result.written == "complete" and result.quote != result.answer
    assert "[1]" in result.answer
    assert re.search(r"30 days|5 to 10 business days|Request refund", result.answer)
    assert cited_numbers(result.answer) <= {s["n"] for s in result.sources}
    logged = Interaction.objects.get(answer_id=result.answer_id)
    assert logged.latency_ms["first_token_ms"] > 0 and logged.generator == model.id


def test_it_answers_with_the_exact_sorry_sentence_when_the_texts_do_not_answer(model):  # noqa: ANN001
    text = write(model, Question("Do you offer a student discount?", "Billing"), passages(REFUNDS))
    assert text.strip() == SORRY


def test_it_never_names_a_person_from_a_support_thread(model):  # noqa: ANN001
    thread = (
        "Support thread: password reset",
        "Maria Lopez asked: I forgot my password, what now? Answer from Daniel Okafor: open "
        "the sign-in page, press Forgot password and follow the link in the e-mail within an "
        "hour.",
    )
    text = write(model, Question("How do I reset my password?", "Account"), passages(thread))

    assert "Forgot password" in text
    assert not re.search(r"Maria|Lopez|Daniel|Okafor", text)


def test_a_follow_up_is_answered_from_the_conversation(model):  # noqa: ANN001
    history = (
        Turn("user", "How do I export my data?"),
        Turn("assistant", "Open Settings > Export and press Start export [1]."),
    )
    text = write(model, Question("How long does it take?", "", history), passages(EXPORT))

    assert re.search(r"minutes|hour", text)
    assert not is_refusal(text)


def test_citations_name_only_passages_that_were_given(model):  # noqa: ANN001
    kept = passages(REFUNDS, EXPORT)
    answers = [
        write(model, Question(question), kept)
        for question in (
            "How long do refunds take?",
            "How do I get my money back and how long does an export take?",
        )  # fmt: skip
    ]
    for text in answers:
        assert cited_numbers(text), text
        assert cited_numbers(text) <= {1, 2}, text


def test_a_question_waits_its_turn_and_hears_its_place(model):  # noqa: ANN001
    # A line of its own, with time enough on a busy machine.
    model = LocalGenerator(replace(model.settings, first_token_timeout=900), model=model.model)
    prompt = build_prompt(Question("How long do refunds take?"), passages(REFUNDS))
    first = model.stream(prompt)
    assert isinstance(next(first), Waiting)  # the model is reading its prompt
    second = model.stream(prompt)
    assert next(second) == Waiting(ahead=1)
    first.close()  # its visitor left: the model stops, and the next one is answered

    parts = list(second)
    assert any(isinstance(p, str) for p in parts)
    assert model.waiting == 0


def test_an_answer_that_does_not_start_in_time_is_quoted_instead(model):  # noqa: ANN001
    hurried = LocalGenerator(replace(model.settings, first_token_timeout=0.5), model=model.model)
    pipeline = Pipeline(
        retriever=None,  # type: ignore[arg-type]  # respond() starts after retrieval
        generator=hurried,
        fallback=Fallback(runtime.extractive_generator(), runtime.answerability()),
    )

    # A prompt no earlier test sent, so the model has to read it (none of it is cached).
    kept = passages(REFUNDS, EXPORT, (REFUNDS[0] + " (copy)", REFUNDS[1]))
    answer = pipeline.respond(Question("How many days do refunds take?"), Retrieval("q", kept))

    reading = answer.read()
    text = reading.text
    assert reading.outcome.generator == "extractive"
    assert "no first token within 0.5 s" in reading.outcome.fallback
    assert "5 to 10 business days" in text
    assert _wait_until(lambda: hurried.waiting == 0)


def _wait_until(condition, seconds: float = 30) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


@pytest.mark.django_db(transaction=True)
async def test_a_closed_socket_stops_the_model(model):  # noqa: ANN001
    from asgiref.sync import sync_to_async

    from assistant.demo import demo_seed
    from config.asgi import application

    @sync_to_async
    def local_demo():  # noqa: ANN202
        project = demo_seed().project
        project.generator = "local"
        project.save()
        return project

    project = await local_demo()
    socket = WebsocketCommunicator(
        application, f"/ws/ask/?project={project.public_key}",
        headers=[(b"origin", b"http://127.0.0.1:8000")],
    )  # fmt: skip
    socket.scope["client"] = ("127.0.0.1", 50000)
    assert (await socket.connect())[0]
    await socket.send_to(text_data=json.dumps({"question": "How do I get my money back?",
                                                "topic": "Billing"}))  # fmt: skip
    kinds = []
    while "waiting" not in kinds:
        kinds.append(json.loads(await socket.receive_from(timeout=60))["type"])
    assert kinds[0] == "sources"  # then the quote, then the written answer's wait
    assert model.waiting == 1
    await socket.disconnect()

    # llama.cpp stops at its next chunk (one batch of the prompt), and the line empties.
    stopped = await sync_to_async(_wait_until)(lambda: model.waiting == 0, 20)
    assert stopped
    logged = await sync_to_async(
        lambda: Interaction.objects.filter(project=project).latest("created_at")
    )()
    assert logged.error == "cancelled" and "30 days" in logged.answer  # the quote stood
    assert threading.active_count() < 100
