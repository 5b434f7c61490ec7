"""The same answer frames as the WebSocket, as server-sent events, for hosts where WebSockets
are blocked: `POST /api/v1/ask/stream` with a JSON body (read it with fetch), or `GET` with
query parameters (EventSource). Each frame is one event named after its type.

Checks that can fail before anything is streamed answer with a 4xx JSON error like the rest
of the API (401/403 key and origin, 400 bad question, 429 rate limit)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from assistant.ask.api import authorise
from assistant.ask.api_errors import ApiError, json_error
from assistant.ask.ratelimits import RATE_LIMITED, ask_is_limited
from assistant.ask.streaming import FrameError, answer_frames, parse_request

MAX_BODY_BYTES = 16_000


def _authorised(request: HttpRequest, key: str) -> Any:
    return authorise(request, key)  # type: ignore[arg-type]  # only reads the headers


@csrf_exempt  # no cookies are read: the project key and the Origin let a request in
@require_http_methods(["GET", "POST"])
async def ask_stream(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        if len(request.body) > MAX_BODY_BYTES:
            return json_error("invalid", "The request is too large.", 400)
        try:
            data = json.loads(request.body or b"null")
        except (json.JSONDecodeError, UnicodeDecodeError):
            return json_error("malformed_json", "The body is not JSON.", 400)
        if not isinstance(data, dict):
            return json_error("invalid", 'Send a JSON object like {"question": "..."}.', 400)
    else:
        data = request.GET.dict()
    key = data.get("project") or request.headers.get("X-Project-Key", "")
    try:
        project = await sync_to_async(_authorised)(request, str(key))
    except ApiError as exc:
        return json_error(exc.error_code, str(exc.detail), exc.status_code)
    try:
        question = parse_request(data)
    except FrameError as exc:
        return json_error(exc.code, exc.message, 400)
    if await sync_to_async(ask_is_limited)(
        client=request.META.get("REMOTE_ADDR", ""), conversation_id=question.conversation_id
    ):
        return json_error("rate_limited", RATE_LIMITED, 429)
    response = StreamingHttpResponse(
        _events(answer_frames(project=project, request=question)),
        content_type="text/event-stream",
    )
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
    return response


async def _events(frames: AsyncIterator[dict[str, Any]]) -> AsyncIterator[bytes]:
    # Django closes this iterator when the client disconnects; closing `frames` stops the answer.
    try:
        async for frame in frames:
            yield f"event: {frame['type']}\ndata: {json.dumps(frame)}\n\n".encode()
    finally:
        await frames.aclose()  # type: ignore[attr-defined]
