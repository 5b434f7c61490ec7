"""Every door a visitor's question comes in by keeps it masked: server-sent events, the
WebSocket, the plain page without JavaScript and `manage.py ask` (REST, SMS, feedback and
handoffs: tests/test_privacy_stores.py, tests/sms/test_privacy_sms.py). Transactional: the
WebSocket consumer's database work runs on another thread."""

from __future__ import annotations

import json
from io import StringIO
from urllib.parse import urlencode

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.core.management import call_command

from assistant.demo import demo_seed
from assistant.models import Interaction
from config.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = "http://127.0.0.1:8000"
QUESTION = "How do I get my money back? Card 4111 1111 1111 1111, mail jane.doe@example.com"
MASKED = "How do I get my money back? Card [card], mail [email]"


@pytest.fixture
def demo(transactional_db):  # noqa: ANN001, ANN201
    return demo_seed().project


async def test_the_stream_door(demo, async_client):
    query = urlencode({"project": demo.public_key, "question": QUESTION})
    response = await async_client.get(f"/api/v1/ask/stream?{query}", headers={"origin": ORIGIN})
    body = b"".join([chunk async for chunk in response.streaming_content]).decode()
    assert "jane.doe" not in body and "done" in body
    logged = await Interaction.objects.aget()
    assert logged.question == MASKED


def test_the_websocket_door(demo):
    async def run() -> None:
        socket = WebsocketCommunicator(
            application, f"/ws/ask/?project={demo.public_key}",
            headers=[(b"origin", ORIGIN.encode())],
        )  # fmt: skip
        socket.scope["client"] = ("127.0.0.9", 50000)
        await socket.connect()
        await socket.send_to(text_data=json.dumps({"question": QUESTION}))
        while json.loads(await socket.receive_from(timeout=30))["type"] != "done":
            pass
        await socket.disconnect()

    async_to_sync(run)()
    assert Interaction.objects.get().question == MASKED


def test_the_plain_page_and_the_command_line(demo, client):
    client.post("/", {"project": demo.public_key, "question": QUESTION})
    call_command("ask", QUESTION, "--project", demo.name, "--json", stdout=StringIO())
    assert list(Interaction.objects.values_list("question", flat=True)) == [MASKED, MASKED]
