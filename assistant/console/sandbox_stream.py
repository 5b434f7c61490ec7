"""The sandbox's answer as server-sent events, as the widget's answer streams: `waiting` while a
local model keeps the question in line, `token` events (the quote first, with a model that
writes), `written` where the model's checked written answer follows it, then `done` with the
answer rendered from Markdown (sanitised) and how a written answer ended, or `error`."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterator

from asgiref.sync import sync_to_async
from django.http import HttpRequest, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils.html import escape
from django.views.decorators.http import require_GET

from assistant.console.sandbox import UnknownStream, sandbox_answer_stream
from assistant.console_shell.access import staff_required_async
from assistant.errors import UNAVAILABLE
from assistant.markdown import render
from assistant.rag.ports import GeneratorUnavailable
from assistant.rag.types import Outcome, Part, Waiting, Written

logger = logging.getLogger(__name__)
_END = object()


def _event(name: str, data: dict[str, str]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _next(parts: Iterator[Part]) -> object:
    return next(parts, _END)


def answer_html(quote: str, written: str, outcome: Outcome) -> str:
    """The answer as the widget shows it: the quote, and under it a model's written answer with
    how it ended (the quote stands unless it was completed)."""
    html = render(quote)
    if not outcome.written:
        return html
    note = (
        "The written answer replaces the quote where an answer is given in one piece."
        if outcome.written == "complete"
        else f"Written answer: {outcome.written}; the quote is the answer."
    )
    return (
        f'{html}<section class="written" data-testid="written">{render(written)}'
        f'<p class="muted small" data-written="{escape(outcome.written)}">{escape(note)}</p>'
        "</section>"
    )


async def _events(token: str) -> AsyncIterator[bytes]:
    parts: Iterator[Part] | None = None
    try:
        answer = await sync_to_async(sandbox_answer_stream)(token=token)
        parts = answer.parts
        said: dict[bool, list[str]] = {False: [], True: []}
        writing, outcome = False, Outcome(answer.generator_id)
        # One thread hop per part: the generator blocks (models, HTTP to a model server).
        while (part := await sync_to_async(_next)(parts)) is not _END:
            if isinstance(part, Waiting):
                yield _event("waiting", {"ahead": str(part.ahead), "read": f"{part.read:.2f}"})
            elif isinstance(part, Written):
                writing = True
                yield _event("written", {})
            elif isinstance(part, Outcome):
                outcome = part
            elif isinstance(part, str):
                said[writing].append(part)
                yield _event("token", {"text": part})
        html = answer_html("".join(said[False]), "".join(said[True]), outcome)
        yield _event("done", {"html": html, "generator": outcome.generator,
                              "written": outcome.written})  # fmt: skip
    except UnknownStream as exc:
        yield _event("error", {"message": str(exc)})
    except GeneratorUnavailable as exc:
        logger.warning("sandbox generator unavailable: %s", exc)
        yield _event("error", {"message": UNAVAILABLE})
    finally:
        if parts is not None:
            await sync_to_async(getattr(parts, "close", lambda: None))()


@require_GET
@staff_required_async
async def sandbox_answer(request: HttpRequest, token: str) -> HttpResponseBase:
    response = StreamingHttpResponse(_events(token), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response
