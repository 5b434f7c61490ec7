"""The MCP server, driven by the official SDK's client over HTTP against the real ASGI app
(uvicorn in a thread), answering from the real pipeline over the demo help centre."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from assistant.models import Interaction, Project
from tests.asking import fill
from tests.conftest import secret_of
from tests.live_server import LiveAsgiServer

pytestmark = pytest.mark.django_db(transaction=True)

Session = Callable[[Client], Awaitable[Any]]


@pytest.fixture
def live(transactional_db) -> Iterator[tuple[LiveAsgiServer, Project]]:  # noqa: ANN001
    from assistant.demo import demo_seed

    project = demo_seed().project
    with LiveAsgiServer() as server:
        yield server, project


def run(url: str, key: str, session: Session, *, mode: str = "auto") -> Any:
    """Connect the SDK's client with `Authorization: Bearer <key>` and run `session`."""

    async def connect() -> Any:
        # The SDK's own timeouts: httpx's 5 s default can pass while a busy machine loads
        # the models for the first question.
        timeout = httpx2.Timeout(30, read=300)
        async with httpx2.AsyncClient(headers=bearer(key), timeout=timeout) as http:
            transport = streamable_http_client(f"{url}/mcp/", http_client=http)
            async with Client(transport, mode=mode) as client:
                return await session(client)

    return asyncio.run(connect())


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"} if key else {}


def call(url: str, key: str, tool: str, arguments: dict[str, Any]) -> Any:
    async def session(client: Client) -> Any:
        return await client.call_tool(tool, arguments)

    return run(url, key, session)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_it_lists_its_two_tools_with_their_arguments(live, mode):
    server, project = live

    async def session(client: Client) -> Any:
        return await client.list_tools()

    listed = run(server.url, secret_of(project), session, mode=mode)
    tools = {tool.name: tool for tool in listed.tools}

    assert set(tools) == {"search_docs", "ask"}
    search = tools["search_docs"].input_schema
    assert search["required"] == ["query"] and set(search["properties"]) == {"query", "topic"}
    ask = tools["ask"].input_schema
    assert ask["required"] == ["question"]
    assert set(ask["properties"]) == {"question", "topic", "conversation_id"}
    assert "passages" in tools["search_docs"].output_schema["properties"]


def test_a_search_returns_the_passages_that_pass_the_gate_and_is_logged(live):
    server, project = live

    result = call(
        server.url, secret_of(project), "search_docs",
        {"query": "How do I rotate an API key?", "topic": "settings"},
    )  # fmt: skip

    assert not result.is_error
    found = result.structured_content
    assert found["refused"] is False and found["refusal_reason"] == ""
    best = found["passages"][0]
    assert best["title"] == "API keys"
    assert best["heading_path"] == "Rotating and revoking keys"
    assert best["url"] == "https://help.acme.example/api-keys#rotating-and-revoking-keys"
    assert "Revoke" in best["text"]
    assert all(p["relevance"] >= project.threshold for p in found["passages"])
    logged = Interaction.objects.get(project=project)
    assert logged.channel == Interaction.Channel.MCP == "mcp"
    assert logged.question == "How do I rotate an API key?" and logged.topic == "settings"
    assert not logged.refused and logged.generator == "search"
    assert logged.kept_count == len(found["passages"])


def test_a_search_nothing_answers_is_an_explicit_refusal_and_a_blind_spot(live):
    server, project = live

    result = call(
        server.url, secret_of(project), "search_docs", {"query": "Who won the 1998 World Cup?"}
    )

    assert not result.is_error
    found = result.structured_content
    assert found["passages"] == [] and found["refused"] is True
    assert "relevance gate of 0.50" in found["refusal_reason"]
    assert found["best_relevance"] < found["threshold"] == project.threshold
    logged = Interaction.objects.get(project=project)
    assert logged.channel == "mcp" and logged.refused and logged.kept_count == 0


