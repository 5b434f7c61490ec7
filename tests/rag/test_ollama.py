"""The Ollama adapters over real HTTP, against tests/fake_ollama.py."""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import ollama
import pytest

from assistant.rag import ports
from assistant.rag.ports import GeneratorUnavailable
from assistant.rag.types import Cut, Prompt, Question, Turn
from assistant.wiring.adapters.ollama import OllamaEmbedder, OllamaGenerator
from assistant.wiring.resilience import Resilience, UpstreamUnavailable, reset_circuits
from tests.fake_ollama import FakeOllama, unused_url

QUESTION = "How do I rotate an API key?"
HISTORY = (
    Turn("user", "What is an API key?"),
    Turn("assistant", "A secret that identifies your app."),
)


# The fake servers listen on loopback ports that OLLAMA_HOST does not name: allowed explicitly.
pytestmark = pytest.mark.usefixtures("allow_loopback")


@pytest.fixture(autouse=True)
def fresh_circuits() -> Iterator[None]:
    # Breakers are process-wide and keyed by host:port; a port can come back in a later test.
    reset_circuits()
    yield
    reset_circuits()


def make_prompt(question: str = QUESTION) -> Prompt:
    return Prompt(
        system="Answer only from the passages.",
        messages=(*HISTORY, Turn("user", question)),
        question=Question(text=question, topic="keys", history=HISTORY),
        passages=(),
    )


def quick(**overrides: Any) -> Resilience:
    """The production policy with test-sized waits."""
    from assistant.wiring.adapters.ollama import worth_retrying

    settings: dict[str, Any] = {
        "backoff_initial": 0.02,
        "backoff_max": 0.1,
        "retry_if": worth_retrying,
    }
    settings.update(overrides)
    return Resilience(f"test:{uuid.uuid4()}", **settings)


def generator(server_url: str, **overrides: Any) -> OllamaGenerator:
    settings: dict[str, Any] = {
        "connect_timeout": 0.5,
        "first_token_timeout": 0.5,
        "between_tokens_timeout": 0.5,
        "resilience": quick(),
    }
    settings.update(overrides)
    return OllamaGenerator(server_url, **settings)


# -- generator ----------------------------------------------------------------------------


def test_it_streams_tokens_in_order_with_system_history_and_question(
    fake_ollama: FakeOllama,
) -> None:
    fake_ollama.tokens = ["Open", " Settings", " >", " Keys", "."]
    llm = OllamaGenerator(fake_ollama.url)

    tokens = list(llm.stream(make_prompt()))

    assert tokens == ["Open", " Settings", " >", " Keys", "."]
    [request] = fake_ollama.requests_to("/api/chat")
    body = request.body
    assert body["model"] == "llama3.2"
    assert body["stream"] is True
    assert body["messages"] == [
        {"role": "system", "content": "Answer only from the passages."},
        {"role": "user", "content": "What is an API key?"},
        {"role": "assistant", "content": "A secret that identifies your app."},
        {"role": "user", "content": QUESTION},
    ]
    assert body["options"]["num_predict"] == 512
    assert llm.id == "ollama:llama3.2"


def test_it_bounds_the_answer_length(fake_ollama: FakeOllama) -> None:
    fake_ollama.tokens = ["one", " two", " three", " four"]
    llm = generator(fake_ollama.url, num_predict=2, options={"temperature": 0.1})

    # The server stopped at the limit, not at an end it chose: the stream says it was cut.
    assert list(llm.stream(make_prompt())) == ["one", " two", Cut()]
    options = fake_ollama.requests[-1].body["options"]
    assert options == {"num_predict": 2, "temperature": 0.1}


def test_it_builds_no_client_and_makes_no_call_until_streamed(fake_ollama: FakeOllama) -> None:
    llm = OllamaGenerator(fake_ollama.url)
    answer = llm.stream(make_prompt())

    assert fake_ollama.requests == []
    assert next(answer) == "The"
    answer.close()


def test_it_ends_with_generator_unavailable_when_the_connection_drops_mid_answer(
    fake_ollama: FakeOllama,
) -> None:
    fake_ollama.drop_after = 2
    received: list[str] = []

    with pytest.raises(GeneratorUnavailable) as raised:
        for token in generator(fake_ollama.url).stream(make_prompt()):
            received.append(token)

    assert received == ["The", " answer"]
    assert "mid-answer" in str(raised.value)
    assert "after 2 chunks" in str(raised.value)
    assert len(fake_ollama.requests) == 1  # tokens were shown: no retry


def test_it_ends_with_generator_unavailable_when_ollama_streams_an_error(
    fake_ollama: FakeOllama,
) -> None:
    fake_ollama.error_after = 3
    received: list[str] = []

    with pytest.raises(GeneratorUnavailable) as raised:
        for token in generator(fake_ollama.url).stream(make_prompt()):
            received.append(token)

    assert received == ["The", " answer", " is"]
    assert "llama runner process has terminated" in str(raised.value)
    assert len(fake_ollama.requests) == 1


