"""Every door that answers a question says `busy` in its own shape when admission is full for
the project (assistant/admission.py): REST a JSON 503 with Retry-After, the SSE stream the same
503 before any stream, the WebSocket an `error` frame with `retry_after`, the socket staying
open and answering once there is room. In-process, with the project's places held by the test."""

from __future__ import annotations

import json

import pytest
from channels.testing import HttpCommunicator, WebsocketCommunicator

from assistant import admission
from config.asgi import application
from tests.asking import fill

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = "http://127.0.0.1:8000"
QUESTION = "How do I get my money back?"


@pytest.fixture
def demo_project(transactional_db):  # noqa: ANN001, ANN201
    from assistant.demo import demo_seed

    return demo_seed().project


def assert_busy_503(response) -> None:  # noqa: ANN001
    assert response.status_code == 503
    assert int(response["Retry-After"]) >= 1
    assert response["Content-Type"].startswith("application/json")
    assert json.loads(response.content)["error"]["code"] == "busy"


def test_rest_answers_503_busy_with_retry_after(client, demo_project, narrow_gate) -> None:  # noqa: ANN001
    held = fill(demo_project.public_key)
    body = {"project": demo_project.public_key, "question": QUESTION}
    post = lambda: client.post(  # noqa: E731
        "/api/v1/ask", body, content_type="application/json", headers={"origin": ORIGIN}
    )
    assert_busy_503(post())
    for ticket in held:
        ticket.release()
    assert post().status_code == 200


async def test_sse_answers_503_before_any_stream(async_client, demo_project, narrow_gate) -> None:  # noqa: ANN001
    held = fill(demo_project.public_key)
    response = await async_client.post(
        "/api/v1/ask/stream", {"project": demo_project.public_key, "question": QUESTION},
        content_type="application/json", headers={"origin": ORIGIN},
    )  # fmt: skip
    assert_busy_503(response)
    assert not response.streaming
    del held


async def test_the_socket_gets_a_busy_frame_and_stays_open(demo_project, narrow_gate) -> None:  # noqa: ANN001
    held = fill(demo_project.public_key)
    socket = WebsocketCommunicator(
        application, f"/ws/ask/?project={demo_project.public_key}",
        headers=[(b"origin", ORIGIN.encode())],
    )  # fmt: skip
    socket.scope["client"] = ("10.9.8.7", 50000)
    connected, _ = await socket.connect()
    assert connected
    await socket.send_to(text_data=json.dumps({"question": QUESTION}))
    frame = json.loads(await socket.receive_from(timeout=30))
    assert (frame["type"], frame["code"]) == ("error", "busy") and frame["retry_after"] >= 1
    for ticket in held:
        ticket.release()
    await socket.send_to(text_data=json.dumps({"question": QUESTION}))
    kinds = []
    while not kinds or kinds[-1] not in ("done", "error"):
        kinds.append(json.loads(await socket.receive_from(timeout=60))["type"])
    assert kinds[0] == "sources" and kinds[-1] == "done"
    await socket.disconnect()


async def test_a_question_is_refused_before_django_when_nothing_could_be_admitted(
    demo_project,
    narrow_gate,  # noqa: ANN001
) -> None:
    held = fill(demo_project.public_key) + fill("another project")
    assert admission.gate().full()
    # Not even a project key: nothing of Django ran (its intake would answer 400 or 401).
    asked = HttpCommunicator(
        application, "POST", "/api/v1/ask", body=b"{}",
        headers=[(b"origin", ORIGIN.encode()), (b"content-type", b"application/json")],
    )  # fmt: skip
    response = await asked.get_response(timeout=30)
    headers = dict(response["headers"])
    assert response["status"] == 503 and int(headers[b"retry-after"]) >= 1
    assert json.loads(response["body"])["error"]["code"] == "busy"
    assert headers[b"access-control-allow-origin"] == ORIGIN.encode()
    del held
