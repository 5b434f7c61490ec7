"""The RAG sandbox runs the real pipeline on the demo documents and shows every step."""

from __future__ import annotations

import re

import pytest

from assistant.models import Interaction

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
    rows = candidate_rows(html)
    assert len(rows) == demo.num_candidates
    # The cross-encoder read the search's best `rerank_top`; they come first, best first.
    scores = [float(score) for _, score in rows if score]
    assert len(scores) == demo.rerank_top
    assert scores == sorted(scores, reverse=True)
    assert all(score == "" for _, score in rows[demo.rerank_top :])
    assert html.count(">not reranked<") == demo.num_candidates - demo.rerank_top
    # kept = at or above the project's threshold, at most max_kept
    kept = [s for cls, s in rows if cls == "kept"]
    assert kept and all(float(s) >= demo.threshold for s in kept)
    assert len(kept) <= demo.max_kept
    assert "Knowledge base texts:" in html  # the prompt
    assert "refund" in html.lower()
    assert not Interaction.objects.filter(project=demo).exists()  # experiments are not logged


def test_a_threshold_of_one_refuses_without_a_prompt(staff_client, demo):
    response = staff_client.get("/admin/sandbox/", {**MONEY_BACK, "threshold": "1"})
    html = response.content.decode()
    assert all(cls == "dropped" for cls, _ in candidate_rows(html))
    assert "I&#x27;m sorry, I couldn&#x27;t find an answer" in html
    assert "No prompt: the answer was the refusal sentence." in html


def test_an_htmx_request_gets_only_the_result_partial(staff_client, demo):
    response = staff_client.get("/admin/sandbox/", MONEY_BACK, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert "<html" not in html
    assert "(Billing) How do I get my money back?" in html


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"question": "  "}, "question", "This field is required."),
        ({"question": "x" * 2001}, "question", "Ensure this value has at most 2000 characters"),
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
