"""What daphne refuses before the application sees it gets the API's JSON error too.

Daphne's HTTP is Twisted's: a request line over 16 KiB (a GET of a long question) made it drop
the connection without a word (`LineReceiver.lineLengthExceeded`), and a request over its
other limits (16 KiB of headers, a malformed request line) got a bare `400` with no body. Its
WebSockets are autobahn's: a message over 1 MiB made it drop the TCP connection, which the
page sees as close code 1006, indistinguishable from a network failure. Here the first answers
a JSON 414, the second a JSON 400, and the third an error frame then a clean close 1009
(message too big), so every door still speaks the API's error shape at its edge.

Installed once, from config.asgi; it changes nothing under another server (uvicorn in the
browser tests has limits of its own).
"""

from __future__ import annotations

import json
from typing import Any

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


def _answer_once(channel: Any, response: bytes) -> None:
    if channel.transport is None or channel.transport.disconnecting:
        return
    channel.transport.write(response)
    channel.transport.loseConnection()
