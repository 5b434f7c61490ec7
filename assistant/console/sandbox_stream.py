"""The sandbox's answer as server-sent events: `waiting` while a local model keeps the question
in line, `token` events while the generator writes, then `done` with the whole answer rendered
from Markdown (sanitised), or `error`."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterator

from asgiref.sync import sync_to_async
from django.http import HttpRequest, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.views.decorators.http import require_GET

from assistant.ask.services import UNAVAILABLE
from assistant.console.sandbox import UnknownStream, sandbox_answer_stream
from assistant.console_shell.access import staff_required_async
from assistant.markdown import render
from assistant.rag.ports import GeneratorUnavailable
from assistant.rag.types import Part, Waiting

logger = logging.getLogger(__name__)
_END = object()


def _event(name: str, data: dict[str, str]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _next(tokens: Iterator[Part]) -> object:
    return next(tokens, _END)


async def _events(token: str) -> AsyncIterator[bytes]:
    tokens: Iterator[Part] | None = None
    try:
        tokens = await sync_to_async(sandbox_answer_stream)(token=token)
        parts: list[str] = []
        # One thread hop per token: the generator blocks (models, HTTP to Ollama).
        while (part := await sync_to_async(_next)(tokens)) is not _END:
            if isinstance(part, Waiting):
                yield _event("waiting", {"ahead": str(part.ahead), "read": f"{part.read:.2f}"})
                continue
            if not isinstance(part, str):
                continue  # the sandbox shows the model's own text, unchecked (a Cut ends it)
            parts.append(part)
            yield _event("token", {"text": part})
        yield _event("done", {"html": render("".join(parts))})
    except UnknownStream as exc:
        yield _event("error", {"message": str(exc)})
    except GeneratorUnavailable as exc:
        logger.warning("sandbox generator unavailable: %s", exc)
        yield _event("error", {"message": UNAVAILABLE})
    finally:
        if tokens is not None:
            await sync_to_async(getattr(tokens, "close", lambda: None))()


@require_GET
@staff_required_async
async def sandbox_answer(request: HttpRequest, token: str) -> HttpResponseBase:
    response = StreamingHttpResponse(_events(token), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response
