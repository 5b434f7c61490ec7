"""The `openai` generator against a real OpenAI-compatible server: llama.cpp's own, from the
`xllamacpp` package, in a process of its own on a loopback port, with an API key, serving the
model the local generator uses (Qwen2.5-Coder-1.5B-Instruct). Each answer takes seconds on two
cores, so answers are short and the server starts once for the module. The edges a real server
does not show on demand are in test_openai_edges.py."""

from __future__ import annotations

import logging
import os
import re
import secrets
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest
from django.conf import settings as django_settings

from assistant.models import Interaction
from assistant.rag.types import SORRY, Prompt, Question, Turn
from assistant.rag.write.prompting import build_prompt
from assistant.wiring import generators, runtime
from assistant.wiring.adapters.openai_chat import OpenAIEndpoint, OpenAIGenerator
from assistant.wiring.resilience import reset_circuits
from tests import asking
from tests.llama_server import is_processing, start_llama_server, tokens_written
from tests.servers import stop
from tests.test_local_model import REFUNDS, passages

# The server is a project's own, on a loopback port: reached only because the tests allow it.
pytestmark = [pytest.mark.local_model, pytest.mark.usefixtures("allow_loopback")]

REFUND = {"question": "How do I get my money back?", "topic": "Billing"}


class Llama:
    def __init__(self, url: str, api_key: str) -> None:
        self.url = url
        self.api_key = api_key

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def idle(self, seconds: float = 120) -> bool:
        """Whether the server has stopped working (waiting at most `seconds` for it)."""
        deadline = time.monotonic() + seconds
        while is_processing(self.url, self.api_key) and time.monotonic() < deadline:
            time.sleep(0.2)
        return not is_processing(self.url, self.api_key)

    def tokens_written(self) -> int:
        return tokens_written(self.url, self.api_key)


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Llama]:
    model = django_settings.ASKDOCS_LOCAL_MODEL
    if not model.is_file():
        message = "the local model is not fetched: .venv/bin/python manage.py fetch_model"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    key = secrets.token_urlsafe(24)
    log = tmp_path_factory.mktemp("llama") / "llama-server.log"
    server, url = start_llama_server(model, api_key=key, log_path=log)
    yield Llama(url, key)
    stop(server)


@pytest.fixture
def openai_project(demo, llama, settings):  # noqa: ANN001, ANN201
    settings.ASKDOCS_OPENAI_BASE_URL = ""
    settings.ASKDOCS_OPENAI_MAX_TOKENS = 80
    settings.ASKDOCS_OPENAI_PASSAGES = 2
    settings.ASKDOCS_OPENAI_TIMEOUTS = {
        "connect": 2.0,
        "first_token": 120.0,
        "between_tokens": 30.0,
    }
    settings.ASKDOCS_WRITE_WITHIN = 0  # wait for the written answer, however busy the machine
    runtime.reset()
    reset_circuits()
    demo.generator = "openai"
    demo.openai_base_url = llama.base_url
    demo.openai_model = "qwen2.5-coder-1.5b"
    demo.set_openai_api_key(llama.api_key)
    demo.save()
    yield demo
    runtime.reset()
    reset_circuits()


def test_it_writes_a_grounded_answer_that_cites_its_passage(openai_project, llama, caplog):
    caplog.set_level(logging.DEBUG)
    result = asking.ask(project=openai_project, **REFUND)

    assert result.generator == "openai:qwen2.5-coder-1.5b"
    assert not result.fallback and not result.refused
    assert "[1]" in result.answer
    assert re.search(r"30 days|5 to 10 business days|Request refund", result.answer)
    logged = Interaction.objects.get(answer_id=result.answer_id)
    assert logged.latency_ms["first_token_ms"] > 0 and logged.generator == result.generator
    assert llama.api_key not in caplog.text


def test_it_answers_with_the_exact_sorry_sentence_when_the_texts_do_not_answer(llama):
    generator = OpenAIGenerator(
        OpenAIEndpoint(llama.base_url, api_key=llama.api_key, max_tokens=40)
    )
    prompt = build_prompt(
        Question("Do you offer a student discount?", "Billing"), passages(REFUNDS)
    )
    assert "".join(generator.stream(prompt)).strip() == SORRY


@pytest.fixture
def staff_client(client, django_user_model):  # noqa: ANN001, ANN201
    client.force_login(
        django_user_model.objects.create_user("ada", password="pw-ada-123", is_staff=True)
    )
    return client


def test_a_wrong_key_is_quoted_instead_and_the_console_says_the_key_was_refused(
    openai_project, llama, staff_client, client
):
    openai_project.set_openai_api_key("sk-wrong-key-0000000000")
    openai_project.save()
    response = client.post(
        "/api/v1/ask", {"project": openai_project.public_key, **REFUND},
        content_type="application/json", HTTP_ORIGIN="http://127.0.0.1:8000",
    )  # fmt: skip
    assert response.status_code == 200
    body = response.json()
    assert body["generator"] == "extractive" and "refund within 30 days" in body["answer"]
    assert body["fallback"] == "unavailable"  # the server's own words go to the log only
    logged = Interaction.objects.get(answer_id=body["answer_id"])
    assert "refused the API key (HTTP 401: Invalid API Key)" in logged.fallback

    page = staff_client.get(f"/admin/projects/{openai_project.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "The last answer was quoted instead:" in html
    assert "refused the API key (HTTP 401: Invalid API Key)" in html
    assert "sk-wrong-key-0000000000" not in html and "set, ending …0000" in html


def test_an_answer_that_does_not_start_in_time_is_quoted_and_the_server_stops(
    openai_project, llama, settings
):
    # A deadline shorter than reading the prompt: the real server is too slow for it.
    settings.ASKDOCS_OPENAI_TIMEOUTS = {"connect": 2.0, "first_token": 0.05, "between_tokens": 5}
    runtime.reset()
    result = asking.ask(
        project=openai_project, question="How many business days until a refund reaches my card?"
    )
    assert result.generator == "extractive" and "business days" in result.answer
    assert result.fallback == "unavailable"
    logged = Interaction.objects.get(answer_id=result.answer_id)
    assert "timeout, no first token within 0.05 s" in logged.fallback
    # Not retried (a stall already cost the visitor the deadline), and the request was let go.
    assert "attempts" not in logged.fallback
    assert llama.idle()


def test_a_closed_stream_closes_the_request_and_the_server_stops_generating(llama):
    generator = OpenAIGenerator(
        OpenAIEndpoint(llama.base_url, api_key=llama.api_key, max_tokens=400)
    )
    prompt = Prompt(
        system="You are a counter.",
        messages=(Turn("user", "Count from 1 to 300, one number per line."),),
        question=Question("count"),
        passages=(),
    )
    before = llama.tokens_written()
    stream = generator.stream(prompt)
    words = [next(stream) for _ in range(3)]
    assert "".join(words).strip().startswith("1")
    stream.close()  # the visitor left

    assert llama.idle()
    # It stopped a few tokens after the close, far from the 400 it was allowed.
    assert 3 <= llama.tokens_written() - before < 60


def test_the_same_endpoint_serves_the_pipeline_through_runtime(openai_project):
    fields = openai_project.openai_endpoint_fields()
    generator = generators.generator_for("openai", server=fields)
    assert isinstance(generator, OpenAIGenerator)
    assert generator is generators.generator_for("openai", server=fields)  # one pool per endpoint
    other = generators.generator_for("openai", server={**fields, "model": "other"})
    assert other is not generator and replace(other.endpoint, model="qwen2.5-coder-1.5b") == (
        generator.endpoint
    )