def test_ask_answers_with_sources_like_the_rest_door_and_follows_up(live):
    server, project = live

    async def session(client: Client) -> Any:
        first = await client.call_tool("ask", {"question": "How long do refunds take?"})
        follow_up = await client.call_tool(
            "ask",
            {
                "question": "And what about annual plans?",
                "conversation_id": first.structured_content["conversation_id"],
            },
        )
        return first, follow_up

    first, follow_up = run(server.url, secret_of(project), session)

    answer = first.structured_content
    assert not first.is_error and answer["refused"] is False
    assert answer["sources"] and answer["sources"][0]["url"].startswith(
        "https://help.acme.example/refunds"
    )
    assert answer["generator"] == "extractive"
    rest = httpx.post(
        f"{server.url}/api/v1/ask",
        json={"project": project.public_key, "question": "How long do refunds take?"},
        headers={"Authorization": f"Bearer {secret_of(project)}"},
    ).json()
    assert {k: answer[k] for k in ("answer", "refused", "sources", "generator")} == {
        k: rest[k] for k in ("answer", "refused", "sources", "generator")
    }
    assert not follow_up.is_error
    assert follow_up.structured_content["conversation_id"] == answer["conversation_id"]
    logged = Interaction.objects.filter(project=project, channel="mcp").order_by("created_at")
    assert [row.conversation_id for row in logged] == [answer["conversation_id"]] * 2
    assert str(logged[0].answer_id) == answer["answer_id"]


def test_a_question_the_docs_do_not_cover_is_refused_without_sources(live):
    server, project = live

    result = call(
        server.url, secret_of(project), "ask", {"question": "What is the capital of Peru?"}
    )

    answer = result.structured_content
    assert answer["refused"] is True and answer["sources"] == []
    assert answer["answer"] == "I'm sorry, I couldn't find an answer to your question."
    assert Interaction.objects.get(project=project).refused


@pytest.mark.parametrize(
    "key", ["sk_wrong", "", "public"], ids=["wrong secret", "no key", "the public key"]
)
def test_a_wrong_key_gets_401_and_nothing_is_served(live, key):
    server, project = live
    key = project.public_key if key == "public" else key
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}

    response = httpx.post(
        f"{server.url}/mcp/", json=body,
        headers={**bearer(key), "Accept": "application/json, text/event-stream"},
    )  # fmt: skip

    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    error = response.json()["error"]
    assert error["data"]["error"]["code"] == "secret_key_required"
    assert "tools" not in response.text
    with pytest.raises(Exception) as raised:
        call(server.url, key, "search_docs", {"query": "How do I rotate an API key?"})
    assert "secret_key_required" in repr(raised.value)  # the SDK's MCPError, with our code
    assert not Interaction.objects.exists()


def test_wrong_keys_are_counted_against_the_address(live, settings):
    """60 guessed keys once got 60 × 401: now an address that sent its share of wrong keys
    is refused, whatever key it sends next, until the window passes."""
    server, project = live
    settings.ASKDOCS_RATE_WRONG_KEYS_PER_CLIENT = "3/h"
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}

    def post(key: str) -> httpx.Response:
        return httpx.post(
            f"{server.url}/mcp/", json=body,
            headers={**bearer(key), "Accept": "application/json, text/event-stream"},
        )  # fmt: skip

    assert [post(f"sk_guess{n}").status_code for n in range(3)] == [401, 401, 401]
    refused = post("sk_guess4")
    assert refused.status_code == 429 and refused.headers["retry-after"] == "10"
    assert refused.json()["error"]["data"]["error"]["code"] == "rate_limited"
    assert post(secret_of(project)).status_code == 429  # not an oracle for the guesser


def test_a_browser_origin_the_project_does_not_allow_gets_403(live):
    server, project = live

    response = httpx.post(
        f"{server.url}/mcp/",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        headers={
            "Authorization": f"Bearer {secret_of(project)}",
            "Origin": "https://evil.example",
            "Accept": "application/json, text/event-stream",
        },
    )

    assert response.status_code == 403
    assert response.json()["error"]["data"]["error"]["code"] == "origin_not_allowed"


