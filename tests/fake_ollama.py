"""A small local HTTP server that speaks Ollama's API, for tests.

Like the real server it writes nothing for /api/chat until the first token is ready (headers
come with the first NDJSON line), streams with chunked encoding, answers unknown models with
404 {"error": "model \"x\" not found, try pulling it first"} and, once content has been sent,
reports errors as an {"error": ...} line.

    with FakeOllama() as server:
        server.tokens = ["Hel", "lo"]
        server.fail_next(2, status=500)
        ...
        server.requests[-1].body["messages"]
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DIMENSION = 768
VERSION = "0.12.6"


def hashed_embedding(text: str, dimension: int = DIMENSION) -> list[float]:
    """Deterministic bag-of-words vector: texts sharing words point the same way."""
    vector = [0.0] * dimension
    for word in re.findall(r"\w+", text.lower()) or [""]:
        digest = hashlib.sha256(word.encode()).digest()
        index = int.from_bytes(digest[:4], "big") % dimension
        vector[index] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(value * value for value in vector)) or 1.0
    return [value / norm for value in vector]


def unused_url() -> str:
    """The URL of a local port nothing listens on (connections are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@dataclass
class Recorded:
    method: str
    path: str
    body: Any
    received_at: float = field(default_factory=time.monotonic)
    disconnected: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)

    @property
    def client_disconnected(self) -> bool:
        return self.disconnected.is_set()


@dataclass
class _Failure:
    status: int
    error: str
    path: str | None


class FakeOllama:
    """Scriptable fake: set the attributes below before (or between) requests."""

    def __init__(self, models: tuple[str, ...] = ("llama3.2", "nomic-embed-text")) -> None:
        self.models = set(models)
        self.tokens: list[str] = ["The", " answer", " is", " 42", "."]
        #: When set, a chat request's tokens are what it returns for the request's messages
        #: (a model asked different things in one test), instead of `tokens`.
        self.reply: Callable[[list[dict[str, Any]]], list[str]] | None = None
        self.stall_before_first_token = 0.0  # seconds before headers + first line
        self.stall_between_tokens = 0.0  # seconds between two lines
        self.stall_before_embedding = 0.0  # seconds before an /api/embed answer
        self.drop_after: int | None = None  # close the socket after this many tokens
        self.error_after: int | None = None  # send {"error": ...} after this many tokens
        self.error_message = "llama runner process has terminated: signal: killed"
        self.dimension = DIMENSION
        self.redirect_to: str | None = None  # answer each POST with a 307 to this server
        self.requests: list[Recorded] = []
        self._failures: list[_Failure] = []
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------------

    def fail_next(
        self,
        times: int,
        *,
        status: int = 500,
        error: str = "server busy, please try again",
        path: str | None = None,
    ) -> None:
        """Answer the next `times` POSTs (to `path`, or any) with `status` {"error": error}."""
        with self._lock:
            self._failures += [_Failure(status, error, path) for _ in range(times)]

    def requests_to(self, path: str) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    # -- life cycle ------------------------------------------------------------------------

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the server first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeOllama:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-ollama"
        )
        self._thread.daemon = True
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:  # wake handlers stalled on purpose or kept alive
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- used by the handler ---------------------------------------------------------------

    def _record(self, method: str, path: str, body: Any) -> Recorded:
        recorded = Recorded(method, path, body)
        with self._lock:
            self.requests.append(recorded)
        return recorded

    def _take_failure(self, path: str) -> _Failure | None:
        with self._lock:
            for index, failure in enumerate(self._failures):
                if failure.path in (None, path):
                    return self._failures.pop(index)
        return None

    def _knows(self, model: str) -> bool:
        return model.removesuffix(":latest") in self.models


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _handler_for(fake: FakeOllama) -> type[BaseHTTPRequestHandler]:
    class Handler(_OllamaHandler):
        pass

    Handler.fake = fake
    return Handler


class _Disconnected(Exception):
    pass


