"""The widget's WebSocket: `/ws/ask/?project=<public key>`.

The socket is let in by the intake like every other door: the page's Origin must be one of the
project's allowed origins. A refused socket is accepted and then closed with a code the page
can read (4401 unknown project key, 4403 origin not allowed): a refused handshake would only
show the browser a bare failure. Each text frame is a question `{question, topic?,
conversation_id?}`; the answer comes back as `sources`, `token`..., `done` (or `error`)
frames. Bad frames get an `error` frame and the socket stays open, as does a question the
server cannot answer in time (`busy`, with `retry_after` seconds: assistant/admission.py). A
closed socket stops the answer being generated.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from assistant import admission
from assistant.ask import intake
from assistant.ask.intake import AskRequest, Caller
from assistant.ask.streaming import answer_frames, error_frame
from assistant.errors import IntakeError
from assistant.models import Project

#: Close codes for a refused socket (4000-4999 are free for applications).
CLOSE_UNKNOWN_PROJECT = 4401
CLOSE_ORIGIN_NOT_ALLOWED = 4403
#: The database refused: try again later (1013 says so in the protocol, but servers may only
#: send 1000 or 3000-4999 themselves).
CLOSE_UNAVAILABLE = 4503
#: This address already holds as many open sockets as one address may.
CLOSE_TOO_MANY_SOCKETS = 4429
_CLOSE_CODES = {401: CLOSE_UNKNOWN_PROJECT, 403: CLOSE_ORIGIN_NOT_ALLOWED}

#: Open sockets by address, in this process (every consumer of a process runs on its one
#: event loop, so no lock is needed). Each web process counts its own.
_open_by_address: dict[str, int] = {}


def forget_open_sockets() -> None:
    """Tests: a socket a test left open is not counted against the next test."""
    _open_by_address.clear()


def caller_of(scope: dict[str, Any]) -> Caller:
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    headers = dict(scope.get("headers") or [])
    return Caller(
        key=(query.get("project") or [""])[0],
        origin=headers.get(b"origin", b"").decode("latin-1"),
        client=(scope.get("client") or ["0.0.0.0"])[0],  # noqa: S104 - an address, not a bind
    )


def project_for_socket(caller: Caller) -> tuple[Project | None, IntakeError | None]:
    """The project, or the intake's refusal. A socket always comes from a browser, so an
    Origin is required (a missing one counts as not allowed)."""
    try:
        if not caller.origin:
            raise IntakeError("origin_not_allowed", "An Origin is required.", 403)
        return intake.authorise(caller), None
    except IntakeError as error:
        return None, error


class AskConsumer(AsyncWebsocketConsumer):
    # Answers go straight down this socket: no groups, no channel-layer messages, so an idle
    # widget holds no channel-layer subscription (a blocking Redis poll per socket otherwise).
    channel_layer_alias = "no-channel-layer"
    project: Project
    caller: Caller
    answering: asyncio.Task[None] | None = None
    busy = False  # an answer is on its way (until its done / error frame is sent)
    counted = False  # this socket is in _open_by_address

    async def connect(self) -> None:
        self.caller = caller_of(self.scope)
        # Accepted first: daphne drops a handshake not accepted within 5 s, and the project's
        # lookup may wait for a pooled database connection longer than that under load.
        await self.accept()
        address = self.caller.client
        if _open_by_address.get(address, 0) >= settings.ASKDOCS_WEBSOCKETS_PER_CLIENT:
            await self.send_frame(
                error_frame("too_many_sockets", "Too many open connections from this address.")
            )
            await self.close(code=CLOSE_TOO_MANY_SOCKETS)
            return
        _open_by_address[address] = _open_by_address.get(address, 0) + 1
        self.counted = True
        project, refusal = await database_sync_to_async(project_for_socket)(self.caller)
        if refusal is not None and refusal.status == 503:
            # The database refused: say so, and close as "try again later".
            await self.send_frame(refusal.frame())
            await self.close(code=CLOSE_UNAVAILABLE)
            return
        if project is None:
            status = refusal.status if refusal else 403
            await self.close(code=_CLOSE_CODES.get(status, CLOSE_ORIGIN_NOT_ALLOWED))
            return
        self.project = project

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if text_data is None:
            await self.send_frame(error_frame("invalid", "Send questions as JSON text frames."))
            return
        if self.busy:
            await self.send_frame(
                error_frame("busy", "Wait for the current answer before asking again.")
            )
            return
        try:
            data = intake.parse_json(text_data)
            request, ticket = await database_sync_to_async(self.let_in)(data)
        except IntakeError as error:
            # Overload too: a `busy` frame with `retry_after`, and the socket stays open.
            await self.send_frame(error.frame())
            return
        # Answer in a task of its own, so a disconnect is handled (and cancels it) at once.
        self.busy = True
        self.answering = asyncio.create_task(self.answer(request, ticket))

    def let_in(self, data: dict[str, Any]) -> tuple[AskRequest, admission.Ticket]:
        """Each question is let in with the project as it is now, not as it was when the socket
        opened: a project deleted since gets `unknown_project` (its answer would be logged
        against a row that is gone), a rotated secret key checks user hashes with the new
        key, and a removed origin stops being served."""
        self.project = intake.authorise(self.caller)
        asked = intake.ask_request(data, project=self.project, caller=self.caller)
        return asked, admission.admit(self.project.public_key)

    async def answer(self, request: AskRequest, ticket: admission.Ticket) -> None:
        frames = answer_frames(request=request, ticket=ticket)
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
        if self.counted:
            self.counted = False
            left = _open_by_address.get(self.caller.client, 1) - 1
            if left > 0:
                _open_by_address[self.caller.client] = left
            else:
                _open_by_address.pop(self.caller.client, None)
        if self.answering is not None and not self.answering.done():
            self.answering.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.answering

    async def send_frame(self, frame: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps(frame))