def test_it_gives_up_when_the_first_token_is_late(fake_ollama: FakeOllama) -> None:
    llm = generator(fake_ollama.url, first_token_timeout=0.5, between_tokens_timeout=5)
    list(llm.stream(make_prompt()))  # builds the client, so only the stall is timed
    fake_ollama.stall_before_first_token = 5

    started = time.monotonic()
    with pytest.raises(GeneratorUnavailable) as raised:
        list(llm.stream(make_prompt()))

    assert time.monotonic() - started < 0.5 + 0.4
    assert "first token" in str(raised.value)
    stalled = fake_ollama.requests[1:]
    assert len(stalled) == 1  # a stall is not retried: it would triple the wait
    assert stalled[0].disconnected.wait(1)


def test_it_gives_up_when_tokens_stop_coming(fake_ollama: FakeOllama) -> None:
    fake_ollama.stall_between_tokens = 5
    llm = generator(fake_ollama.url, first_token_timeout=5, between_tokens_timeout=0.4)
    answer = llm.stream(make_prompt())

    assert next(answer) == "The"
    started = time.monotonic()
    with pytest.raises(GeneratorUnavailable) as raised:
        next(answer)

    assert 0.3 < time.monotonic() - started < 0.4 + 0.4
    assert "no token for 0.4 s" in str(raised.value)


def test_it_fails_quickly_when_nothing_listens() -> None:
    llm = generator(unused_url())

    started = time.monotonic()
    with pytest.raises(GeneratorUnavailable) as raised:
        list(llm.stream(make_prompt()))

    assert time.monotonic() - started < 1.0
    message = str(raised.value)
    assert "cannot connect" in message
    assert "refused" in message.lower()
    assert "after 3 attempts" in message


def test_it_retries_server_errors_before_the_first_token(fake_ollama: FakeOllama) -> None:
    fake_ollama.fail_next(2, status=500)
    llm = generator(fake_ollama.url)

    assert "".join(llm.stream(make_prompt())) == "The answer is 42."

    seen = fake_ollama.requests_to("/api/chat")
    assert len(seen) == 3
    assert seen[1].received_at - seen[0].received_at >= 0.02
    assert seen[2].received_at - seen[1].received_at >= 0.04


def test_it_fails_at_once_when_the_model_is_missing(fake_ollama: FakeOllama) -> None:
    llm = generator(fake_ollama.url, model="llama9")

    with pytest.raises(GeneratorUnavailable) as raised:
        list(llm.stream(make_prompt()))

    message = str(raised.value)
    assert "model 'llama9' not found" in message
    assert "ollama pull llama9" in message
    assert len(fake_ollama.requests) == 1


def test_it_fails_without_calling_ollama_once_the_circuit_is_open(
    fake_ollama: FakeOllama,
) -> None:
    fake_ollama.fail_next(100, status=500)
    llm = generator(fake_ollama.url, resilience=quick(attempts=1, fail_max=5))
    for _ in range(5):
        with pytest.raises(GeneratorUnavailable):
            list(llm.stream(make_prompt()))

    with pytest.raises(GeneratorUnavailable) as raised:
        list(llm.stream(make_prompt()))

    assert "circuit" in str(raised.value)
    assert len(fake_ollama.requests) == 5


def test_it_stops_ollama_when_the_reader_closes_the_stream(fake_ollama: FakeOllama) -> None:
    fake_ollama.tokens = [f" t{i}" for i in range(50)]
    fake_ollama.stall_between_tokens = 0.2
    answer = generator(fake_ollama.url).stream(make_prompt())
    assert [next(answer), next(answer)] == [" t0", " t1"]

    answer.close()

    request = fake_ollama.requests[0]
    assert request.disconnected.wait(1.0)
    assert request.finished.wait(1.0)


def test_it_implements_the_ports(fake_ollama: FakeOllama) -> None:
    # mypy checks these assignments against the Protocols.
    llm: ports.Generator = OllamaGenerator(fake_ollama.url)
    embedder: ports.Embedder = OllamaEmbedder(fake_ollama.url, dimension=768)

    assert (llm.id, embedder.id, embedder.dimension) == (
        "ollama:llama3.2",
        "ollama:nomic-embed-text",
        768,
    )


def test_it_shares_the_breaker_with_the_embedder_of_the_same_host(
    fake_ollama: FakeOllama,
) -> None:
    llm = OllamaGenerator(fake_ollama.url)
    embedder = OllamaEmbedder(fake_ollama.url)

    assert llm.resilience.name == embedder.resilience.name == f"ollama:{fake_ollama.url}"


def test_it_is_faked_faithfully_enough_for_the_official_client(fake_ollama: FakeOllama) -> None:
    client = ollama.Client(host=fake_ollama.url)

    names = [model.model for model in client.list().models]
    reply = client.chat(model="llama3.2", messages=[{"role": "user", "content": "hi"}])

    assert names == ["llama3.2:latest", "nomic-embed-text:latest"]
    assert reply.message.content == "The answer is 42."
    assert reply.done_reason == "stop"
    assert httpx.get(f"{fake_ollama.url}/api/version").json()["version"]


