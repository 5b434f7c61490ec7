"""What daphne refuses before the application sees it gets the API's JSON error too.

Daphne's HTTP is Twisted's: a request line over 16 KiB (a GET of a long question) made it drop
the connection without a word (`LineReceiver.lineLengthExceeded`), and a request over its
other limits (16 KiB of headers, a malformed request line) got a bare `400` with no body. Its
WebSockets are autobahn's: a message over 1 MiB made it drop the TCP connection, which the
page sees as close code 1006, indistinguishable from a network failure. Here the first answers
a JSON 414, the second a JSON 400, and the third an error frame then a clean close 1009
(message too big), so every door still speaks the API's error shape at its edge.

A request body larger than its path allows (`body_limit`: a source form's files, else what
Django would read at all) is refused by its declared size, a JSON 413, before one byte of it is
read: daphne would otherwise receive it whole, then queue it in memory for the application (a
100 MB upload took 9.3 s and 170 MB before the form said no). A chunked body is cut off when
it passes the limit. Under another server (uvicorn in the browser tests) `refuse_large_body`
makes the same check before Django reads the body.

Daphne listens with Twisted's backlog of 50: in a burst of 200 connections the kernel reset
the ones the queue could not hold before a word was said. `listen_with_room` gives its TCP
endpoints ASKDOCS_LISTEN_BACKLOG, so every connection is taken in and answered (a 503 `busy`
when admission says no: assistant/admission.py).

Installed once, from config.asgi; the daphne part changes nothing under another server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import unquote

#: Twisted's limit of a request line (LineReceiver.MAX_LENGTH), stated for the message.
REQUEST_LINE_BYTES = 16_384


def _http_error(status: str, code: str, message: str) -> bytes:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


LINE_TOO_LONG = _http_error(
    "414 URI Too Long", "too_large",
    f"The request line is limited to {REQUEST_LINE_BYTES} bytes: send a long question with "
    "POST and a JSON body.",
)  # fmt: skip
BAD_REQUEST = _http_error(
    "400 Bad Request", "bad_request",
    "The request is malformed or its headers are over 16 kB.",
)  # fmt: skip
#: Room for a form's other fields and the multipart framing around its files.
FORM_BYTES = 1_000_000
#: Seconds a refused upload's connection stays open, dropping what the client still sends, so
#: that it reads the 413 rather than a reset.
LINGER_SECONDS = 10.0
#: The forms that take files: the console's source forms and the Django admin's.
_UPLOAD_FORMS = re.compile(
    r"/admin/sources/(?:new/[\w-]+|\d+/edit)/|/django-admin/ingestion/source/(?:add|\d+/change)/"
)


def body_limit(path: str) -> int | None:
    """The most bytes a request body to `path` may hold (None: no limit): a source form's files
    (one archive, or files up to that much in all) and its fields; elsewhere what Django reads
    of a body at all (DATA_UPLOAD_MAX_MEMORY_SIZE) and the same room."""
    from django.conf import settings

    if _UPLOAD_FORMS.fullmatch(path):
        largest = max(settings.ASKDOCS_MAX_FILE_BYTES, settings.ASKDOCS_MAX_ARCHIVE_BYTES)
        return largest + FORM_BYTES
    data: int | None = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return None if data is None else data + FORM_BYTES


def body_too_large(limit: int) -> tuple[bytes, bytes]:
    """The status line's words and the JSON body of a 413."""
    megabytes = round(limit / 1_000_000, 1)
    message = (
        f"The body is limited to {megabytes:g} MB here; it was refused before it was read, and "
        "nothing was stored."
    )
    body = json.dumps({"error": {"code": "too_large", "message": message}}).encode()
    return b"413 Content Too Large", body


def _path_of(target: bytes) -> str:
    return unquote(target.decode("latin-1").split("?", 1)[0])


async def refuse_large_body(
    scope: dict[str, Any], send: Callable[[dict[str, Any]], Awaitable[None]]
) -> bool:
    """Answer 413 (and True) when the request declares a body over its path's limit, before
    anything reads it."""
    declared = dict(scope.get("headers") or []).get(b"content-length", b"")
    limit = body_limit(scope["path"])
    if limit is None or not declared.isdigit() or int(declared) <= limit:
        return False
    _, body = body_too_large(limit)
    await send({"type": "http.response.start", "status": 413, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})
    return True


MESSAGE_TOO_BIG = json.dumps(
    {"type": "error", "code": "too_large", "message": "A frame is limited to 1 MiB."}
)