def test_the_rate_limit_of_the_intake_holds_for_ai_tools(live, settings):
    server, project = live
    settings.ASKDOCS_RATE_RETRIEVE_PER_CLIENT = "2/h"  # per hour: a minute may roll over

    async def session(client: Client) -> Any:
        return [
            await client.call_tool("search_docs", {"query": "How do I rotate an API key?"})
            for _ in range(3)
        ]

    results = run(server.url, secret_of(project), session)

    assert [r.is_error for r in results] == [False, False, True]
    assert "rate_limited" in results[2].content[0].text
    assert Interaction.objects.filter(project=project).count() == 2


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [("ask", {"question": "How do I get my money back?"}), ("search_docs", {"query": "refunds"})],
)
def test_a_full_server_tells_an_ai_tool_busy_at_once(live, narrow_gate, tool, arguments):
    server, project = live
    held = fill(project.public_key)

    result = call(server.url, secret_of(project), tool, arguments)
    del held

    assert result.is_error
    assert "busy: Too many questions right now" in result.content[0].text
    assert not Interaction.objects.exists()


@pytest.mark.parametrize(
    ("tool", "arguments", "code"),
    [
        ("search_docs", {"query": "   "}, "invalid"),
        ("search_docs", {"query": "x" * 5000}, "question_too_long"),
        ("search_docs", {"query": "refunds", "topic": "\x00"}, "invalid"),
        ("ask", {"question": "Refunds?", "conversation_id": "nope"}, "unknown_conversation"),
        ("ask", {"question": 5}, "validation error"),
        ("ask", {}, "validation error"),
    ],
)
def test_bad_input_is_a_tool_error_and_logs_nothing(live, tool, arguments, code):
    server, project = live

    result = call(server.url, secret_of(project), tool, arguments)

    assert result.is_error
    assert code in result.content[0].text
    assert not Interaction.objects.exists()


def test_an_unknown_tool_and_a_malformed_body_are_protocol_errors_not_500s(live):
    server, project = live
    headers = {
        "Authorization": f"Bearer {secret_of(project)}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }

    unknown = call(server.url, secret_of(project), "drop_tables", {})
    malformed = httpx.post(f"{server.url}/mcp/", content=b"{not json", headers=headers)
    huge = httpx.post(f"{server.url}/mcp/", content=b" " * 200_000, headers=headers)

    assert unknown.is_error and "Unknown tool" in unknown.content[0].text
    assert malformed.status_code == 400 and "error" in json.loads(malformed.text)
    assert huge.status_code == 413


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
def test_only_post_is_served_the_stateless_server_has_no_stream_to_open(live, method):
    server, project = live

    response = httpx.request(
        method, f"{server.url}/mcp/", timeout=10,
        headers={"Authorization": f"Bearer {secret_of(project)}", "Accept": "text/event-stream"},
    )  # fmt: skip

    assert response.status_code == 405 and response.headers["allow"] == "POST"
    assert response.json()["error"]["data"]["error"]["code"] == "method_not_allowed"


def test_a_host_name_the_site_does_not_serve_is_refused_as_django_would(live):
    """The door stands beside Django's middleware, so it checks ALLOWED_HOSTS itself (a DNS
    rebinding page reaches the server under its own name)."""
    server, project = live
    response = httpx.post(
        f"{server.url}/mcp/", timeout=10, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"Authorization": f"Bearer {secret_of(project)}", "Host": "rebind.example"},
    )  # fmt: skip
    assert response.status_code == 400
    assert response.json()["error"]["data"]["error"]["code"] == "disallowed_host"


def test_with_https_on_plain_http_is_refused_and_a_proxys_https_is_served(live, settings):
    server, project = live
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

    plain = httpx.post(
        f"{server.url}/mcp/", timeout=10, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"Authorization": f"Bearer {secret_of(project)}"},
    )  # fmt: skip
    assert plain.status_code == 403
    assert plain.json()["error"]["data"]["error"]["code"] == "https_required"

    async def tools(client: Client) -> Any:
        return await client.list_tools()

    async def through_proxy() -> Any:
        headers = {**bearer(secret_of(project)), "X-Forwarded-Proto": "https"}
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as h:
            async with Client(streamable_http_client(f"{server.url}/mcp/", http_client=h)) as c:
                return await tools(c)

    listed = asyncio.run(through_proxy())
    assert {tool.name for tool in listed.tools} == {"search_docs", "ask"}
