"""A small local HTTP server standing in for a support desk's webhook: it records every POST
(headers and JSON body) and answers 200, or whatever failures the test scripts first.

    with FakeWebhook() as hook:
        hook.fail_next(2, status=503)
        ...
        hook.wait_for(1)
        hook.received[0]["body"]
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeWebhook:
    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []  # accepted deliveries
        self.attempts = 0
        self._failures: list[int] = []
        self._trickles: list[float] = []
        self._holding = False
        self.released = threading.Event()
        self._changed = threading.Condition()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/hooks/support"

    def fail_next(self, times: int, *, status: int = 503) -> None:
        with self._changed:
            self._failures += [status] * times

    def trickle_next(self, times: int, *, every: float) -> None:
        """The next answers come one byte every `every` seconds, status line included: a
        receiver that takes the POST and never quite answers."""
        with self._changed:
            self._trickles += [every] * times

    def hold(self) -> None:
        """Deliveries hang (the POST is read, no answer comes) until `released` is set."""
        self._holding = True

    def wait_for_attempts(self, count: int, timeout: float = 20.0) -> None:
        with self._changed:
            if not self._changed.wait_for(lambda: self.attempts >= count, timeout):
                raise AssertionError(f"{self.attempts} attempts, waited for {count}")

    def wait_for(self, count: int, timeout: float = 20.0) -> None:
        with self._changed:
            if not self._changed.wait_for(lambda: len(self.received) >= count, timeout):
                raise AssertionError(f"{len(self.received)} deliveries, waited for {count}")

    def __enter__(self) -> FakeWebhook:
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with hook._changed:
                    hook.attempts += 1
                    every = hook._trickles.pop(0) if hook._trickles else 0.0
                    hook._changed.notify_all()
                if hook._holding:
                    hook.released.wait(timeout=600)
                if every:
                    try:
                        for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n":
                            time.sleep(every)
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        pass  # the sender gave up
                    self.close_connection = True
                    return
                with hook._changed:
                    status = hook._failures.pop(0) if hook._failures else 200
                    if status == 200:
                        hook.received.append(
                            {"headers": dict(self.headers), "raw": raw, "body": json.loads(raw)}
                        )
                    hook._changed.notify_all()
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self.released.set()
        self._server.shutdown()
        self._server.server_close()