def answer_over_limit_requests() -> None:
    """Teach Twisted's HTTP channel and daphne's WebSocket protocol to answer, not drop."""
    try:
        from daphne.ws_protocol import WebSocketProtocol
        from twisted.web.http import HTTPChannel
    except ImportError:  # not served by daphne
        return
    if getattr(HTTPChannel, "_askdocs_answers", False):
        return

    def line_too_long(channel: Any, line: bytes) -> None:
        _answer_once(channel, LINE_TOO_LONG)

    def bad_request(channel: Any) -> None:
        _answer_once(channel, BAD_REQUEST)

    HTTPChannel.lineLengthExceeded = line_too_long  # type: ignore[method-assign]
    # Twisted's own "quick and dirty" 400 (its words), for requests over its other limits.
    HTTPChannel._respondToBadRequestAndDisconnect = bad_request  # type: ignore[method-assign]
    HTTPChannel._askdocs_answers = True  # type: ignore[attr-defined]

    drop = WebSocketProtocol._max_message_size_exceeded

    def message_too_big(protocol: Any, size: int, limit: int, reason: str) -> None:
        # autobahn's hook for exactly this: say why in a frame, then close cleanly (1009).
        if protocol.state == protocol.STATE_OPEN:
            protocol.sendMessage(MESSAGE_TOO_BIG.encode(), isBinary=False)
        protocol.failByDrop = False
        drop(protocol, size, limit, reason)

    WebSocketProtocol._max_message_size_exceeded = message_too_big
    _refuse_bodies_over_limit(HTTPChannel)


def _refuse_bodies_over_limit(channel_class: Any) -> None:
    """Judge a body by its declared size once the headers are in, and a chunked one as it
    comes: over its path's limit, answer 413 and read no more of it."""
    from daphne.http_protocol import WebRequest

    headers_received = channel_class.allHeadersReceived
    content_chunk = WebRequest.handleContentChunk

    def all_headers_received(channel: Any) -> None:
        request = channel.requests[-1]
        request.askdocs_body_limit = limit = body_limit(_path_of(channel._path))
        if limit is not None and channel.length is not None and channel.length > limit:
            # Before Twisted's own handling: no file for the body, no "100 Continue".
            _refuse_body(channel, limit)
            return
        headers_received(channel)

    def handle_content_chunk(request: Any, data: bytes) -> None:
        limit = getattr(request, "askdocs_body_limit", None)
        request.askdocs_body_received = getattr(request, "askdocs_body_received", 0) + len(data)
        if limit is not None and request.askdocs_body_received > limit:
            _refuse_body(request.channel, limit)
            return
        content_chunk(request, data)

    channel_class.allHeadersReceived = all_headers_received
    WebRequest.handleContentChunk = handle_content_chunk


def _refuse_body(channel: Any, limit: int) -> None:
    """Answer 413, then drop what the client still sends, unread, until it hangs up or the
    linger ends; the request never reaches the application."""
    from twisted.internet import reactor

    transport = channel.transport
    if transport is None or transport.disconnecting or getattr(channel, "askdocs_refused", 0):
        return
    channel.askdocs_refused = True
    status, body = body_too_large(limit)
    transport.write(
        b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body
    )  # fmt: skip
    channel.dataReceived = channel.rawDataReceived = _drop
    transport.loseWriteConnection()  # the client reads the answer, then an end
    clock: Any = reactor  # the module stands for the running reactor
    clock.callLater(LINGER_SECONDS, transport.abortConnection)


def _drop(data: bytes) -> None:
    pass


def _answer_once(channel: Any, response: bytes) -> None:
    if channel.transport is None or channel.transport.disconnecting:
        return
    channel.transport.write(response)
    channel.transport.loseConnection()


def listen_with_room(backlog: int) -> None:
    """Daphne's TCP endpoints (`-b`/`-p`, or `-e tcp:...` without a backlog of its own) listen
    with `backlog` (the kernel caps it at net.core.somaxconn)."""
    try:
        import daphne.server
    except ImportError:  # not served by daphne
        return
    if getattr(daphne.server, "_askdocs_backlog", None) is not None:
        daphne.server._askdocs_backlog = backlog
        return
    endpoint_from = daphne.server.serverFromString

    def server_from_string(reactor: Any, description: str) -> Any:
        parts = description.split(":")
        if parts[0] == "tcp" and not any(part.startswith("backlog=") for part in parts):
            description += f":backlog={daphne.server._askdocs_backlog}"
        return endpoint_from(reactor, description)

    daphne.server._askdocs_backlog = backlog
    daphne.server.serverFromString = server_from_string
