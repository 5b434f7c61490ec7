"""The server-sent-events endpoint: the WebSocket's frames over plain HTTP."""

from __future__ import annotations

import json
import random
from urllib.parse import urlencode

import pytest
from channels.testing import HttpCommunicator

from assistant.models import Interaction
from config.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = "http://127.0.0.1:8000"


@pytest.fixture
def demo_project(transactional_db):  # noqa: ANN001, ANN201
    from assistant.demo import demo_seed

    return demo_seed().project


async def read_events(response):  # noqa: ANN001, ANN201
    body = b"".join([chunk async for chunk in response.streaming_content]).decode()
    events = []
    for block in body.strip().split("\n\n"):
        name, data = block.split("\n")
        frame = json.loads(data.removeprefix("data: "))
        assert name == f"event: {frame['type']}"
        events.append(frame)
    return events


async def test_it_streams_the_same_frames_as_the_socket(async_client, demo_project):
    response = await async_client.post(
        "/api/v1/ask/stream",
        {"project": demo_project.public_key, "question": "How do I get my money back?",
         "topic": "Billing"},
        content_type="application/json", headers={"origin": ORIGIN},
    )  # fmt: skip
    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream"
    assert response["Access-Control-Allow-Origin"] == ORIGIN
    frames = await read_events(response)
    assert frames[0]["type"] == "sources" and frames[-1]["type"] == "done"
    assert frames[0]["sources"][0]["url"].startswith("https://help.acme.example/refunds")
    text = "".join(f["text"] for f in frames if f["type"] == "token")
    logged = await Interaction.objects.aget(answer_id=frames[-1]["answer_id"])
    assert logged.answer == text and logged.channel == "widget"

    follow_up = await async_client.get(
        "/api/v1/ask/stream",
        {"project": demo_project.public_key, "question": "Is there a fee?", "topic": "Billing",
         "conversation_id": frames[-1]["conversation_id"]},
        headers={"origin": ORIGIN},
    )  # fmt: skip
    again = await read_events(follow_up)
    assert again[-1]["type"] == "done"
    assert again[-1]["conversation_id"] == frames[-1]["conversation_id"]


async def test_it_refuses_an_unknown_conversation_before_streaming(async_client, demo_project):
    response = await async_client.get(
        "/api/v1/ask/stream",
        {"project": demo_project.public_key, "question": "Refunds?", "conversation_id": "abc"},
        headers={"origin": ORIGIN},
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "unknown_conversation"


@pytest.mark.parametrize(
    ("body", "origin", "status", "code"),
    [
        ({"question": "x" * 10_000}, ORIGIN, 400, "question_too_long"),
        ({"topic": "Billing"}, ORIGIN, 400, "invalid"),
        ({"question": "Refunds?"}, "https://evil.example", 403, "origin_not_allowed"),
        ({"question": "Refunds?", "project": "pk_nope"}, ORIGIN, 401, "unknown_project"),
    ],
)
async def test_it_refuses_bad_requests_before_streaming(  # noqa: PLR0913
    async_client, demo_project, body, origin, status, code
):
    before = await Interaction.objects.acount()
    response = await async_client.post(
        "/api/v1/ask/stream", {"project": demo_project.public_key, **body},
        content_type="application/json", headers={"origin": origin},
    )  # fmt: skip
    assert response.status_code == status
    assert response.json()["error"]["code"] == code
    assert await Interaction.objects.acount() == before


async def get_from(address, path):  # noqa: ANN001, ANN201
    """A GET through the ASGI application, from a client address of our choosing."""
    communicator = HttpCommunicator(
        application, "GET", path, headers=[(b"origin", ORIGIN.encode()), (b"host", b"127.0.0.1")]
    )
    communicator.scope["client"] = (address, 50000)
    await communicator.send_input({"type": "http.request", "body": b""})
    start = await communicator.receive_output(timeout=60)
    body = b""
    while True:
        message = await communicator.receive_output(timeout=60)
        body += message.get("body", b"")
        if not message.get("more_body"):
            # Let the application finish (Django closes its database connections after the
            # response): cut off, it would leave them open and the test database undroppable.
            await communicator.wait(timeout=60)
            return start["status"], body


async def test_it_answers_429_when_a_client_asks_too_often(demo_project, settings):
    settings.ASKDOCS_RATE_ASK_PER_CLIENT = "1/h"  # per hour: a minute window may roll over mid-test
    address = f"10.7.{random.randint(0, 255)}.{random.randint(1, 254)}"
    query = urlencode({"project": demo_project.public_key, "question": "Student discount?"})
    first = await get_from(address, f"/api/v1/ask/stream?{query}")
    second = await get_from(address, f"/api/v1/ask/stream?{query}")
    assert first[0] == 200 and b"event: done" in first[1]
    assert second[0] == 429
    assert json.loads(second[1])["error"]["code"] == "rate_limited"
