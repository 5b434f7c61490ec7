"""What staff test is what visitors get: a kept check and the console sandbox ask through the
project's own pipeline (assistant/ask/pipelines.py), so they give the widget's answer for the
same question, project and settings — with the project's custom instructions, its model, the
quote first and the written answer checked, and a quote that reads on past its chunk."""

from __future__ import annotations

import json
import re

import pytest
from asgiref.sync import async_to_sync

from assistant.models import Project
from assistant.wiring import runtime
from assistant.wiring.resilience import reset_circuits
from feedback.checks import check_answer, check_create
from ingestion.models import Source
from ingestion.services import document_upsert
from tests.asking import ask

pytestmark = pytest.mark.django_db

REFUND = {"question": "How do I get my money back?", "topic": "Billing"}
NOTES = "Call the product Shopfront, and the reader 'you'."
# The model's answer: one grounded sentence, then a command no passage holds.
WRITTEN = ["Ask for a refund within 30 days [1]. ", "Run `acme refund --now` to speed it up [1]."]

# One paragraph ends with the sentence that announces the entry; with the entry it is too long
# for one chunk (128 tokens), and the sentence too long to carry over: the entry opens the
# section's next chunk, and the quote must read on to give it.
PARAGRAPH = (
    "Nightly jobs share one scheduler per region, keep their history for a week, and send "
    "their logs to the workspace's audit trail, where the owners of the workspace can read "
    "them at any time. To run a job every 30 seconds, whichever region it belongs to and "
    "whichever scheduler it shares with the other nightly jobs of the workspace, add an entry "
    "to the schedule file."
)
ENTRY = "\n".join(
    ["```yaml", "jobs:", "  nightly-export:", "    period: 30s", "    command: acme export --all"]
    + [f"    region-{n}: {{retries: 3, owner: ops-{n}}}" for n in range(3)]
    + ["```"]
)
SCHEDULING = f"# Scheduling\n\n{PARAGRAPH}\n\n{ENTRY}\n\nEntries persist across restarts."


@pytest.fixture
def writing(demo, fake_ollama, settings):  # noqa: ANN001, ANN201
    """The demo project answered by an Ollama model (a local fake server), with notes."""
    settings.OLLAMA_HOST = fake_ollama.url
    settings.ASKDOCS_OLLAMA_TIMEOUTS = {"connect": 1.0, "first_token": 2.0, "between_tokens": 2.0}
    runtime.reset()
    reset_circuits()
    demo.generator = Project.Generator.OLLAMA
    demo.custom_instructions = NOTES
    demo.save()
    fake_ollama.tokens = WRITTEN
    yield demo
    runtime.reset()
    reset_circuits()


@pytest.fixture
def scheduling(db):  # noqa: ANN001, ANN201
    project = Project.objects.create(name="Scheduler")
    source = Source.objects.create(project=project, name="Manual", kind=Source.Kind.MANUAL)
    document_upsert(source=source, external_id="scheduling", title="Scheduling",
                    text=SCHEDULING, url="https://docs.acme.example/scheduling")  # fmt: skip
    return project


def test_a_check_asks_through_the_widgets_pipeline_with_the_projects_notes(writing, fake_ollama):
    visitor = ask(project=writing, **REFUND)
    check = check_create(project=writing, expect="answered", **REFUND)
    outcome = check_answer(check=check)

    prompts = [r.body["messages"][0]["content"] for r in fake_ollama.requests_to("/api/chat")]
    assert len(prompts) == 2 and all(NOTES in system for system in prompts)
    # The quote first, the model's grounded sentence after it; its invented command withheld.
    assert outcome.answer == visitor.answer
    assert "acme refund --now" not in outcome.answer and not outcome.refused


def test_a_checks_quote_reads_on_past_its_chunk_as_the_widgets_does(scheduling):
    question = {"question": "How do I run a job every 30 seconds?"}
    visitor = ask(project=scheduling, **question)
    outcome = check_answer(check=check_create(project=scheduling, expect="answered", **question))
    assert "period: 30s" in visitor.answer
    assert outcome.answer == visitor.answer


def _events(body: str) -> list[tuple[str, dict[str, str]]]:
    found = re.findall(r"event: (\w+)\ndata: (.*)\n", body)
    return [(name, json.loads(data)) for name, data in found]


def _streamed(staff_client, project: Project, asked: dict[str, str]) -> list:  # noqa: ANN001
    partial = staff_client.get(
        "/admin/sandbox/", {**asked, "project": project.pk}, HTTP_HX_REQUEST="true"
    )
    url = re.search(r'data-answer-stream="([^"]+)"', partial.content.decode()).group(1)
    response = staff_client.get(url)

    async def read() -> bytes:
        return b"".join([part async for part in response.streaming_content])

    return _events(async_to_sync(read)().decode())


def test_the_sandbox_streams_the_widgets_answer_quote_first_and_checked(staff_client, writing):
    visitor = ask(project=writing, **REFUND)
    events = _streamed(staff_client, writing, REFUND)
    kinds = [name for name, _ in events]
    assert "written" in kinds and kinds[-1] == "done"
    quote = "".join(d["text"] for n, d in events[: kinds.index("written")] if n == "token")
    written = "".join(d["text"] for n, d in events[kinds.index("written") :] if n == "token")
    assert "refund within 30 days" in quote.lower()
    # What a visitor is shown, and nothing the grounding check withholds from them.
    assert written == "Ask for a refund within 30 days [1]."
    assert "acme refund --now" not in json.dumps(events)
    assert events[-1][1]["written"] == "complete" and visitor.written == "complete"
    assert visitor.answer == written


def test_the_sandboxs_quote_reads_on_past_its_chunk_as_the_widgets_does(staff_client, scheduling):
    question = {"question": "How do I run a job every 30 seconds?"}
    visitor = ask(project=scheduling, **question)
    events = _streamed(staff_client, scheduling, question)
    streamed = "".join(d["text"] for n, d in events if n == "token")
    assert streamed == visitor.answer and "period: 30s" in streamed