class _OllamaHandler(BaseHTTPRequestHandler):
    fake: FakeOllama
    protocol_version = "HTTP/1.1"  # keep-alive and chunked streaming, like Ollama

    def setup(self) -> None:
        super().setup()
        with self.fake._lock:
            self.fake._connections.add(self.connection)

    def finish(self) -> None:
        with self.fake._lock:
            self.fake._connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    # -- routing ---------------------------------------------------------------------------

    def do_HEAD(self) -> None:
        self._json(200, {}, head=True)

    def do_GET(self) -> None:
        self.fake._record("GET", self.path, None)
        if self.path == "/":
            self._send(200, b"Ollama is running", "text/plain; charset=utf-8")
        elif self.path == "/api/version":
            self._json(200, {"version": VERSION})
        elif self.path == "/api/tags":
            self._json(200, {"models": [_model_entry(name) for name in sorted(self.fake.models)]})
        else:
            self._send(404, b"404 page not found", "text/plain")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self.fake._record("POST", self.path, raw)
            self._json(400, {"error": "invalid JSON"})
            return
        recorded = self.fake._record("POST", self.path, body)
        try:
            self._dispatch(recorded, body)
        except _Disconnected:
            recorded.disconnected.set()
            self.close_connection = True
        finally:
            recorded.finished.set()

    def _dispatch(self, recorded: Recorded, body: dict[str, Any]) -> None:
        if self.fake.redirect_to:
            self.send_response(307)
            self.send_header("Location", f"{self.fake.redirect_to}{self.path}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        routes = {"/api/chat": self._chat, "/api/embed": self._embed}
        if self.path == "/api/embeddings":
            routes[self.path] = self._embeddings
        route = routes.get(self.path)
        if route is None:
            self._send(404, b"404 page not found", "text/plain")
            return
        failure = self.fake._take_failure(self.path)
        if failure is not None:
            self._json(failure.status, {"error": failure.error})
            return
        model = str(body.get("model", ""))
        if not self.fake._knows(model):
            error = f'model "{model}" not found, try pulling it first'
            self._json(404, {"error": error})
            return
        route(recorded, body)

    # -- endpoints -------------------------------------------------------------------------

    def _chat(self, recorded: Recorded, body: dict[str, Any]) -> None:
        fake = self.fake
        tokens = list(fake.reply(body["messages"]) if fake.reply else fake.tokens)
        done_reason = "stop"
        num_predict = (body.get("options") or {}).get("num_predict")
        if isinstance(num_predict, int) and 0 <= num_predict < len(tokens):
            tokens, done_reason = tokens[:num_predict], "length"
        model = body["model"]

        if fake.stall_before_first_token:
            self._pause(fake.stall_before_first_token)

        if body.get("stream") is False:
            message = {"role": "assistant", "content": "".join(tokens)}
            self._json(200, _chat_line(model, message, done=True, done_reason=done_reason))
            return

        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Date", self.date_time_string())
        self.end_headers()
        for index, token in enumerate(tokens):
            if fake.drop_after is not None and index == fake.drop_after:
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            if fake.error_after is not None and index == fake.error_after:
                self._chunk({"error": fake.error_message})
                self._end_chunks()
                return
            if index and fake.stall_between_tokens:
                self._pause(fake.stall_between_tokens)
            self._chunk(_chat_line(model, {"role": "assistant", "content": token}, done=False))
        final = _chat_line(
            model, {"role": "assistant", "content": ""}, done=True, done_reason=done_reason
        )
        final["eval_count"] = len(tokens)
        self._chunk(final)
        self._end_chunks()

    def _embed(self, recorded: Recorded, body: dict[str, Any]) -> None:
        inputs = body.get("input", "")
        texts = [inputs] if isinstance(inputs, str) else list(inputs)
        if self.fake.stall_before_embedding:
            self._pause(self.fake.stall_before_embedding)
        embeddings = [hashed_embedding(text, self.fake.dimension) for text in texts]
        self._json(
            200,
            {
                "model": body["model"],
                "embeddings": embeddings,
                "total_duration": 1_000_000,
                "load_duration": 100_000,
                "prompt_eval_count": sum(len(text.split()) for text in texts),
            },
        )

    def _embeddings(self, recorded: Recorded, body: dict[str, Any]) -> None:
        vector = hashed_embedding(str(body.get("prompt", "")), self.fake.dimension)
        self._json(200, {"embedding": vector})

    # -- wire helpers ----------------------------------------------------------------------

    def _pause(self, seconds: float) -> None:
        """Sleep, but notice at once if the client hangs up (raises _Disconnected)."""
        deadline = time.monotonic() + seconds
        # poll, not select: select() fails on descriptors above 1023, which a long test run
        # reaches
        poller = select.poll()
        poller.register(self.connection, select.POLLIN)
        while (left := deadline - time.monotonic()) > 0:
            if poller.poll(min(left, 0.05) * 1000):
                try:
                    peeked = self.connection.recv(1, socket.MSG_PEEK)
                except OSError as exc:
                    raise _Disconnected from exc
                if not peeked:
                    raise _Disconnected

    def _write(self, data: bytes) -> None:
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError as exc:
            raise _Disconnected from exc

    def _chunk(self, payload: dict[str, Any]) -> None:
        line = json.dumps(payload).encode() + b"\n"
        self._write(b"%x\r\n%s\r\n" % (len(line), line))

    def _end_chunks(self) -> None:
        self._write(b"0\r\n\r\n")

    def _send(self, status: int, data: bytes, content_type: str, *, head: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if not head:
            self._write(data)

    def _json(self, status: int, payload: dict[str, Any], *, head: bool = False) -> None:
        content_type = "application/json; charset=utf-8"
        self._send(status, json.dumps(payload).encode(), content_type, head=head)


def _chat_line(
    model: str, message: dict[str, str], *, done: bool, done_reason: str | None = None
) -> dict[str, Any]:
    line: dict[str, Any] = {"model": model, "created_at": _now(), "message": message, "done": done}
    if done:
        line.update(
            done_reason=done_reason,
            total_duration=5_000_000,
            load_duration=1_000_000,
            prompt_eval_count=10,
            prompt_eval_duration=1_000_000,
            eval_duration=2_000_000,
        )
    return line


def _model_entry(name: str) -> dict[str, Any]:
    digest = hashlib.sha256(name.encode()).hexdigest()
    return {
        "name": f"{name}:latest",
        "model": f"{name}:latest",
        "modified_at": _now(),
        "size": 1_000_000,
        "digest": digest,
        "details": {"format": "gguf", "family": name.split(".")[0], "parameter_size": "1B"},
    }
