"""The local generator's parts that need no model: its line of waiting questions, and what a
visitor gets when the model cannot answer (no file, xllamacpp's loader failing): the passages
quoted, with the reason logged. The real model is tested in test_local_model.py."""

from __future__ import annotations

import threading
import time

import pytest

from assistant.models import Interaction
from assistant.wiring import runtime
from assistant.wiring.adapters.local_llm import _Line
from tests import asking

pytestmark = pytest.mark.django_db


def test_questions_are_answered_in_the_order_they_came() -> None:
    line = _Line()
    first, second, third = (line.join(limit=8) for _ in range(3))
    assert (first, second, third) == (1, 2, 3)
    assert [line.ahead(t) for t in (first, second, third)] == [0, 1, 2]

    moved: list[int] = []
    waiter = threading.Thread(target=lambda: moved.append(line.wait_turn(third, timeout=5)))
    waiter.start()
    line.leave(first)
    time.sleep(0.05)
    assert waiter.is_alive()  # one is still ahead of it
    line.leave(second)
    waiter.join(timeout=2)
    assert moved == [0]
    assert len(line) == 1


def test_a_full_line_turns_a_question_away_and_a_turn_waited_for_in_vain_times_out() -> None:
    line = _Line()
    tickets = [line.join(limit=1) for _ in range(2)]
    assert line.join(limit=1) is None
    started = time.monotonic()
    assert line.wait_turn(tickets[1], timeout=0.2) == 1
    assert time.monotonic() - started >= 0.2


@pytest.fixture
def local_project(demo, settings, tmp_path):  # noqa: ANN001, ANN201
    settings.ASKDOCS_LOCAL_MODEL = tmp_path / "missing.gguf"
    runtime.reset()
    demo.generator = "local"
    demo.save()
    yield demo
    runtime.reset()


def test_without_the_model_file_the_passages_are_quoted_and_the_reason_logged(local_project):
    result = asking.ask(
        project=local_project, question="How do I get my money back?", topic="Billing"
    )

    assert not result.refused and "[1]" in result.answer  # quoted, with its marker
    assert result.generator == "extractive"
    assert result.fallback == "unavailable"
    logged = Interaction.objects.get(answer_id=result.answer_id)
    assert logged.fallback.startswith("local:missing unavailable: The local model file is missing")
    assert logged.generator == "extractive" and "manage.py fetch_model" in logged.fallback


def test_the_local_model_reads_only_its_share_of_the_kept_passages(local_project, settings):
    settings.ASKDOCS_LOCAL_PASSAGES = 1
    events = list(
        asking.ask_stream(
            project=local_project, question="How do I export my data and how long does it take?",
            topic="Exporting your data",
        )
    )  # fmt: skip
    sources = next(e for e in events if e.kind == "sources").data["sources"]
    done = next(e for e in events if e.kind == "done").data
    logged = Interaction.objects.get(answer_id=done["answer_id"])
    assert len([c for c in logged.candidates if c["kept"]]) > 1  # several passed the gate
    assert [s["n"] for s in sources] == [1]  # the prompt had one; sources say so
    assert len(logged.sources) == 1
