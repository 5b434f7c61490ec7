"""Conversations as a visitor has them in the widget (over the WebSocket, on the demo help
centre, with the real models): the previous question may help a follow-up that does not stand
alone, and never lets an unrelated question through the gate or keeps a self-contained one
out."""

from __future__ import annotations

import json

import pytest
from channels.testing import WebsocketCommunicator

from assistant.models import Interaction
from assistant.rag.types import SORRY
from config.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = "http://127.0.0.1:8000"
TOKENS = "Retrieval endpoint token management"
BILLING = "Billing"


@pytest.fixture
def demo_project(transactional_db):  # noqa: ANN001, ANN201
    from assistant.demo import demo_seed

    return demo_seed().project


async def conversation(project, topic: str, *questions: str) -> list[list[dict]]:  # noqa: ANN001
    """Ask the questions one after another in one widget conversation; the frames of each."""
    socket = WebsocketCommunicator(
        application,
        f"/ws/ask/?project={project.public_key}",
        headers=[(b"origin", ORIGIN.encode())],
    )
    await socket.connect()
    answers, conversation_id = [], None
    for question in questions:
        frame = {"question": question, "topic": topic}
        if conversation_id:
            frame["conversation_id"] = conversation_id
        await socket.send_to(text_data=json.dumps(frame))
        frames = []
        while not frames or frames[-1]["type"] not in ("done", "error"):
            frames.append(json.loads(await socket.receive_from(timeout=60)))
        assert frames[-1]["type"] == "done", frames[-1]
        conversation_id = frames[-1]["conversation_id"]
        answers.append(frames)
    await socket.disconnect()
    return answers


def top_source(frames: list[dict]) -> str:
    sources = frames[0]["sources"]
    return sources[0]["title"] if sources else ""


async def test_an_elliptical_follow_up_is_answered_from_the_right_section(demo_project):
    expire, revoke = await conversation(
        demo_project, TOKENS, "When does it expire?", "How do I revoke one?"
    )
    assert "Token expiry" in top_source(expire)
    assert revoke[-1]["refused"] is False
    assert any("Revoking a token" in s["title"] for s in revoke[0]["sources"])
    text = "".join(f["text"] for f in revoke if f["type"] == "token")
    assert "Click **Revoke**" in text and "Expired tokens" not in text


async def test_an_unrelated_question_after_two_follow_ups_is_refused_as_when_asked_alone(
    demo_project,
):
    *_, poem = await conversation(
        demo_project, TOKENS, "When does it expire?", "How do I revoke one?",
        "Write me a poem about cats",
    )  # fmt: skip
    (alone,) = await conversation(demo_project, TOKENS, "Write me a poem about cats")
    assert alone[-1]["refused"] is True
    assert poem[-1]["refused"] is True
    assert poem[1]["text"] == SORRY and poem[0]["sources"] == []


async def test_a_self_contained_question_after_a_refused_one_is_answered_as_when_alone(
    demo_project,
):
    question = "How do I rotate an API key?"
    discount, after = await conversation(
        demo_project, BILLING, "Do you offer a student discount?", question
    )
    (alone,) = await conversation(demo_project, BILLING, question)
    assert discount[-1]["refused"] is True
    assert after[-1]["refused"] is False
    assert top_source(after) == top_source(alone)
    assert "Rotating and revoking keys" in top_source(after)


async def test_the_log_records_which_form_of_the_query_won(demo_project):
    await conversation(
        demo_project, TOKENS, "When does it expire?", "How do I revoke one?",
        "Write me a poem about cats",
    )  # fmt: skip
    logged = [
        (i.question, i.query_form, i.retrieval_query)
        async for i in Interaction.objects.filter(project=demo_project).order_by("created_at")
    ]
    (_, first, _), (_, follow_up, query), (_, poem, _) = logged
    assert first == "question" and poem == "question"  # nothing to lean on / does not lean
    assert follow_up in ("question", "with_history")
    assert ("When does it expire?" in query) == (follow_up == "with_history")


@pytest.mark.parametrize("topic", ["", TOKENS])
async def test_how_long_after_an_export_question_quotes_the_export_time(demo_project, topic):
    export, how_long = await conversation(
        demo_project, topic, "How do I export my data?", "How long does it take?"
    )
    assert export[-1]["refused"] is False
    text = "".join(f["text"] for f in how_long if f["type"] == "token")
    assert how_long[-1]["refused"] is False
    assert "up to an hour" in text
    assert "ZIP of JSON files" not in text  # the previous answer is not given again
    assert "How long an export takes" in top_source(how_long)


async def test_how_long_after_a_refund_answer_quotes_the_days_not_the_whole_answer(demo_project):
    refund, how_long = await conversation(
        demo_project, BILLING, "How do I get a refund?", "How long does it take?"
    )
    text = "".join(f["text"] for f in how_long if f["type"] == "token")
    assert how_long[-1]["refused"] is False
    assert "5 to 10 business days" in text
    assert "Request refund" not in text and "within 30 days of the charge" not in text


async def test_an_unrelated_request_leaning_on_the_previous_question_is_still_refused(
    demo_project,
):
    *_, poem = await conversation(
        demo_project, "", "How do I export my data?", "Write me a poem about it"
    )
    assert poem[-1]["refused"] is True
