"""The conversations page groups the interaction log into conversations, filters and pages
them, and shows one transcript with its sources, scores and a sandbox replay."""

from __future__ import annotations

import re
from datetime import timedelta
from urllib.parse import parse_qs, unquote

import pytest
from django.utils import timezone

from assistant.models import Interaction, Project
from feedback.conversations import sources_seen
from feedback.models import Feedback

pytestmark = pytest.mark.django_db

SOURCES = [
    {"n": 1, "title": "Refunds", "url": "https://docs.example.com/refunds", "relevance": 0.91},
    {"n": 2, "title": "Invoices", "url": "https://docs.example.com/invoices", "relevance": 0.62},
    {"n": 3, "title": "Plans", "url": "javascript:alert(1)", "relevance": 0.55},
]


def turn(project, question, *, conversation="", minutes=0, **fields):  # noqa: ANN001, ANN003, ANN201
    row = Interaction.objects.create(
        project=project, channel=fields.pop("channel", "widget"), conversation_id=conversation,
        question=question, retrieval_query=question, **fields,
    )  # fmt: skip
    Interaction.objects.filter(pk=row.pk).update(
        created_at=timezone.now() - timedelta(minutes=60 - minutes)
    )
    return row


@pytest.fixture
def shop(db):  # noqa: ANN001, ANN201
    project = Project.objects.create(name="Shop")
    turn(project, "How do I get a refund?", conversation="c-refund", topic="Billing",
         answer="Open **Billing** and ask for it [1].", sources=SOURCES, best_relevance=0.91,
         candidates=[{"title": "Refunds", "url": "https://docs.example.com/refunds",
                      "similarity": 0.8123, "relevance": 0.91, "kept": True}])  # fmt: skip
    follow = turn(project, "And how long does it take?", conversation="c-refund", minutes=1,
                  topic="Billing", answer="I'm sorry, I couldn't find an answer to your question.",
                  refused=True, best_relevance=0.2)  # fmt: skip
    Feedback.objects.create(interaction=follow, client_id="reader-1", vote=-1, comment="Too vague")
    turn(
        project,
        "Write me a poem",
        conversation="c-poem",
        minutes=5,
        channel="sms",
        answer="I'm sorry, I couldn't find an answer to your question.",
        refused=True,
    )
    single = turn(project, "Which export formats are there?", minutes=10, channel="api",
                  answer="CSV and JSON [2].", sources=SOURCES)  # fmt: skip
    Feedback.objects.create(interaction=single, client_id="reader-2", vote=1)
    other = Project.objects.create(name="Other shop")
    turn(other, "A question of another project", conversation="c-other")
    return project


def keys(html: str) -> list[str]:
    return re.findall(r'data-conversation="([^"]+)"', html)


def test_the_list_groups_turns_into_conversations_latest_first(staff_client, shop):
    response = staff_client.get("/admin/conversations/", {"project": shop.pk})
    html = response.content.decode()
    assert response.status_code == 200
    single = str(Interaction.objects.get(question__startswith="Which export").answer_id)
    found = keys(html)
    assert found[1:] == ["c-poem", "c-refund"]
    assert found[0].replace("-", "") == single.replace("-", "")  # its answer id
    refund = html.split('data-conversation="c-refund"', 1)[1].split("</tr>", 1)[0]
    assert "How do I get a refund?" in refund  # the first question, not the follow-up
    assert '<td class="num">2</td>' in refund
    assert 'data-mark="refused">1 refused' in refund and 'data-mark="down">1 thumbs-down' in refund
    assert "A question of another project" not in html


