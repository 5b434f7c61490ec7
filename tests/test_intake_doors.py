"""One table of bad (and good) requests, run through every door a question comes in by: REST
ask and retrieve, server-sent events (POST and GET), feedback, the WebSocket, the SMS webhook,
the console sandbox, `manage.py ask` and the MCP server's `ask` tool. Each door must answer
the same bad input with the same error code (as a 4xx, an error frame, a close code, a field
error, a CommandError or an MCP tool error), never a 500 or a 1011, and must log nothing for
it."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote_from_bytes, urlencode

import httpx
import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.core.management import CommandError, call_command

from assistant.demo import demo_seed
from assistant.models import Interaction
from config.asgi import application
from tests.conftest import secret_of
from tests.live_server import LiveAsgiServer
from tests.sms import conftest as sms
from tests.sms.conftest import FIELD_NUMBER, Webhook

pytestmark = pytest.mark.django_db(transaction=True)

# The SMS door's fixtures: the channel configured (Twilio's REST API faked) and a project
# with a number.
twilio = sms.twilio
field_project = sms.field_project

ORIGIN = "http://127.0.0.1:8000"
GOOD = "How do I get my money back?"
NESTED = '{"question": ' + "[" * 2000 + "]" * 2000 + "}"


@dataclass(frozen=True)
class Row:
    name: str
    question: Any = GOOD  # None: left out
    extra: dict[str, Any] | None = None
    raw: str | None = None  # a body sent as is (JSON doors only)
    #: Question text as raw bytes (not UTF-8): sent as is in a JSON body, percent-escaped in
    #: a URL.
    question_bytes: bytes | None = None
    content_type: str = "application/json"
    key: str | None = None  # None: the project's public key
    origin: str | None = ORIGIN
    code: str = "invalid"
    #: Doors where the input cannot be expressed (a URL cannot carry a lone surrogate, an SMS
    #: has no topic) or does not apply.
    skip: frozenset[str] = frozenset()

    def raw_body(self, key: str, **fields: Any) -> bytes:
        """The JSON body, with the question's raw bytes in place when there are any."""
        if self.raw is not None:
            return self.raw.encode("utf-8", "surrogatepass")
        body = {**self.body(key), **fields}
        if self.question_bytes is None:
            return json.dumps(body).encode()
        body.pop("question", None)
        head = json.dumps(body).encode()[:-1]
        return head + b', "question": "' + self.question_bytes + b'"}'

    def body(self, key: str) -> dict[str, Any]:
        body: dict[str, Any] = {"project": key, **(self.extra or {})}
        if self.question is not None:
            body["question"] = self.question
        return body


NOT_JSON = frozenset({"stream_get", "sms", "sandbox", "cli"})
NO_AUTH = frozenset({"sms", "sandbox", "cli"})
QUESTION_DOORS = frozenset({"feedback"})
ROWS = [
    Row("nested JSON 2,000 deep", raw=NESTED, code="malformed_json", skip=NOT_JSON),
    Row("not JSON", raw='{"question": "hi",', code="malformed_json", skip=NOT_JSON),
    Row("a JSON list", raw='["a"]', code="invalid", skip=NOT_JSON),
    Row("invalid UTF-8", question_bytes=b"refund \xff\xfe?", code="not_utf8",
        skip=NOT_JSON - {"stream_get"} | {"socket"}),
    Row("an encoded surrogate (invalid UTF-8)", question_bytes=b"refund \xed\xa0\x80?",
        code="not_utf8", skip=NOT_JSON - {"stream_get"} | {"socket"}),
    Row("a text/plain body", content_type="text/plain", code="unsupported_media_type",
        skip=NOT_JSON | {"socket"}),
    Row("a lone surrogate", question="\ud800 refund?", skip=NOT_JSON - {"cli"} | {"sms"}),
    Row("a NUL byte", question="refund\x00?"),
    Row("a question too long", question="x" * 2001, code="question_too_long", skip={"sms"}),
    Row("a topic too long", extra={"topic": "t" * 201}, skip={"sms"}),
    Row("a question that is not text", question=42, skip=NOT_JSON),
    Row("no question", question=None, skip={"sms"}),
    # The tokenizer drops these, so the models would read an empty question (relevance 0.99).
    Row("a question of U+FFFD only", question="\ufffd", skip={"feedback"}),
    Row("two zero-width spaces", question="\u200b\u200b", skip={"feedback"}),
    Row("two soft hyphens", question="\u00ad\u00ad", skip={"feedback"}),
    Row("a private-use character", question="\ue000", skip={"feedback"}),
    Row("a malformed conversation id", extra={"conversation_id": "../../etc"},
        code="unknown_conversation", skip=NO_AUTH | {"retrieve"}),
    Row("an unknown conversation id", extra={"conversation_id": "c0ffee"},
        code="unknown_conversation", skip=NO_AUTH | {"retrieve"}),
    Row("an unknown project", key="pk_nope", code="unknown_project", skip=NO_AUTH),
    Row("an origin the project does not allow", origin="https://evil.example",
        code="origin_not_allowed", skip=NO_AUTH),
    Row("an allowed origin behind a user part", origin="http://evil.example@127.0.0.1:8000",
        code="origin_not_allowed", skip=NO_AUTH),
    Row("an allowed host on another port", origin="http://127.0.0.1:8001",
        code="origin_not_allowed", skip=NO_AUTH),
    Row("an allowed host on another scheme", origin="https://127.0.0.1:8000",
        code="origin_not_allowed", skip=NO_AUTH),
    Row("no origin and no secret key", origin=None, code="origin_required",
        skip=NO_AUTH | {"socket"}),
]  # fmt: skip
DOORS = ["ask", "retrieve", "stream_post", "stream_get", "feedback", "socket", "sms", "sandbox",
         "cli", "mcp"]  # fmt: skip
