"""The widget's WebSocket, through the real ASGI stack and the real pipeline on the demo content.

These tests are transactional (the consumer reads and writes from worker threads, so it must
see committed data); the flush after each one removes the session-seeded demo project, so each
test seeds it again (idempotent)."""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from assistant.ask.consumers import (
    CLOSE_ORIGIN_NOT_ALLOWED,
    CLOSE_TOO_MANY_SOCKETS,
    CLOSE_UNKNOWN_PROJECT,
)
from assistant.models import Interaction
from assistant.rag.types import SORRY
from assistant.wiring import runtime
from config.asgi import application
from tests.fake_ollama import FakeOllama
from tests.servers import free_port

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = "http://127.0.0.1:8000"


@pytest.fixture
def demo_project(transactional_db):  # noqa: ANN001, ANN201
    from assistant.demo import demo_seed

    return demo_seed().project


def socket_for(project, origin=ORIGIN, client=None):  # noqa: ANN001, ANN201
    headers = [(b"origin", origin.encode())] if origin else []
    communicator = WebsocketCommunicator(
        application, f"/ws/ask/?project={project.public_key}", headers=headers
    )
    communicator.scope["client"] = (client or "127.0.0.1", 50000)
    return communicator


async def frames_until_end(communicator, timeout=60):  # noqa: ANN001, ANN201, ASYNC109
    frames = []
    while True:
        frame = json.loads(await communicator.receive_from(timeout=timeout))
        frames.append(frame)
        if frame["type"] in ("done", "error"):
            return frames


async def ask(communicator, **frame):  # noqa: ANN001, ANN201
    await communicator.send_to(text_data=json.dumps(frame))
    return await frames_until_end(communicator)


def random_client() -> str:
    return f"10.{random.randint(0, 255)}.{random.randint(0, 255)}.{random.randint(1, 254)}"


async def test_it_streams_sources_then_tokens_then_done(demo_project):
    communicator = socket_for(demo_project)
    assert (await communicator.connect())[0]
    frames = await ask(communicator, question="How do I get my money back?", topic="Billing")
    await communicator.disconnect()

    kinds = [f["type"] for f in frames]
    assert kinds[0] == "sources" and kinds[-1] == "done"
    assert set(kinds[1:-1]) == {"token"}
    sources = frames[0]["sources"]
    assert sources[0]["url"].startswith("https://help.acme.example/refunds")
    assert all(s["relevance"] >= 0.5 and s["title"] for s in sources)
    done = frames[-1]
    assert done["refused"] is False and done["conversation_id"]
    text = "".join(f["text"] for f in frames if f["type"] == "token")
    logged = await Interaction.objects.aget(answer_id=done["answer_id"])
    assert logged.answer == text and "refund" in text.lower()
    assert logged.channel == "widget" and logged.conversation_id == done["conversation_id"]
    assert "first_token_ms" in done["timings_ms"]


async def test_it_refuses_when_nothing_is_relevant(demo_project):
    communicator = socket_for(demo_project)
    await communicator.connect()
    frames = await ask(communicator, question="Do you offer a student discount?")
    await communicator.disconnect()

    assert [f["type"] for f in frames] == ["sources", "token", "done"]
    assert frames[0]["sources"] == [] and frames[1]["text"] == SORRY
    assert frames[2]["refused"] is True


async def closed_with(communicator: WebsocketCommunicator) -> int:
    """A refused socket is accepted, then closed with a code the page can read (a refused
    handshake would only show the browser a bare failure)."""
    assert await communicator.connect() == (True, None)
    closing = await communicator.receive_output(timeout=10)
    assert closing["type"] == "websocket.close"
    return int(closing["code"])


BAD_FRAMES = [
    ("this is not json", "malformed_json"),
    (json.dumps(["a", "list"]), "invalid"),
    (json.dumps({"topic": "Billing"}), "invalid"),
    (json.dumps({"question": "   "}), "invalid"),
    (json.dumps({"question": "x" * 10_000}), "question_too_long"),
    (json.dumps({"question": "Refunds?", "topic": ["Billing"]}), "invalid"),
    (json.dumps({"question": "Refunds?", "conversation_id": "not-a-conversation"}),
     "unknown_conversation"),
    (json.dumps({"question": "Refunds?", "conversation_id": "../../etc"}),
     "unknown_conversation"),
]  # fmt: skip