def test_a_conversation_handed_to_a_person_is_marked(staff_client, shop):
    from assistant.handoff.models import Handoff

    Handoff.objects.create(project=shop, conversation_id="c-refund", via="email",
                           target="help@shop.example", status="sent")  # fmt: skip
    html = staff_client.get("/admin/conversations/", {"project": shop.pk}).content.decode()
    refund = html.split('data-conversation="c-refund"', 1)[1].split("</tr>", 1)[0]
    poem = html.split('data-conversation="c-poem"', 1)[1].split("</tr>", 1)[0]
    assert 'data-mark="handed-over"' in refund and 'data-mark="handed-over"' not in poem
    handed = staff_client.get(
        "/admin/conversations/", {"project": shop.pk, "handed_over": "on"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert 'data-conversation="c-refund"' in handed and 'data-conversation="c-poem"' not in handed


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"channel": "sms"}, ["c-poem"]),
        ({"refused": "on"}, ["c-poem", "c-refund"]),
        ({"voted_down": "on"}, ["c-refund"]),
        ({"q": "how long does it"}, ["c-refund"]),  # a later question finds the conversation
        ({"q": "couldn't find", "channel": "widget"}, ["c-refund"]),  # words of an answer
        ({"q": "nothing like this"}, []),
    ],
)
def test_filters_and_search_pick_conversations(staff_client, shop, filters, expected):
    html = staff_client.get(
        "/admin/conversations/", {"project": shop.pk, **filters}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "<html" not in html
    assert keys(html) == expected


def test_the_list_is_paged(staff_client, shop):
    for i in range(30):
        turn(shop, f"Question {i}", conversation=f"bulk-{i:02d}", minutes=20 + i)
    first = staff_client.get("/admin/conversations/", {"project": shop.pk}).content.decode()
    second = staff_client.get(
        "/admin/conversations/", {"project": shop.pk, "page": 2}
    ).content.decode()
    assert len(keys(first)) == 25 and len(keys(second)) == 8
    assert not set(keys(first)) & set(keys(second))
    assert "Page 1 of 2" in first


def test_the_transcript_shows_each_turn_with_its_sources_scores_and_marks(staff_client, shop):
    response = staff_client.get(
        "/admin/conversations/view/", {"project": shop.pk, "id": "c-refund"}
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert html.index("How do I get a refund?") < html.index("And how long does it take?")
    assert "<strong>Billing</strong>" in html  # the answer's Markdown, rendered
    sources = re.search(r'data-testid="sources">(.*?)</ol>', html, re.S).group(1)
    assert "Refunds" in sources and "0.91" in sources
    assert "Invoices" not in sources  # kept but not cited: the reader did not see it
    assert "0.812" in html  # the candidate's similarity
    assert 'data-mark="down"' in html and "Too vague" in html


def test_open_in_sandbox_carries_the_earlier_questions(staff_client, shop):
    html = staff_client.get(
        "/admin/conversations/view/", {"project": shop.pk, "id": "c-refund"}
    ).content.decode()
    links = re.findall(r'href="/admin/sandbox/\?([^"]+)" data-testid="open-in-sandbox"', html)
    first, second = (parse_qs(unquote(link.replace("&amp;", "&"))) for link in links)
    assert first["question"] == ["How do I get a refund?"] and "previous" not in first
    assert second["question"] == ["And how long does it take?"]
    assert second["previous"] == ["How do I get a refund?"] and second["topic"] == ["Billing"]


def test_a_question_without_a_conversation_is_its_own_transcript(staff_client, shop):
    single = Interaction.objects.get(question__startswith="Which export")
    html = staff_client.get(
        "/admin/conversations/view/", {"project": shop.pk, "id": str(single.answer_id)}
    ).content.decode()
    assert "Which export formats are there?" in html and 'data-mark="up"' in html


@pytest.mark.parametrize("key", ["c-other", "nope", "", "x" * 300])
def test_an_unknown_or_foreign_conversation_is_not_found(staff_client, shop, key):
    response = staff_client.get("/admin/conversations/view/", {"project": shop.pk, "id": key})
    assert response.status_code == 404


def test_only_staff_see_conversations(reader_client, shop):
    from django.test import Client

    assert Client().get("/admin/conversations/").status_code == 302
    assert reader_client.get("/admin/conversations/view/", {"id": "c-refund"}).status_code == 403


def test_the_sources_seen_are_the_cited_ones_or_all_or_none():
    assert [s["n"] for s in sources_seen(answer="See [2].", sources=SOURCES, refused=False)] == [2]
    assert len(sources_seen(answer="No markers.", sources=SOURCES, refused=False)) == 3
    assert sources_seen(answer="[1]", sources=SOURCES, refused=True) == []


def test_the_sandbox_replays_several_earlier_questions(staff_client, demo):
    earlier = "How do I create a token?\nHow do I connect to Elasticsearch?"
    response = staff_client.get(
        "/admin/sandbox/",
        {"project": demo.pk, "question": "Which privileges does it need?", "previous": earlier},
    )
    run = response.context["run"]
    assert response.context["form"].cleaned_data["previous"] == earlier.splitlines()
    # The pipeline joins the last earlier question to a follow-up.
    assert run.query.startswith("How do I connect to Elasticsearch?") == (
        run.query_form == "with_history"
    )
    too_many = staff_client.get(
        "/admin/sandbox/",
        {"project": demo.pk, "question": "Which one?", "previous": "\n".join("q" * 6)},
    )
    assert "run" not in too_many.context
    assert "At most 5 earlier questions." in too_many.content.decode()
    # An earlier question is held to the intake's rules like the question itself.
    wordless = staff_client.get(
        "/admin/sandbox/",
        {"project": demo.pk, "question": "Which one?", "previous": "How?\n\u200b\u200b"},
    )
    assert "run" not in wordless.context
    assert [e.code for e in wordless.context["form"].errors.as_data()["previous"]] == ["invalid"]
    assert "Earlier question 2:" in wordless.content.decode()
