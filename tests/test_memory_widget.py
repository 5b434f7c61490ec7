"""The widget's visitor memory over the SSE endpoint (the socket shares `answer_frames`)."""

from __future__ import annotations

import json
import uuid

import pytest

from assistant.memory.models import UserFact
from assistant.models import Interaction

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = "http://127.0.0.1:8000"


@pytest.fixture
def demo_project(transactional_db):  # noqa: ANN001, ANN201
    from assistant.demo import demo_seed

    return demo_seed().project


async def frames_of(async_client, body):  # noqa: ANN001, ANN201
    response = await async_client.post(
        "/api/v1/ask/stream", body, content_type="application/json", headers={"origin": ORIGIN}
    )
    if response.status_code != 200:
        return response.status_code, response.json()
    text = b"".join([chunk async for chunk in response.streaming_content]).decode()
    return 200, [
        json.loads(b.split("\n")[1].removeprefix("data: ")) for b in text.strip().split("\n\n")
    ]


async def test_a_visitor_is_remembered_across_conversations_and_others_are_not(
    async_client, demo_project
):
    visitor = uuid.uuid4().hex
    base = {"project": demo_project.public_key, "visitor_id": visitor}
    status, frames = await frames_of(
        async_client, {**base, "question": "remember I'm on the Enterprise plan"}
    )
    assert status == 200 and [f["type"] for f in frames] == ["sources", "token", "done"]
    assert frames[1]["text"] == "Got it, I'll remember that: I'm on the Enterprise plan."

    # A new conversation of the same visitor: the fact is used for a plan question.
    status, frames = await frames_of(
        async_client, {**base, "question": "How do I pay for my plan?"}
    )
    logged = await Interaction.objects.aget(answer_id=frames[-1]["answer_id"])
    assert [entry["injected"] for entry in logged.memory] == [True]
    assert "Enterprise" not in logged.retrieval_query

    # Another visitor asking the same thing gets nothing of it.
    other = {**base, "visitor_id": uuid.uuid4().hex, "question": "How do I pay for my plan?"}
    status, frames = await frames_of(async_client, other)
    logged = await Interaction.objects.aget(answer_id=frames[-1]["answer_id"])
    assert logged.memory == []


async def test_a_bad_visitor_id_gets_an_error_frame_and_stores_nothing(async_client, demo_project):
    body = {
        "project": demo_project.public_key,
        "visitor_id": "../../x",
        "question": "remember I like tea",
    }
    status, result = await frames_of(async_client, body)
    frames = result if status == 200 else [result["error"]]
    assert frames[-1]["code"] == "invalid_identity"
    assert not await UserFact.objects.filter(project=demo_project).aexists()
