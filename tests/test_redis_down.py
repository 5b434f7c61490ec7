"""Redis down (a real refused connection: the cache, the retrieval cache and the rate-limit
counters all point at a port where nothing listens). Asking and voting go on: allowed origins
are read from the database, rate limits fail open with a warning, the retrieval cache is
skipped. Nothing answers with an HTML 500."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from assistant.ask import ratelimits
from assistant.models import Interaction, Project
from assistant.wiring import runtime
from config.asgi import application
from tests.fake_ollama import unused_url

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = "http://127.0.0.1:8000"
REFUND = {"question": "How do I get my money back?", "topic": "Billing"}


@pytest.fixture
def demo_project(transactional_db):  # noqa: ANN001, ANN201
    from assistant.demo import demo_seed

    return demo_seed().project


@pytest.fixture
def redis_down(settings):  # noqa: ANN001, ANN201
    dead = unused_url().replace("http://", "redis://") + "/0"
    redis_cache = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": dead}
    settings.CACHES = {"default": redis_cache, "retrieval": redis_cache}
    settings.REDIS_URL = dead
    for built in (ratelimits._storage, ratelimits._limiter):
        built.cache_clear()
    runtime.reset()
    yield dead
    for built in (ratelimits._storage, ratelimits._limiter):
        built.cache_clear()
    runtime.reset()


def test_rest_ask_and_feedback_answer_and_cors_still_follows_the_project(
    client, demo_project, redis_down
):
    response = client.post(
        "/api/v1/ask", {"project": demo_project.public_key, **REFUND},
        content_type="application/json", HTTP_ORIGIN=ORIGIN,
    )  # fmt: skip
    assert response.status_code == 200, response.content[:300]
    assert "refund" in response.json()["answer"].lower()
    assert response["Access-Control-Allow-Origin"] == ORIGIN
    vote = client.post(
        "/api/v1/feedback",
        {"project": demo_project.public_key, "answer_id": response.json()["answer_id"],
         "client_id": "client-redis-down", "vote": "up"},
        content_type="application/json", HTTP_ORIGIN=ORIGIN,
    )  # fmt: skip
    assert vote.status_code == 201, vote.content[:300]
    # An origin no project allows gets no CORS header: the fallback is the database, not "*".
    other = client.post(
        "/api/v1/ask", {"project": demo_project.public_key, **REFUND},
        content_type="application/json", HTTP_ORIGIN="https://evil.example",
    )  # fmt: skip
    assert "Access-Control-Allow-Origin" not in other
    assert other.status_code == 403 and other.json()["error"]["code"] == "origin_not_allowed"


def test_a_saved_project_does_not_fail_for_the_cache(demo_project, redis_down):
    demo_project.allowed_origins = [*demo_project.allowed_origins, "https://new.example"]
    demo_project.save()
    assert "https://new.example" in Project.objects.get(pk=demo_project.pk).allowed_origins


async def test_the_socket_and_sse_still_answer(async_client, demo_project, redis_down):
    communicator = WebsocketCommunicator(
        application, f"/ws/ask/?project={demo_project.public_key}",
        headers=[(b"origin", ORIGIN.encode())],
    )  # fmt: skip
    communicator.scope["client"] = ("127.0.0.1", 50000)
    assert (await communicator.connect())[0]
    await communicator.send_to(text_data=json.dumps(REFUND))
    frames = []
    while not frames or frames[-1]["type"] not in ("done", "error"):
        frames.append(json.loads(await communicator.receive_from(timeout=60)))
    await communicator.disconnect()
    assert frames[-1]["type"] == "done" and not frames[-1]["refused"]
    logged = await sync_to_async(Interaction.objects.get)(answer_id=frames[-1]["answer_id"])
    assert logged.error == "" and logged.latency_ms.get("cache_hit") is None  # no cache used

    response = await async_client.post(
        "/api/v1/ask/stream", {"project": demo_project.public_key, **REFUND},
        content_type="application/json", headers={"origin": ORIGIN},
    )  # fmt: skip
    assert response.status_code == 200
    body = b"".join([chunk async for chunk in response.streaming_content]).decode()
    assert "event: done" in body
