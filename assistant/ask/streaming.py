"""Streamed answers for the widget, shared by the WebSocket consumer and the SSE view.

A question becomes frames, in order: `sources`, `token`s, then `done` or `error`. The pipeline
(`services.ask_stream`) is blocking (models, database), so it runs in a worker thread that hands
events to the event loop through an asyncio queue; the first token leaves as soon as the
generator yields it, and tokens are merged into one frame only when several are already waiting
(the client is behind). Closing the frame stream (a closed socket) tells the worker to stop: it
closes the pipeline's generator, which closes the model's stream and logs the interaction as
cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings

from assistant import admission
from assistant.ask import services
from assistant.ask.intake import AskRequest
from assistant.errors import UNAVAILABLE
from assistant.models import Interaction

logger = logging.getLogger(__name__)

_WORD = re.compile(r"\S+\s*|\s+")

Frame = dict[str, Any]


def error_frame(code: str, message: str) -> Frame:
    return {"type": "error", "code": code, "message": message}


async def answer_frames(
    *,
    request: AskRequest,
    channel: str = Interaction.Channel.WIDGET,
    ticket: admission.Ticket | None = None,
) -> AsyncGenerator[Frame, None]:
    """The frames of one answer to a question the intake let in (and admission, with its
    `ticket`: the answer starts on its turn). Closing this iterator early cancels the
    generation."""

    def events() -> Generator[services.Event, None, None]:
        limits = services.Limits(
            max_chars=settings.ASKDOCS_MAX_ANSWER_CHARS,
            max_seconds=settings.ASKDOCS_MAX_GENERATION_SECONDS,
            first_word_within=settings.ASKDOCS_WRITE_WITHIN,
        )
        return services.ask_stream(request, channel=channel, limits=limits)

    pace = _Pace(settings.ASKDOCS_STREAM_WORDS_PER_SECOND)
    async for event in _events_off_loop(events, ticket):
        if event.kind == "token":
            async for piece in pace.words(event.data["text"]):
                yield {"type": "token", "text": piece}
            continue
        frame: Frame = {"type": event.kind, **event.data}
        if event.kind == "done":
            frame["conversation_id"] = request.conversation_id
            frame["ask_a_person"] = ask_a_person(request)
        yield frame


def ask_a_person(request: AskRequest) -> dict[str, str] | None:
    """What the widget's "Ask a person" does for this project (None: it is not offered)."""
    project = request.project
    if not project.contact_support:
        return None
    link = project.contact_support == project.ContactSupport.LINK
    return {"via": project.contact_support, "url": project.contact_support_target if link else ""}


class _Pace:
    """Words no faster than `per_second` (0: as they come). A quoting answerer has its whole
    answer at once, which would land in one frame: at a reading pace the reader sees it being
    written, as with an LLM, whose tokens rarely come faster than this. The first word is never
    held back."""

    def __init__(self, per_second: float) -> None:
        self.gap = 1.0 / per_second if per_second > 0 else 0.0
        self.next_at = 0.0

    async def words(self, text: str) -> AsyncIterator[str]:
        if not self.gap:
            yield text
            return
        loop = asyncio.get_running_loop()
        for word in _WORD.findall(text):
            wait = self.next_at - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            self.next_at = max(loop.time(), self.next_at) + self.gap
            yield word


_END = object()
# A streamed answer holds its thread for the whole generation (an Ollama stream can take a
# minute), so answers get a pool of their own instead of the loop's small default one.
_ANSWER_THREADS = ThreadPoolExecutor(max_workers=32, thread_name_prefix="answer")


async def _events_off_loop(
    start: Callable[[], Generator[services.Event, None, None]],
    ticket: admission.Ticket | None = None,
) -> AsyncIterator[services.Event]:
    if ticket is not None:
        try:
            await ticket.turn()  # on the loop: no worker thread waits in line
        except BaseException:
            ticket.release()  # the visitor left while in line
            raise
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    stop = threading.Event()

    def hand_over(item: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is listening
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def work() -> None:
        events = start()
        try:
            for event in events:
                if stop.is_set():
                    break
                if event.kind == "written" and ticket is not None:
                    # The quote is out: a model's writing waits in its own line, not in this.
                    ticket.release()
                hand_over(event)
        except Exception:
            logger.exception("streaming an answer failed")
            hand_over(services.Event("error", {"code": "unavailable", "message": UNAVAILABLE}))
        finally:
            # Runs ask_stream's own `finally` in this thread: the model's stream is closed and
            # the interaction is logged (as cancelled when we stopped early).
            events.close()
            if ticket is not None:
                ticket.release()
            hand_over(_END)

    # Not thread-sensitive: each answer gets its own thread, so answers run side by side.
    worker = asyncio.ensure_future(
        database_sync_to_async(work, thread_sensitive=False, executor=_ANSWER_THREADS)()
    )
    try:
        while True:
            item = await queue.get()
            if item is _END:
                break
            for event in _merge_waiting_tokens(item, queue) if item.kind == "token" else [item]:
                yield event
    finally:
        stop.set()
        if not worker.done():
            # Let the worker finish its cleanup (close the model stream, log) on its own.
            worker.add_done_callback(_log_failure)


def _merge_waiting_tokens(first: services.Event, queue: asyncio.Queue[Any]) -> list[services.Event]:
    """The tokens already waiting as one event, then the event that ended the run, if any."""
    texts = [first.data["text"]]
    tail: list[Any] = []
    while not queue.empty():
        item = queue.get_nowait()
        if item is not _END and item.kind == "token":
            texts.append(item.data["text"])
            continue
        tail.append(item)
        break
    merged = [services.Event("token", {"text": "".join(texts)})]
    if tail and tail[0] is _END:
        queue.put_nowait(_END)
    else:
        merged += tail
    return merged


def _log_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("answer worker failed", exc_info=task.exception())