async def test_it_answers_bad_frames_with_an_error_and_stays_usable(demo_project):
    before = await Interaction.objects.acount()
    communicator = socket_for(demo_project)
    await communicator.connect()
    for frame, code in BAD_FRAMES:
        await communicator.send_to(text_data=frame)
        error = json.loads(await communicator.receive_from(timeout=30))
        assert error["type"] == "error" and error["code"] == code and error["message"], frame
    assert await Interaction.objects.acount() == before

    frames = await ask(communicator, question="How do I rotate an API key?")
    await communicator.disconnect()
    assert frames[-1]["type"] == "done"


async def test_it_refuses_sockets_from_origins_the_project_does_not_allow(demo_project):
    for origin in ("https://evil.example", "null", ""):
        communicator = socket_for(demo_project, origin=origin)
        assert await closed_with(communicator) == CLOSE_ORIGIN_NOT_ALLOWED, origin

    demo_project.public_key = "pk_unknown"
    communicator = socket_for(demo_project)
    assert await closed_with(communicator) == CLOSE_UNKNOWN_PROJECT


async def test_a_socket_opened_before_its_project_was_deleted_gets_an_error_frame(demo_project):
    """It was let in when it opened; its next question finds the project gone. It used to be
    answered and logged against the deleted row (IntegrityError, FOREIGN KEY constraint)."""
    from assistant.models import Project

    communicator = socket_for(demo_project, client=random_client())
    await communicator.connect()
    assert (await ask(communicator, question="How do I rotate an API key?"))[-1]["type"] == "done"
    await Project.objects.filter(pk=demo_project.pk).adelete()
    frames = await ask(communicator, question="How do I rotate an API key?")
    await communicator.disconnect()
    assert [(f["type"], f.get("code")) for f in frames] == [("error", "unknown_project")]
    assert await Interaction.objects.acount() == 0


async def test_an_open_socket_follows_the_projects_allowed_origins(demo_project):
    communicator = socket_for(demo_project, client=random_client())
    await communicator.connect()
    demo_project.allowed_origins = ["https://elsewhere.example"]
    await demo_project.asave(update_fields=["allowed_origins"])
    frames = await ask(communicator, question="How do I rotate an API key?")
    await communicator.disconnect()
    assert [(f["type"], f.get("code")) for f in frames] == [("error", "origin_not_allowed")]


async def test_a_follow_up_keeps_its_conversation_and_is_read_with_the_earlier_one(demo_project):
    communicator = socket_for(demo_project)
    await communicator.connect()
    first = await ask(
        communicator, question="How do I manage retrieval endpoint tokens?", topic="Tokens"
    )
    conversation = first[-1]["conversation_id"]
    second = await ask(
        communicator, question="When does it expire?", topic="Tokens",
        conversation_id=conversation,
    )  # fmt: skip
    await communicator.disconnect()

    assert second[-1]["type"] == "done" and second[-1]["conversation_id"] == conversation
    logged = await Interaction.objects.aget(answer_id=second[-1]["answer_id"])
    assert logged.conversation_id == conversation
    # "it" points back: the form joined to the earlier question holds the answer and is the
    # one answered from, as the log says.
    assert logged.query_form == "with_history"
    assert logged.retrieval_query == (
        "(Tokens) How do I manage retrieval endpoint tokens? When does it expire?"
    )
    assert "90 days" in "".join(f.get("text", "") for f in second)


async def test_closing_the_socket_stops_the_generation_upstream(demo_project, settings):
    with FakeOllama() as ollama:
        ollama.tokens = [f" word{i}" for i in range(200)]
        ollama.stall_between_tokens = 0.1  # the whole answer would take 20 s
        settings.OLLAMA_HOST = ollama.url
        runtime.ollama_generator.cache_clear()
        try:
            communicator = socket_for(demo_project)
            await communicator.connect()
            await communicator.send_to(
                text_data=json.dumps({"question": "How do I get my money back?"})
            )
            kinds = []
            while "written" not in kinds:
                kinds.append(json.loads(await communicator.receive_from(timeout=60))["type"])
            # The quote came first; the model is writing (its words are held until a sentence
            # ends, and none does) when the visitor leaves.
            assert kinds[0] == "sources" and kinds[1] == "token"
            assert await asyncio.to_thread(lambda: _wait(lambda: ollama.requests_to("/api/chat")))
            await communicator.disconnect()

            chat = ollama.requests_to("/api/chat")[-1]
            assert await asyncio.to_thread(chat.disconnected.wait, 10)
            logged = await _wait_for_cancelled(demo_project)
            # What the visitor was shown is logged: the quote, none of the model's words.
            assert "refund within 30 days" in logged.answer and "word" not in logged.answer
        finally:
            runtime.ollama_generator.cache_clear()