# -- embedder -----------------------------------------------------------------------------


def test_a_questions_searches_are_embedded_in_one_request(fake_ollama: FakeOllama) -> None:
    embedder = OllamaEmbedder(fake_ollama.url)

    vectors = embedder.embed_queries(["(Keys) rotate key", "rotate key"])

    bodies = [r.body for r in fake_ollama.requests_to("/api/embed")]
    assert [b["input"] for b in bodies][-1] == [
        "search_query: (Keys) rotate key",
        "search_query: rotate key",
    ]
    assert len(vectors) == 2 and vectors[0] != vectors[1]
    assert vectors[1] == embedder.embed_query("rotate key")


def test_it_prefixes_queries_and_documents_for_nomic(fake_ollama: FakeOllama) -> None:
    embedder = OllamaEmbedder(fake_ollama.url)

    query = embedder.embed_query("rotate key")
    documents = embedder.embed_documents(["Keys rotate monthly.", "Billing is yearly."])

    bodies = [r.body for r in fake_ollama.requests_to("/api/embed")]
    assert bodies[0]["model"] == "nomic-embed-text"
    assert bodies[0]["input"] == ["search_query: rotate key"]
    assert bodies[1]["input"] == [
        "search_document: Keys rotate monthly.",
        "search_document: Billing is yearly.",
    ]
    assert len(query) == 768
    assert len(documents) == 2
    assert math.isclose(sum(v * v for v in documents[0]), 1.0)


def test_it_discovers_the_dimension_from_the_first_embedding(fake_ollama: FakeOllama) -> None:
    fake_ollama.dimension = 64
    embedder = OllamaEmbedder(fake_ollama.url)
    assert fake_ollama.requests == []  # nothing at construction

    embedder.embed_documents(["a"])

    assert embedder.dimension == 64
    assert embedder.id == "ollama:nomic-embed-text"
    assert len(fake_ollama.requests) == 1


def test_it_refuses_vectors_of_another_dimension(fake_ollama: FakeOllama) -> None:
    embedder = OllamaEmbedder(fake_ollama.url, dimension=384)

    with pytest.raises(ValueError, match="768-d vectors, expected 384-d"):
        embedder.embed_query("hello")


def test_it_embeds_documents_in_batches(fake_ollama: FakeOllama) -> None:
    embedder = OllamaEmbedder(fake_ollama.url, batch_size=2)

    vectors = embedder.embed_documents([f"doc {i}" for i in range(5)])

    assert len(vectors) == 5
    sizes = [len(r.body["input"]) for r in fake_ollama.requests_to("/api/embed")]
    assert sizes == [2, 2, 1]
    assert vectors[4] == embedder.embed_documents(["doc 4"])[0]


def test_it_names_a_missing_embedding_model(fake_ollama: FakeOllama) -> None:
    embedder = OllamaEmbedder(fake_ollama.url, model="mxbai-embed-large")

    with pytest.raises(UpstreamUnavailable) as raised:
        embedder.embed_query("hello")

    assert "ollama pull mxbai-embed-large" in str(raised.value)
    assert len(fake_ollama.requests) == 1


# -- the outbound guard -------------------------------------------------------------------


def test_a_host_at_an_internal_address_that_the_settings_do_not_name_is_never_asked(
    fake_ollama: FakeOllama, settings: Any
) -> None:
    settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS = []
    settings.OLLAMA_HOST = ""

    with pytest.raises(GeneratorUnavailable, match="non-public address 127.0.0.1") as refused:
        list(generator(fake_ollama.url).stream(make_prompt()))
    assert "attempts" not in str(refused.value)  # no retry changes an address
    with pytest.raises(UpstreamUnavailable, match="non-public address 127.0.0.1"):
        OllamaEmbedder(fake_ollama.url).embed_query("keys")
    assert fake_ollama.requests == []


def test_the_host_ollama_host_names_is_the_operators_choice_and_reached(
    fake_ollama: FakeOllama, settings: Any
) -> None:
    settings.ASKDOCS_ALLOWED_PRIVATE_HOSTS = []
    settings.OLLAMA_HOST = fake_ollama.url

    assert "".join(generator(fake_ollama.url).stream(make_prompt()))
    assert len(OllamaEmbedder(fake_ollama.url).embed_query("keys")) == fake_ollama.dimension


def test_a_redirect_from_the_server_is_not_followed(fake_ollama: FakeOllama) -> None:
    with FakeOllama() as elsewhere:
        fake_ollama.redirect_to = elsewhere.url
        with pytest.raises(GeneratorUnavailable):
            list(generator(fake_ollama.url).stream(make_prompt()))
        assert elsewhere.requests == []
