"""A curated answer at every door a question comes in by (REST, server-sent events, the widget's
WebSocket, SMS, MCP): it answers its own project's visitors, never another project's, and once
retired it is never served again. The pipeline, the models and the stores are real; only
Twilio's REST API is faked (tests/fake_twilio.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator

from assistant.models import Interaction, Project
from assistant.rag.types import SORRY
from config.asgi import application
from ingestion.curated import curated_answer_retire, curated_answer_save
from tests.conftest import secret_of
from tests.curated_fixtures import ANSWER, CHEAPER, LINK, ORIGIN, plans_project
from tests.live_server import LiveAsgiServer
from tests.sms import conftest as sms
from tests.sms.conftest import Webhook, twiml_messages

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("restore_demo")]

twilio = sms.twilio
restore_demo = sms.restore_demo

#: What a door said: (refused, answer text, sources with their curated flag).
Said = tuple[bool, str, list[dict[str, Any]]]


def rest(server: LiveAsgiServer, project: Project, question: str) -> Said:
    response = httpx.post(
        f"{server.url}/api/v1/ask",
        json={"project": project.public_key, "question": question, "topic": "Billing"},
        headers={"Origin": ORIGIN}, timeout=120,
    )  # fmt: skip
    assert response.status_code == 200, response.text
    body = response.json()
    return body["refused"], body["answer"], body["sources"]


def sse(server: LiveAsgiServer, project: Project, question: str) -> Said:
    response = httpx.get(
        f"{server.url}/api/v1/ask/stream",
        params={"project": project.public_key, "question": question, "topic": "Billing"},
        headers={"Origin": ORIGIN}, timeout=120,
    )  # fmt: skip
    assert response.status_code == 200, response.text
    frames = [
        json.loads(line.removeprefix("data: "))
        for line in response.text.splitlines()
        if line.startswith("data: ")
    ]
    return _from_frames(frames)


def socket(server: LiveAsgiServer, project: Project, question: str) -> Said:
    async def run() -> list[dict[str, Any]]:
        communicator = WebsocketCommunicator(
            application, f"/ws/ask/?project={project.public_key}",
            headers=[(b"origin", ORIGIN.encode())],
        )  # fmt: skip
        communicator.scope["client"] = ("127.0.0.7", 50000)
        connected, _ = await communicator.connect()
        assert connected
        await communicator.send_to(text_data=json.dumps({"question": question, "topic": "Billing"}))
        frames = []
        while not frames or frames[-1]["type"] not in ("done", "error"):
            frames.append(json.loads(await communicator.receive_from(timeout=120)))
        await communicator.disconnect()
        return frames

    return _from_frames(async_to_sync(run)())


def mcp(server: LiveAsgiServer, project: Project, question: str) -> Said:
    answer = mcp_tool(server, project, "ask", {"question": question, "topic": "Billing"})
    return answer["refused"], answer["answer"], answer["sources"]


def mcp_tool(
    server: LiveAsgiServer, project: Project, tool: str, arguments: dict[str, str]
) -> dict[str, Any]:
    """A JSON-RPC `tools/call` with the project's secret key; the tool's structured result."""
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}  # fmt: skip
    headers = {
        "Authorization": f"Bearer {secret_of(project)}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    response = httpx.post(f"{server.url}/mcp/", json=call, headers=headers, timeout=120)
    assert response.status_code == 200, response.text
    return response.json()["result"]["structuredContent"]


def _from_frames(frames: list[dict[str, Any]]) -> Said:
    assert frames[-1]["type"] == "done", frames[-1]
    text = "".join(f["text"] for f in frames if f["type"] == "token")
    sources = next(f["sources"] for f in frames if f["type"] == "sources")
    return frames[-1]["refused"], text, sources


DOORS: dict[str, Callable[[LiveAsgiServer, Project, str], Said]] = {
    "rest": rest, "sse": sse, "socket": socket, "mcp": mcp,
}  # fmt: skip


@pytest.mark.parametrize("door", [*DOORS, "sms"])
def test_a_curated_answer_serves_its_project_only_and_never_once_retired(door, client, twilio):
    ours = plans_project("Acme", "+15550100301")
    theirs = plans_project("Other company", "+15550100302")
    webhook = Webhook(client)

    def ask(project: Project, question: str = CHEAPER) -> Said:
        if door == "sms":
            [reply] = twiml_messages(webhook.post(question, to=project.sms_number))
            return reply == SORRY, reply, []
        return DOORS[door](server, project, question)

    with LiveAsgiServer() as server:
        # Refused today, as the demo's visitor was.
        assert ask(ours)[0] is True

        curated = curated_answer_save(
            project=ours, phrasings=[CHEAPER, "Can I downgrade mid-cycle?"], answer=ANSWER,
            url=LINK,
        )  # fmt: skip
        refused, text, sources = ask(ours)
        assert refused is False
        assert "next billing period" in text
        if door != "sms":
            assert sources[0]["curated"] is True and sources[0]["url"] == LINK
        else:
            assert LINK in text  # the SMS reply ends with the link of what it quoted

        # Another project with the same documents never gets it.
        refused, text, sources = ask(theirs)
        assert refused is True and text == SORRY and sources == []

        curated_answer_retire(curated=curated)
        refused, text, sources = ask(ours)
        assert refused is True and not any(s.get("curated") for s in sources)

    curated.refresh_from_db()
    assert curated.answered_count == 1 and curated.last_answered_at is not None
    answered = Interaction.objects.filter(project=ours, refused=False).get()
    assert answered.sources[0]["curated"] is True


def test_mcp_search_marks_a_curated_passage_and_drops_it_once_retired():
    ours = plans_project("Acme")
    theirs = plans_project("Other company")
    curated = curated_answer_save(project=ours, phrasings=[CHEAPER], answer=ANSWER, url=LINK)
    query = {"query": CHEAPER, "topic": "Billing"}
    with LiveAsgiServer() as server:
        found = mcp_tool(server, ours, "search_docs", query)
        assert found["passages"][0]["curated"] is True
        assert "next billing period" in found["passages"][0]["text"]
        assert mcp_tool(server, theirs, "search_docs", query)["passages"] == []
        curated_answer_retire(curated=curated)
        assert mcp_tool(server, ours, "search_docs", query)["passages"] == []