#: Rows the MCP door cannot express: it speaks JSON-RPC (the SDK answers a body that is not, or
#: holds a lone surrogate, with a -32700 parse error and a 400), its tool's schema refuses a
#: missing or non-text question before the intake sees it (an MCP tool error all the same), and
#: the secret key alone names the project (tests/test_mcp.py has those cases).
MCP_INEXPRESSIBLE = frozenset({
    "nested JSON 2,000 deep", "not JSON", "a JSON list", "a lone surrogate",
    "a question that is not text", "no question", "an unknown project",
    "no origin and no secret key",
    # Bodies that are not UTF-8 JSON: the SDK's JSON-RPC parser refuses them (-32700) before
    # a tool is called (tests/test_mcp.py covers malformed bodies at this door).
    "invalid UTF-8", "an encoded surrogate (invalid UTF-8)", "a text/plain body",
})  # fmt: skip


@pytest.fixture
def demo(transactional_db):  # noqa: ANN001, ANN201
    return demo_seed().project


@pytest.fixture
def staff_client(client, django_user_model):  # noqa: ANN001, ANN201
    client.force_login(django_user_model.objects.create_user("ada", "a@x.example", is_staff=True))
    return client


def _http(client, path: str, row: Row, key: str) -> tuple[int, str]:  # noqa: ANN001
    headers = {"HTTP_ORIGIN": row.origin} if row.origin else {}
    response = client.post(path, row.raw_body(key), content_type=row.content_type, **headers)
    return response.status_code, response.json()["error"]["code"]


def _feedback(client, row: Row, key: str) -> tuple[int, str]:  # noqa: ANN001
    """Feedback has no question: its text field (the comment) carries the row's text."""
    body = {"project": key, "answer_id": "00000000-0000-4000-8000-000000000000",
            "client_id": "client-123", "vote": "down"}  # fmt: skip
    if isinstance(row.question, str) and row.question != GOOD:
        body["comment"] = row.question
    headers = {"HTTP_ORIGIN": row.origin} if row.origin else {}
    data = row.raw_body(key, **body) if row.raw is not None or row.question_bytes else body
    response = client.post(
        "/api/v1/feedback", data if isinstance(data, bytes) else json.dumps(data),
        content_type=row.content_type, **headers,
    )  # fmt: skip
    return response.status_code, response.json()["error"]["code"]


def _stream_get(client, row: Row, key: str) -> tuple[int, str]:  # noqa: ANN001
    headers = {"HTTP_ORIGIN": row.origin} if row.origin else {}
    query = urlencode(row.body(key))
    if row.question_bytes is not None:
        query += "&question=" + quote_from_bytes(row.question_bytes)
    response = client.get(f"/api/v1/ask/stream?{query}", **headers)
    return response.status_code, response.json()["error"]["code"]


