"""The RAG sandbox runs the real pipeline on the demo documents and shows every step."""

from __future__ import annotations

import json
import re

import pytest
from asgiref.sync import async_to_sync

from assistant.console.sandbox import SandboxRun
from assistant.models import Interaction
from assistant.rag.retrieve.retriever import LEXICAL_EXTRA

pytestmark = pytest.mark.django_db

MONEY_BACK = {"question": "How do I get my money back?", "topic": "Billing"}


def candidate_rows(html: str) -> list[str]:
    return re.findall(r'<tr class="(kept|dropped)" data-relevance="([^"]*)"', html)


def test_it_shows_the_query_every_candidate_the_prompt_and_the_answer(staff_client, demo):
    response = staff_client.get("/admin/sandbox/", {**MONEY_BACK, "project": demo.pk})
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" in html  # a normal request gets the whole page
    assert "(Billing) How do I get my money back?" in html
    assert "Also searched without the topic" in html
    assert "<code>How do I get my money back?</code>" in html
    rows = candidate_rows(html)
    assert len(rows) == demo.num_candidates
    # The cross-encoder read the search's best `rerank_top` and those the word search added
    # (at most LEXICAL_EXTRA); they come first, best first.
    scores = [float(score) for _, score in rows if score]
    added = len(scores) - demo.rerank_top
    assert 0 < added <= LEXICAL_EXTRA
    assert f"read the best {demo.rerank_top} and {added} the word search added" in html
    assert scores == sorted(scores, reverse=True)
    assert all(score == "" for _, score in rows[len(scores) :])
    assert html.count(">not reranked<") == demo.num_candidates - len(scores)
    # kept = at or above the project's threshold, at most max_kept
    kept = [s for cls, s in rows if cls == "kept"]
    assert kept and all(float(s) >= demo.threshold for s in kept)
    assert len(kept) <= demo.max_kept
    # The demo's extractive answerer quotes the kept passages: no prompt is sent anywhere.
    assert "Knowledge base texts:" not in html and "no model is called" in html
    assert "Passages it quotes from" in html and "Texts given to the model" not in html
    assert "refund" in html.lower()
    check = re.search(r'data-testid="answerability">(.*?)</p>', html, re.S)
    assert check and "a sentence of the kept passages answers the question" in check.group(1)
    assert "Best sentence:" in check.group(1) and "refund" in check.group(1).lower()
    assert not Interaction.objects.filter(project=demo).exists()  # experiments are not logged


def test_a_threshold_of_one_refuses_without_a_prompt(staff_client, demo):
    response = staff_client.get("/admin/sandbox/", {**MONEY_BACK, "threshold": "1"})
    html = response.content.decode()
    assert all(cls == "dropped" for cls, _ in candidate_rows(html))
    assert "sorry, I couldn't find an answer to your question." in html
    assert "No prompt: the answer was the refusal sentence." in html
    # Refused, the visitor would be offered the refunds page (relevance far above the floor).
    related = re.search(r'data-testid="related">(.*?)</div>', html, re.S)
    assert related and "These pages may help" in related.group(1)
    assert 'href="https://help.acme.example/refunds#getting-your-money-back"' in related.group(1)


def test_a_refusal_by_the_answerability_check_is_not_told_in_green_as_an_answer(staff_client, demo):
    # On the tokens page the topic carries a passage over the gate; no sentence of it answers.
    asked = {"question": "Can I pay with bitcoin?", "topic": "Retrieval endpoint token management"}
    html = staff_client.get("/admin/sandbox/", asked).content.decode()
    verdict = re.search(r'<p class="verdict( refuses)?" data-verdict>(.*?)</p>', html, re.S)
    assert verdict and verdict.group(1) == " refuses"
    assert re.fullmatch(
        r"\d passed the threshold of 0\.5, but no sentence of them answers the question \(the "
        r"answerability check, below\): the assistant says it doesn't know\.",
        verdict.group(2),
    ), verdict.group(2)
    assert "answers from them" not in html
    # The topic's words alone do not make its page a related one.
    related = re.search(r'data-testid="related">(.*?)</div>', html, re.S)
    assert related and "Retrieval endpoint tokens" not in related.group(1)


def test_an_off_subject_refusal_offers_no_pages(staff_client, demo):
    response = staff_client.get("/admin/sandbox/", {"question": "Write me a poem about the sea"})
    related = re.search(r'data-testid="related">(.*?)</div>', response.content.decode(), re.S)
    assert related and "No related pages are offered" in related.group(1)


