"""The same answer frames as the WebSocket, as server-sent events, for hosts where WebSockets
are blocked: `POST /api/v1/ask/stream` with a JSON body (read it with fetch), or `GET` with
query parameters (EventSource). Each frame is one event named after its type.

Checks that can fail before anything is streamed answer with a 4xx JSON error like the rest
of the API (401/403 key and origin, 400 bad question, 429 rate limit), and a question the
server cannot answer in time with a 503 `busy` and Retry-After (assistant/admission.py)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from assistant import admission
from assistant.api_errors import intake_error_response
from assistant.ask import intake
from assistant.ask.intake import AskRequest, Caller
from assistant.ask.streaming import answer_frames
from assistant.errors import IntakeError


def _let_in(request: HttpRequest, data: dict[str, Any]) -> tuple[AskRequest, admission.Ticket]:
    key = data.get("project")
    caller = Caller.from_headers(
        request.headers, key=key if isinstance(key, str) else "",
        client=request.META.get("REMOTE_ADDR", ""),
    )  # fmt: skip
    project = intake.authorise(caller)
    asked = intake.ask_request(data, project=project, caller=caller)
    return asked, admission.admit(project.public_key)  # a 503 busy before the stream


@csrf_exempt  # no cookies are read: the project key and the Origin let a request in
@require_http_methods(["GET", "POST"])
async def ask_stream(request: HttpRequest) -> HttpResponseBase:
    try:
        if request.method == "POST":
            intake.require_json(request.content_type or "")
            # Read no more than the limit: `request.body` would answer a large body with HTML.
            data = intake.parse_json(request.read(intake.MAX_BODY_BYTES + 1))
        else:
            data = intake.parse_query(request.META.get("QUERY_STRING", ""))
        asked, ticket = await sync_to_async(_let_in)(request, data)
    except IntakeError as error:
        return intake_error_response(error)
    response = StreamingHttpResponse(
        _events(answer_frames(request=asked, ticket=ticket)), content_type="text/event-stream"
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