def _wait(condition, seconds: float = 10):  # noqa: ANN001, ANN202
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not condition():
        time.sleep(0.05)
    return condition()


async def _wait_for_cancelled(project):  # noqa: ANN001, ANN202
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        row = await Interaction.objects.filter(project=project, error="cancelled").afirst()
        if row is not None:
            return row
        await asyncio.sleep(0.05)
    raise AssertionError("the interaction was not logged as cancelled")


async def test_it_says_busy_while_an_answer_is_streaming(demo_project, settings):
    with FakeOllama() as ollama:
        # A sentence of the demo's refund page: the written answer's check lets it through.
        sentence = "If you are not happy with a purchase, you can ask for a refund within 30 days"
        ollama.tokens = [f" {word}" for word in f"{sentence} of the charge [1].".split()]
        ollama.stall_between_tokens = 0.1
        settings.OLLAMA_HOST = ollama.url
        runtime.ollama_generator.cache_clear()
        try:
            communicator = socket_for(demo_project)
            await communicator.connect()
            question = json.dumps({"question": "How do I get my money back?"})
            await communicator.send_to(text_data=question)
            assert json.loads(await communicator.receive_from(timeout=60))["type"] == "sources"
            await communicator.send_to(text_data=question)
            frames = await frames_until_end(communicator)
            busy = [f for f in frames if f["type"] == "error"]
            assert busy and busy[0]["code"] == "busy"
            rest = await frames_until_end(communicator)
            assert rest[-1]["type"] == "done"
            said = frames + rest
            kinds = [f["type"] for f in said]
            written = said[kinds.index("written") :]
            text = "".join(f["text"] for f in written if f["type"] == "token")
            assert text == "".join(ollama.tokens).lstrip()
            await communicator.disconnect()
        finally:
            runtime.ollama_generator.cache_clear()


async def asked_of(ollama: FakeOllama, project, settings) -> list[dict]:  # noqa: ANN001
    """The frames of one question over the socket, written by the (scripted) fake Ollama."""
    settings.OLLAMA_HOST = ollama.url
    runtime.ollama_generator.cache_clear()
    try:
        communicator = socket_for(project)
        await communicator.connect()
        frames = await ask(communicator, question="How do I get my money back?")
        await communicator.disconnect()
        return frames
    finally:
        runtime.ollama_generator.cache_clear()


async def test_a_long_answer_is_cut_short(demo_project, settings):
    settings.ASKDOCS_MAX_ANSWER_CHARS = 100
    with FakeOllama() as ollama:
        ollama.tokens = [f" word{i:03d}" for i in range(300)]
        frames = await asked_of(ollama, demo_project, settings)
    text = "".join(f["text"] for f in frames if f["type"] == "token")
    assert frames[-1]["type"] == "done" and frames[-1]["truncated"] is True
    assert 100 <= len(text) < 120
    logged = await Interaction.objects.aget(answer_id=frames[-1]["answer_id"])
    assert logged.answer == text and logged.error == ""


async def test_it_rate_limits_questions_per_client(demo_project, settings):
    settings.ASKDOCS_RATE_ASK_PER_CLIENT = "2/h"  # per hour: a minute window may roll over mid-test
    communicator = socket_for(demo_project, client=random_client())
    await communicator.connect()
    for _ in range(2):
        frames = await ask(communicator, question="Do you offer a student discount?")
        assert frames[-1]["type"] == "done"
    frames = await ask(communicator, question="Do you offer a student discount?")
    assert frames == [{"type": "error", "code": "rate_limited", "message": frames[0]["message"]}]
    await communicator.disconnect()

    other = socket_for(demo_project, client=random_client())
    await other.connect()
    assert (await ask(other, question="Do you offer a student discount?"))[-1]["type"] == "done"
    await other.disconnect()


async def test_it_rate_limits_questions_per_conversation(demo_project, settings):
    # per hour: a minute window may roll over mid-test
    settings.ASKDOCS_RATE_ASK_PER_CONVERSATION = "1/h"
    communicator = socket_for(demo_project, client=random_client())
    await communicator.connect()
    first = await ask(communicator, question="Do you offer a student discount?")
    conversation = first[-1]["conversation_id"]
    again = await ask(communicator, question="And for schools?", conversation_id=conversation)
    assert again[-1]["code"] == "rate_limited"
    fresh = await ask(communicator, question="Do you offer a student discount?")
    assert fresh[-1]["type"] == "done"
    await communicator.disconnect()