def test_an_htmx_request_gets_only_the_result_partial(staff_client, demo):
    response = staff_client.get("/admin/sandbox/", MONEY_BACK, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert "<html" not in html
    assert "(Billing) How do I get my money back?" in html


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"question": "  "}, "question", "This field is required."),
        ({"question": "x" * 2001}, "question", "At most 2000 characters."),
        ({"question": "Refunds?", "threshold": "1.5"}, "threshold", "less than or equal to 1"),
        ({"question": "Refunds?", "threshold": "abc"}, "threshold", "Enter a number."),
    ],
)
def test_bad_input_shows_the_error_next_to_the_field_and_runs_nothing(
    staff_client, demo, params, field, message
):
    response = staff_client.get("/admin/sandbox/", params)
    html = response.content.decode()
    assert response.status_code == 200
    # the error sits in the field's own block, right after its input
    block = html.split(f'for="id_{field}"', 1)[1].split('<div class="field', 1)[0]
    assert message in block
    assert "Retrieval query" not in html


def test_the_page_without_a_question_shows_the_form_at_the_project_threshold(staff_client, demo):
    html = staff_client.get("/admin/sandbox/").content.decode()
    assert 'name="question"' in html
    assert f'value="{demo.threshold}"' in html
    assert "Candidates" not in html


def test_the_answer_is_rendered_from_markdown_without_raw_html(staff_client, demo):
    html = staff_client.get("/admin/sandbox/", MONEY_BACK).content.decode()
    answer = html.split('data-testid="answer">', 1)[1].split("</article>", 1)[0]
    assert "<strong>" in answer and "**" not in answer
    run = SandboxRun(
        query="q", threshold=0.5, max_kept=3, rerank_top=8, candidates=[], prompt_system="",
        prompt_messages=[], answer="<script>alert(1)</script> **bold**", refused=False,
        generator="extractive",
    )  # fmt: skip
    assert "<script>" not in run.answer_html and "<strong>bold</strong>" in run.answer_html


def _body(response) -> str:  # noqa: ANN001
    async def read() -> bytes:
        return b"".join([part async for part in response.streaming_content])

    return async_to_sync(read)().decode()


def _events(body: str) -> list[tuple[str, dict]]:
    events = []
    for block in body.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_with_htmx_the_answer_streams_in_and_ends_rendered(staff_client, demo):
    partial = staff_client.get("/admin/sandbox/", MONEY_BACK, HTTP_HX_REQUEST="true")
    html = partial.content.decode()
    url = re.search(r'data-answer-stream="([^"]+)"', html).group(1)
    assert "Getting your money back" in html  # candidates are there before the answer
    response = staff_client.get(url)
    assert response["Content-Type"] == "text/event-stream"
    body = _body(response)
    events = _events(body)
    tokens = [data["text"] for name, data in events if name == "token"]
    assert len(tokens) > 1
    name, done = events[-1]
    assert name == "done"
    assert "refund" in "".join(tokens).lower()
    assert "<strong>" in done["html"] and "**" not in done["html"]
    assert not Interaction.objects.filter(project=demo).exists()


def test_an_unknown_stream_token_ends_with_an_error_event(staff_client):
    response = staff_client.get("/admin/sandbox/answer/" + "0" * 32 + "/")
    events = _events(_body(response))
    assert events == [("error", {"message": "This sandbox answer has expired; ask again."})]


