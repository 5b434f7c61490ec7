"""A written answer that is the whole answer (the one-piece doors: the API, SMS, Slack, the
CLI) cites from [1] in the order it cites, and its sources come in that order: a model that
draws on the prompt's second passage only does not leave the reader looking for a [1]."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assistant.wiring import resilience, runtime
from tests import asking
from tests.fake_ollama import FakeOllama
from tests.sms.conftest import FIELD_DOCS, make_project

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("allow_loopback")]
QUESTION = "How do I reset the pump controller, and how often do I change the generator oil?"
#: What a model may write from each document, grounded in it.
WRITTEN = {
    "pump-reset": "Hold the red STOP button for ten seconds to reset the pump controller",
    "generator-oil": "Change the oil every 250 running hours",
}


@pytest.fixture
def model(settings) -> Iterator[FakeOllama]:  # noqa: ANN001
    with FakeOllama() as server:
        settings.OLLAMA_HOST = server.url
        runtime.ollama_generator.cache_clear()
        resilience.reset_circuits()
        try:
            yield server
        finally:
            runtime.ollama_generator.cache_clear()
            resilience.reset_circuits()


def test_a_written_answer_citing_its_second_source_only_cites_it_as_the_first(model):
    project = make_project("Field team", "+15550001234", FIELD_DOCS, generator="ollama")
    [streamed] = [e for e in asking.ask_stream(project=project, question=QUESTION)
                  if e.kind == "sources"]  # fmt: skip
    second = next(s["url"] for s in streamed.data["sources"] if s["n"] == 2)
    sentence = WRITTEN[second.rsplit("/", 1)[-1]]
    model.tokens = [f"{sentence} ", "[2]."]

    result = asking.ask(project=project, question=QUESTION, write_within=30)

    assert result.written == "complete"
    assert result.answer == f"{sentence} [1]."
    assert [s["n"] for s in result.sources] == list(range(1, len(result.sources) + 1))
    assert result.sources[0]["url"] == second
    assert sorted(s["url"] for s in result.sources) == sorted(
        s["url"] for s in streamed.data["sources"]
    )
