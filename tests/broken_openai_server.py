"""A tiny local HTTP server for the edges a real OpenAI-compatible server does not show on
demand: garbage in the stream, a stream that stops mid-answer, HTML from a proxy, 5xx.

    with BrokenServer() as server:
        server.reply(status=200, kind="text/event-stream", parts=[b"data: {oops\\n\\n"])
        ... server.url ..., server.hits
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    kind: str = "text/event-stream"
    parts: list[bytes] = field(default_factory=list)
    #: Seconds to wait after the parts (a stalled stream), then close.
    stall_after: float = 0.0


def chunk(text: str) -> bytes:
    """One well-formed chat-completion SSE event carrying `text`."""
    import json

    choice = {"index": 0, "delta": {"content": text}}
    body = {"object": "chat.completion.chunk", "choices": [choice]}
    return f"data: {json.dumps(body)}\n\n".encode()


class BrokenServer:
    def __init__(self) -> None:
        self._reply = Reply()
        self.hits = 0
        self.authorizations: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                owner.hits += 1
                owner.authorizations.append(self.headers.get("Authorization", ""))
                reply = owner._reply
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.kind)
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    for part in reply.parts:
                        self.wfile.write(part)
                        self.wfile.flush()
                    time.sleep(reply.stall_after)
                except OSError:
                    pass  # the client went away

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def reply(self, **kwargs: Any) -> None:
        self._reply = Reply(**kwargs)

    def __enter__(self) -> BrokenServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
