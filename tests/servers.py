"""Real servers for tests, on free loopback ports: a free port, a Chroma server, stopping."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

import httpx


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_chroma(
    data_dir: Path, *, timeout: float = 90, port: int | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """`chroma run` (the CLI of the chromadb package) on a free port (or `port`: a restart);
    returns it and its URL once its heartbeat answers. Its log is data_dir/chroma.log."""
    chroma = Path(sys.executable).parent / "chroma"
    if not chroma.exists():
        raise AssertionError(f"The `chroma` CLI (from the chromadb package) is missing at {chroma}")
    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = data_dir / "chroma.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [str(chroma), "run", "--path", str(data_dir / "chroma-server"),
             "--host", "127.0.0.1", "--port", str(port)],
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and server.poll() is None:
        try:
            if httpx.get(f"{url}/api/v2/heartbeat", timeout=1).status_code == 200:
                return server, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    stop(server)
    raise AssertionError(
        f"chroma run did not start:\n{log_path.read_text(errors='replace')[-2000:]}"
    )


def stop(process: subprocess.Popen[bytes], *, timeout: float = 20) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class LoopbackServer:
    """A fake of the outside world's JSON-over-HTTP API, served on a free loopback port in a
    daemon thread: `with Fake(...) as fake:` starts and stops it. A subclass answers each POST
    in `answer(path, headers, body)` with a status and a JSON document, or every method in
    `respond(method, path, headers, body)` (a REST API's GETs, PUTs and PATCHes too)."""

    content_type = "application/json"
    _server: ThreadingHTTPServer | None = None

    def answer(self, path: str, headers: Any, body: str) -> tuple[int, Any]:
        raise NotImplementedError

    def respond(self, method: str, path: str, headers: Any, body: str) -> tuple[int, Any]:
        if method != "POST":
            return 405, {"error": f"{method} is not served here"}
        return self.answer(path, headers, body)

    @property
    def origin(self) -> str:
        assert self._server is not None, "start() the server first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Self:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _json_handler(self))
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _json_handler(fake: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            self._respond()

        do_GET = do_PUT = do_PATCH = do_DELETE = do_POST  # noqa: N815 - the http.server API

        def _respond(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode()
            status, document = fake.respond(self.command, self.path, self.headers, body)
            payload = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", fake.content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    return Handler