def test_a_refused_question_needs_no_stream(staff_client, demo):
    html = staff_client.get(
        "/admin/sandbox/", {**MONEY_BACK, "threshold": "1"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "data-answer-stream" not in html
    assert "sorry, I couldn't find an answer to your question." in html


def test_the_previous_question_replays_a_conversation(staff_client, demo):
    follow_up = {"question": "Which privileges does it need?", "topic": ""}
    alone = staff_client.get("/admin/sandbox/", follow_up)
    replayed = staff_client.get(
        "/admin/sandbox/", {**follow_up, "previous": "How do I connect to Elasticsearch?"}
    )
    assert alone.context["run"].query_form == "question"
    run = replayed.context["run"]
    assert run.query.startswith("How do I connect to Elasticsearch?") == (
        run.query_form == "with_history"
    )
    assert 'data-testid="query-form"' in replayed.content.decode()
    assert 'name="previous"' in alone.content.decode()


def test_an_unrelated_question_replayed_after_another_is_judged_as_asked(staff_client, demo):
    params = {"question": "Write me a poem about cats", "topic": "Retrieval endpoint tokens",
              "previous": "How do I revoke one?"}  # fmt: skip
    run = staff_client.get("/admin/sandbox/", params).context["run"]
    assert run.query_form == "question" and run.kept_count == 0


def test_with_its_llm_server_down_the_sandbox_shows_the_quoted_fallback(
    staff_client, demo, settings
):
    from assistant.wiring import runtime
    from tests.fake_ollama import unused_url

    demo.generator = "ollama"
    demo.save()
    settings.OLLAMA_HOST = unused_url()
    runtime.reset()
    try:
        html = staff_client.get("/admin/sandbox/", {**MONEY_BACK, "project": demo.pk}).content
    finally:
        runtime.reset()
    page = html.decode()
    fallback = re.search(r'data-testid="fallback">(.*?)</p>', page, re.S)
    assert fallback and "ollama:" in fallback.group(1) and "unavailable" in fallback.group(1)
    assert "refund within 30 days" in page


def test_with_an_llm_the_sandbox_shows_the_texts_given_to_it_and_the_prompt(
    staff_client, demo, settings, fake_ollama
):
    from assistant.wiring import runtime

    demo.generator = "ollama"
    demo.save()
    settings.OLLAMA_HOST = fake_ollama.url
    fake_ollama.tokens = ["Ask for a refund ", "within 30 days [1]."]
    runtime.reset()
    try:
        html = staff_client.get("/admin/sandbox/", {**MONEY_BACK, "project": demo.pk}).content
    finally:
        runtime.reset()
    page = html.decode()
    assert "Texts given to the model" in page and "Knowledge base texts:" in page
    assert "no model is called" not in page


def test_a_question_of_another_subject_than_its_topic_is_read_without_it(staff_client, demo):
    from ingestion.models import Source
    from ingestion.sync import source_sync

    themes = Source.objects.create(
        project=demo, kind=Source.Kind.MANUAL, name="Themes",
        config={"title": "Choosing your Theme",
                "text": "## readthedocs\n\nTo use the readthedocs theme, set `theme: name: "
                        "readthedocs` in mkdocs.yml."},
    )  # fmt: skip
    source_sync(source=themes)
    asked = {"question": "how do I switch to the readthedocs theme?", "project": demo.pk}
    # Asked on the tokens page: its topic first, the tokens pages read above the gate (0.5 to
    # 0.7) and the theme's section under it; read without the topic too, the theme leads.
    html = staff_client.get(
        "/admin/sandbox/", {**asked, "topic": "Retrieval endpoint tokens"}
    ).content.decode()
    rows = candidate_rows(html)
    assert rows[0][0] == "kept" and float(rows[0][1]) > 0.9
    assert "theme: name: readthedocs" in html
    assert "couldn't find an answer" not in html


def sandbox_with_a_model(client, settings, tmp_path, model, project, question) -> str:  # noqa: ANN001
    """The sandbox's page for `question` on the project `project()` makes, its model `model`."""
    from assistant.wiring import runtime

    settings.DATA_DIR = tmp_path
    settings.OLLAMA_HOST = model.url
    settings.ASKDOCS_JUDGE_WITHIN = 5
    runtime.reset()
    try:
        made = project()
        return client.get(
            "/admin/sandbox/", {"question": question, "project": made.pk}
        ).content.decode()
    finally:
        runtime.reset()


@pytest.mark.usefixtures("allow_loopback")
def test_a_refusal_the_check_is_unsure_of_shows_the_models_second_opinion(
    staff_client, settings, tmp_path, fake_ollama
):
    from assistant.models import Project
    from tests.test_model_judge import UNSURE, students

    fake_ollama.tokens = ["No"]
    html = sandbox_with_a_model(
        staff_client, settings, tmp_path, fake_ollama,
        lambda: students(Project.Generator.OLLAMA), UNSURE,
    )  # fmt: skip
    judged = re.search(r'data-testid="judged-by">(.*?)</span>', html, re.S)
    assert judged, html[:2000]
    assert "ollama:llama3.2 said the passages do not answer" in " ".join(judged.group(1).split())
    assert "the assistant says it doesn't know" in html


@pytest.mark.usefixtures("allow_loopback")
def test_an_answer_from_the_second_reading_shows_the_models_draft(
    staff_client, settings, tmp_path, fake_ollama
):
    from tests.test_model_judge import DRAFT, READERS_WORDS, a_model, settings_project

    fake_ollama.reply = a_model(draft=DRAFT, verdict="Yes")
    html = sandbox_with_a_model(
        staff_client, settings, tmp_path, fake_ollama, settings_project, READERS_WORDS
    )
    read = re.search(r'data-testid="read-as">(.*?)</span>', html, re.S)
    assert read, html[:2000]
    said = " ".join(read.group(1).split())
    assert "ollama:llama3.2 put it in the documents' terms, “Use PRAGMA user_version" in said
    assert "user_version" in html and "the assistant says it doesn't know" not in html