def _socket(row: Row, key: str) -> tuple[int, str]:
    async def run() -> tuple[int, str]:
        headers = [(b"origin", row.origin.encode())] if row.origin else []
        socket = WebsocketCommunicator(application, f"/ws/ask/?project={key}", headers=headers)
        socket.scope["client"] = ("127.0.0.9", 50000)
        await socket.connect()
        if row.key or row.origin != ORIGIN:  # refused at the door: a close code
            closing = await socket.receive_output(timeout=10)
            return int(closing["code"]), {4401: "unknown_project", 4403: "origin_not_allowed"}[
                closing["code"]
            ]
        await socket.send_to(
            text_data=row.raw if row.raw is not None else json.dumps(row.body(key))
        )
        frame = json.loads(await socket.receive_from(timeout=30))
        await socket.disconnect()
        assert frame["type"] == "error", frame
        return 400, frame["code"]

    return async_to_sync(run)()


def _sms(webhook: Webhook, row: Row) -> tuple[int, str]:
    response = webhook.post(row.question if isinstance(row.question, str) else "", to=FIELD_NUMBER)
    return response.status_code, response.content.decode().split(":")[0]


def _sandbox(staff_client, row: Row) -> tuple[int, str]:  # noqa: ANN001
    params = {k: v for k, v in row.body("").items() if k in ("question", "topic")}
    params.setdefault("question", "")
    response = staff_client.get("/admin/sandbox/", params)
    errors = response.context["form"].errors.as_data()
    codes = [e.code for field in ("question", "topic") for e in errors.get(field, [])]
    return (400 if codes else response.status_code), (codes[0] if codes else "")


def _mcp(url: str, secret: str, row: Row) -> tuple[int, str]:
    """A JSON-RPC `tools/call` of `ask` over HTTP; a tool error counts as a 400."""
    arguments = {k: v for k, v in row.body("").items() if k != "project"}
    headers = {"Authorization": f"Bearer {secret}", "Accept": "application/json, text/event-stream"}
    if row.origin:
        headers["Origin"] = row.origin
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "ask", "arguments": arguments}}  # fmt: skip
    headers["Content-Type"] = "application/json"
    # json.dumps escapes a lone surrogate (\ud800), as a client would send it.
    response = httpx.post(f"{url}/mcp/", content=json.dumps(call), headers=headers, timeout=60)
    body = response.json()
    if response.status_code != 200:
        return response.status_code, body["error"]["data"]["error"]["code"]
    result = body["result"]
    assert result["isError"], result
    return 400, result["content"][0]["text"].removeprefix("Error executing tool ask: ").split(":")[
        0
    ]


def _cli(row: Row) -> tuple[int, str]:
    options = {k: v for k, v in (row.extra or {}).items() if k == "topic"}
    try:
        call_command("ask", row.question if row.question is not None else "", **options)
    except CommandError as error:
        return 400, str(error).split(":")[0]
    return 200, ""


@pytest.mark.parametrize("door", DOORS)
def test_every_door_answers_bad_input_with_the_same_code(
    door: str,
    demo,
    client,
    staff_client,
    twilio,
    field_project,  # noqa: ANN001
) -> None:
    mcp = LiveAsgiServer() if door == "mcp" else nullcontext()
    with mcp:
        _through_the_door(door, demo, client, staff_client, mcp)


def _through_the_door(door: str, demo, client, staff_client, mcp) -> None:  # noqa: ANN001
    doors: dict[str, Callable[[Row], tuple[int, str]]] = {
        "ask": lambda row: _http(client, "/api/v1/ask", row, row.key or demo.public_key),
        "retrieve": lambda row: _http(client, "/api/v1/retrieve", row, row.key or demo.public_key),
        "stream_post": lambda row: _http(
            client, "/api/v1/ask/stream", row, row.key or demo.public_key
        ),
        "stream_get": lambda row: _stream_get(client, row, row.key or demo.public_key),
        "feedback": lambda row: _feedback(client, row, row.key or demo.public_key),
        "socket": lambda row: _socket(row, row.key or demo.public_key),
        "sms": lambda row: _sms(Webhook(client), row),
        "sandbox": lambda row: _sandbox(staff_client, row),
        "cli": _cli,
        "mcp": lambda row: _mcp(mcp.url, secret_of(demo), row),
    }
    before = Interaction.objects.count()
    checked = 0
    for row in ROWS:
        if door in row.skip or (door in QUESTION_DOORS and row.code in ("question_too_long",)):
            continue
        if door == "feedback" and row.name in ("no question", "a topic too long",
                                               "a question that is not text"):  # fmt: skip
            continue
        if door == "feedback" and "conversation" in row.name:
            continue
        if door == "mcp" and row.name in MCP_INEXPRESSIBLE:
            continue
        status, code = doors[door](row)
        assert 400 <= status < 500 or status in (4401, 4403), (row.name, status)
        assert code == row.code, (row.name, code)
        checked += 1
    assert checked  # every door has rows that apply to it
    assert Interaction.objects.count() == before  # nothing half-written for a bad request


