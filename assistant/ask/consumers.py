"""The widget's WebSocket: `/ws/ask/?project=<public key>`.

The page's Origin must be one of the project's allowed origins, else the handshake is refused.
Each text frame is a question `{question, topic?, conversation_id?}`; the answer comes back as
`sources`, `token`..., `done` (or `error`) frames. Bad frames get an `error` frame and the socket
stays open. A closed socket stops the answer being generated.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from assistant.ask.ratelimits import RATE_LIMITED, ask_is_limited
from assistant.ask.selectors import project_by_key
from assistant.ask.streaming import FrameError, answer_frames, error_frame, parse_request
from assistant.models import Project

#: Close codes sent with a refused handshake (4000-4999 are free for applications).
CLOSE_UNKNOWN_PROJECT = 4401
CLOSE_ORIGIN_NOT_ALLOWED = 4403
MAX_FRAME_BYTES = 16_000


def project_for_socket(scope: dict[str, Any]) -> tuple[Project | None, int]:
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    project = project_by_key((query.get("project") or [""])[0])
    if project is None:
        return None, CLOSE_UNKNOWN_PROJECT
    headers = dict(scope.get("headers") or [])
    origin = headers.get(b"origin", b"").decode("latin-1")
    if not project.allows_origin(origin):
        return None, CLOSE_ORIGIN_NOT_ALLOWED
    return project, 0


class AskConsumer(AsyncWebsocketConsumer):
    # Answers go straight down this socket: no groups, no channel-layer messages, so an idle
    # widget holds no channel-layer subscription (a blocking Redis poll per socket otherwise).
    channel_layer_alias = "no-channel-layer"
    project: Project
    answering: asyncio.Task[None] | None = None
    busy = False  # an answer is on its way (until its done / error frame is sent)

    async def connect(self) -> None:
        project, refusal = await database_sync_to_async(project_for_socket)(self.scope)
        if project is None:
            await self.close(code=refusal)
            return
        self.project = project
        await self.accept()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if text_data is None or len(text_data) > MAX_FRAME_BYTES:
            await self.send_frame(error_frame("invalid", "Send questions as JSON text frames."))
            return
        try:
            request = parse_request(json.loads(text_data))
        except json.JSONDecodeError:
            await self.send_frame(error_frame("invalid", "That was not JSON."))
            return
        except FrameError as exc:
            await self.send_frame(exc.frame())
            return
        if self.busy:
            await self.send_frame(
                error_frame("busy", "Wait for the current answer before asking again.")
            )
            return
        client = (self.scope.get("client") or ["0.0.0.0"])[0]  # noqa: S104
        if await database_sync_to_async(ask_is_limited)(
            client=client, conversation_id=request.conversation_id
        ):
            await self.send_frame(error_frame("rate_limited", RATE_LIMITED))
            return
        # Answer in a task of its own, so a disconnect is handled (and cancels it) at once.
        self.busy = True
        self.answering = asyncio.create_task(self.answer(request))

    async def answer(self, request: Any) -> None:
        frames = answer_frames(project=self.project, request=request)
        try:
            async for frame in frames:
                if frame["type"] in ("done", "error"):
                    # The client may ask again as soon as it reads this frame.
                    self.busy = False
                await self.send_frame(frame)
        finally:
            self.busy = False
            await frames.aclose()

    async def disconnect(self, code: int) -> None:
        if self.answering is not None and not self.answering.done():
            self.answering.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.answering

    async def send_frame(self, frame: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps(frame))