async def test_an_unavailable_model_falls_back_to_quoting_and_the_done_frame_says_so(
    demo_project, settings
):
    settings.OLLAMA_HOST = f"http://127.0.0.1:{free_port()}"
    runtime.ollama_generator.cache_clear()
    try:
        communicator = socket_for(demo_project)
        await communicator.connect()
        frames = await ask(communicator, question="How do I get my money back?")
        await communicator.disconnect()
    finally:
        runtime.ollama_generator.cache_clear()
    done = frames[-1]
    assert done["type"] == "done" and not done["refused"]
    assert done["generator"] == "extractive" and "unavailable" in done["fallback"]
    text = "".join(f["text"] for f in frames if f["type"] == "token")
    assert "refund" in text and text.rstrip().endswith("]")
    logged = await sync_to_async(Interaction.objects.get)(answer_id=uuid.UUID(done["answer_id"]))
    assert (logged.generator, logged.error) == ("extractive", "")


async def test_a_quoted_answer_streams_word_by_word_at_the_reading_pace(demo_project, settings):
    """The extractive answer exists whole at once; the socket still sends it as it would be
    written, in many frames, at most ASKDOCS_STREAM_WORDS_PER_SECOND words a second."""
    settings.ASKDOCS_STREAM_WORDS_PER_SECOND = 200
    communicator = socket_for(demo_project)
    await communicator.connect()
    loop = asyncio.get_running_loop()
    started = loop.time()
    frames = await ask(communicator, question="How do I get my money back?", topic="Billing")
    elapsed = loop.time() - started
    await communicator.disconnect()
    tokens = [f["text"] for f in frames if f["type"] == "token"]
    words = "".join(tokens).split()
    assert len(words) > 20 and len(tokens) >= len(words)  # a frame a word, never merged
    assert elapsed >= (len(words) - 1) / 200  # the pace held


async def test_one_address_may_hold_only_so_many_sockets(demo_project, settings):
    """One address once opened any number of sockets; now the one past the cap is closed
    with 4429, other addresses are not affected, and a closed socket frees its place."""
    settings.ASKDOCS_WEBSOCKETS_PER_CLIENT = 2
    held = [socket_for(demo_project, client="203.0.113.7") for _ in range(2)]
    for socket in held:
        connected, _ = await socket.connect()
        assert connected
    extra = socket_for(demo_project, client="203.0.113.7")
    assert await extra.connect() == (True, None)
    frame = json.loads(await extra.receive_from(timeout=10))
    assert frame["type"] == "error" and frame["code"] == "too_many_sockets"
    closing = await extra.receive_output(timeout=10)
    assert (closing["type"], closing["code"]) == ("websocket.close", CLOSE_TOO_MANY_SOCKETS)

    elsewhere = socket_for(demo_project, client="198.51.100.9")
    await elsewhere.connect()
    assert (await ask(elsewhere, question="How do I get a refund?"))[-1]["type"] == "done"
    await elsewhere.disconnect()

    await held[0].disconnect()
    again = socket_for(demo_project, client="203.0.113.7")
    await again.connect()
    assert (await ask(again, question="How do I get a refund?"))[-1]["type"] == "done"
    for socket in (held[1], again):
        await socket.disconnect()


async def test_a_written_answer_without_a_first_word_in_time_leaves_the_quote_as_the_answer(
    demo_project, settings
):
    settings.ASKDOCS_WRITE_WITHIN = 1.5
    with FakeOllama() as ollama:
        ollama.tokens = [f" word{i}" for i in range(200)]  # no sentence ever ends
        ollama.stall_between_tokens = 0.1
        frames = await asked_of(ollama, demo_project, settings)

    kinds = [f["type"] for f in frames]
    assert kinds[0] == "sources" and "written" in kinds and kinds[-1] == "done"
    done = frames[-1]
    assert done["written"] == "late"
    # Given up soon after the quote, not when the model's 20 s of words would have ended.
    assert done["timings_ms"]["generate_ms"] < 10_000
    logged = await Interaction.objects.aget(answer_id=done["answer_id"])
    assert "refund within 30 days" in logged.answer and "word" not in logged.answer
    assert logged.fallback == "ollama:llama3.2 was not ready in time"
    assert logged.generator == "extractive"  # the quote is the answer