@pytest.mark.parametrize(
    ("door", "setting"),
    [
        ("ask", "ASKDOCS_RATE_ASK_PER_CLIENT"),
        ("retrieve", "ASKDOCS_RATE_RETRIEVE_PER_CLIENT"),
        ("stream_post", "ASKDOCS_RATE_ASK_PER_CLIENT"),
        ("feedback", "ASKDOCS_RATE_FEEDBACK_PER_CLIENT"),
    ],
)
def test_every_web_door_is_rate_limited(door, setting, demo, client, settings) -> None:  # noqa: ANN001
    path = {"ask": "/api/v1/ask", "retrieve": "/api/v1/retrieve",
            "stream_post": "/api/v1/ask/stream", "feedback": "/api/v1/feedback"}[door]  # fmt: skip
    setattr(settings, setting, "1/h")
    answer = client.post(
        "/api/v1/ask", {"project": demo.public_key, "question": GOOD},
        content_type="application/json", HTTP_ORIGIN=ORIGIN,
    )  # fmt: skip
    body = {"project": demo.public_key, "question": GOOD, "answer_id": answer.json()["answer_id"],
            "client_id": "client-123", "vote": "up"}  # fmt: skip
    codes = []
    for _ in range(2 if door != "ask" else 1):
        response = client.post(path, body, content_type="application/json", HTTP_ORIGIN=ORIGIN)
        codes.append(response.status_code)
    assert codes[-1] == 429
    if door not in ("ask", "stream_post"):
        assert codes[0] in (200, 201)


def test_the_socket_is_rate_limited(demo, settings) -> None:  # noqa: ANN001
    settings.ASKDOCS_RATE_ASK_PER_CLIENT = "1/h"

    async def run() -> list[dict[str, Any]]:
        socket = WebsocketCommunicator(
            application,
            f"/ws/ask/?project={demo.public_key}",
            headers=[(b"origin", ORIGIN.encode())],
        )
        socket.scope["client"] = ("127.0.0.7", 50000)
        await socket.connect()
        frames = []
        for _ in range(2):
            await socket.send_to(text_data=json.dumps({"question": GOOD}))
            while True:
                frame = json.loads(await socket.receive_from(timeout=60))
                if frame["type"] in ("done", "error"):
                    frames.append(frame)
                    break
        await socket.disconnect()
        return frames

    first, second = async_to_sync(run)()
    assert first["type"] == "done"
    assert (second["type"], second["code"]) == ("error", "rate_limited")


def test_a_sender_over_the_sms_limit_gets_no_reply(client, twilio, field_project, settings) -> None:  # noqa: ANN001
    settings.ASKDOCS_RATE_SMS_PER_SENDER = "1/h"
    webhook = Webhook(client)
    first = webhook.post("How do I change the oil?", to=FIELD_NUMBER)
    second = webhook.post("And the filter?", to=FIELD_NUMBER)
    assert first.status_code == second.status_code == 200
    assert "<Message>" in first.content.decode()
    assert "<Message>" not in second.content.decode()  # no paid text for it


def test_the_stream_door_answers_what_django_would_answer_in_html_with_json(demo, client) -> None:  # noqa: ANN001
    """A POST with no Content-Type, a body over Django's upload limit, a GET with a thousand
    fields: each a JSON 4xx like the REST doors, not an answer and not Django's HTML 400."""
    body = json.dumps({"project": demo.public_key, "question": GOOD})
    bare = client.generic("POST", "/api/v1/ask/stream", body, HTTP_ORIGIN=ORIGIN)
    assert (bare.status_code, bare.json()["error"]["code"]) == (415, "unsupported_media_type")
    huge = client.post("/api/v1/ask/stream", b"{" + b" " * 3_000_000 + b"}",
                       content_type="application/json", HTTP_ORIGIN=ORIGIN)  # fmt: skip
    assert (huge.status_code, huge.json()["error"]["code"]) == (413, "too_large")
    fields = "&".join(f"f{n}=x" for n in range(1001))
    many = client.get(f"/api/v1/ask/stream?project={demo.public_key}&question=hi&{fields}",
                      HTTP_ORIGIN=ORIGIN)  # fmt: skip
    assert (many.status_code, many.json()["error"]["code"]) == (400, "invalid")
    assert not Interaction.objects.exists()
