"""An OpenAI-compatible server as Generator: streamed `/v1/chat/completions` (vLLM, llama.cpp's
`llama-server`, LM Studio, text-generation-inference, LocalAI, Ollama's `/v1`).

Plain httpx rather than the `openai` package: the code needs one streamed POST, the SSE lines
read one by one, an exact first-token deadline, and the connection closed the moment the
visitor leaves. httpx is already here (Ollama's client is built on it); the `openai` package
would add a dependency tree, its own retry loop (to be turned off so the shared breaker and
retry policy stay the only ones) and its own timeout model, and would buy nothing the code uses.

Timeouts, and why a thread: these servers differ in when they send the response headers
(vLLM at once, llama.cpp with its first chunk), and some send keep-alive comments while the
prompt is read, so neither the wait for headers nor httpx's per-read timeout is the wait for
the first token. The request runs on a thread of its own that puts each parsed chunk on a
queue; `stream` waits on the queue with the exact deadlines (first token, then between
tokens). When it is closed, finishes or gives up, it hangs up at once (the socket is shut
down, even while the thread still waits for the first byte), and the server stops generating
when its client goes away.

The API key travels only in the Authorization header: it is in no message, log line or repr.

A project names its server on a staff member's say, so every connection goes through the
outbound guard (assistant/wiring/outbound.py): an internal address is refused unless the
deployment allows it or its own settings name that server.
"""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import threading
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from assistant.rag.ports import GeneratorUnavailable
from assistant.rag.types import Prompt
from assistant.wiring import outbound
from assistant.wiring.resilience import Resilience, UpstreamUnavailable, describe, is_transient


@dataclass(frozen=True, slots=True)
class OpenAIEndpoint:
    """Where and how to ask; `api_key` is left out of repr so it never reaches a log."""

    base_url: str
    model: str = ""
    api_key: str = field(default="", repr=False)
    connect_timeout: float = 3.0
    first_token_timeout: float = 30.0
    between_tokens_timeout: float = 10.0
    max_tokens: int = 512
    temperature: float = 0.0

    @property
    def chat_url(self) -> str:
        return chat_completions_url(self.base_url)


def chat_completions_url(base_url: str) -> str:
    """The base URL as OpenAI's clients take it (`http://host:8000/v1`); a bare host gets `/v1`."""
    base = base_url.strip().rstrip("/")
    if "://" not in base:
        base = f"http://{base}"
    if urlsplit(base).path in ("", "/"):
        base += "/v1"
    return f"{base}/chat/completions"


def upstream_name(base_url: str) -> str:
    """The breaker key: every project using one server shares its circuit."""
    return f"openai:{chat_completions_url(base_url).removesuffix('/chat/completions')}"


class FirstTokenTimeout(TimeoutError):
    """The server accepted the request but wrote no text in time."""


class EndpointError(RuntimeError):
    """The server answered with an HTTP error; `status_code` lets the retry policy judge it."""

    def __init__(self, status_code: int, detail: str) -> None:
        self.status_code = status_code
        self.detail = detail
        super().__init__(f"HTTP {status_code}: {detail}")


class MalformedStream(ValueError):
    """What came back is not an OpenAI chat-completions event stream."""


def worth_retrying(exc: BaseException) -> bool:
    # A stall already cost the visitor a full timeout; a stream that is not one will not
    # become one. Both fail the call (and count against the breaker).
    if isinstance(exc, FirstTokenTimeout | MalformedStream | httpx.ReadTimeout):
        return False
    return is_transient(exc) and not outbound.was_refused(exc)


_END = object()


def _error_detail(response: httpx.Response) -> str:
    """The server's own words for an HTTP error, short (`{"error": {"message": ...}}` or text)."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:200] or response.reason_phrase
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        error = error.get("message") or error.get("detail") or error
    return str(error)[:200]


def _text_of(line: str) -> str | None:
    """The text of one SSE line ("" for none); None at `data: [DONE]`."""
    if not line.startswith("data:"):
        return ""  # blank separators, `: keep-alive` comments, `event:` / `id:` fields
    data = line[5:].strip()
    if data == "[DONE]":
        return None
    try:
        chunk = json.loads(data)
    except ValueError:
        raise MalformedStream(f"not JSON in the event stream: {data[:80]!r}") from None
    if not isinstance(chunk, dict):
        raise MalformedStream(f"not a chat-completion chunk: {data[:80]!r}")
    if "error" in chunk:
        # A server that fails after the headers says so in the stream (llama.cpp, vLLM).
        error = chunk["error"]
        message = error.get("message", error) if isinstance(error, dict) else error
        code = error.get("code") if isinstance(error, dict) else chunk.get("code")
        raise EndpointError(code if isinstance(code, int) else 500, str(message)[:200])
    choices = chunk.get("choices")
    if not isinstance(choices, list):
        raise MalformedStream(f"a chunk without choices: {data[:80]!r}")
    texts = []
    for choice in choices:
        delta = choice.get("delta") if isinstance(choice, dict) else None
        content = delta.get("content") if isinstance(delta, dict) else None
        if isinstance(content, str):
            texts.append(content)
    return "".join(texts)


class _Request:
    """One streamed request on a thread of its own; texts, errors and `_END` on `events`."""

    def __init__(self, client: httpx.Client, endpoint: OpenAIEndpoint, body: dict[str, Any]):
        self.events: queue.Queue[Any] = queue.Queue()
        self.stopped = threading.Event()
        self._socket: socket.socket | None = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(
            target=self._work, args=(client, endpoint, body), name="openai-chat", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Hang up now, even while the thread waits for the server's first byte: shutting the
        socket down wakes its read, and the server sees its client go."""
        with self._lock:
            self.stopped.set()
            _hang_up(self._socket)

    def _connected(self, event: str, info: dict[str, Any]) -> None:
        # httpcore's trace hook hands over each new connection's stream (TCP, then TLS).
        if event not in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            return
        stream = info.get("return_value")
        with self._lock:
            self._socket = stream.get_extra_info("socket") if stream is not None else None
            if self.stopped.is_set():
                _hang_up(self._socket)

    def _work(self, client: httpx.Client, endpoint: OpenAIEndpoint, body: dict[str, Any]) -> None:
        headers = {"Accept": "text/event-stream"}
        if endpoint.api_key:
            headers["Authorization"] = f"Bearer {endpoint.api_key}"
        try:
            # Leaving the block closes the response (and its connection): the server stops.
            with client.stream(
                "POST", endpoint.chat_url, json=body, headers=headers,
                extensions={"trace": self._connected},
            ) as response:  # fmt: skip
                if response.status_code >= 400:
                    response.read()
                    raise EndpointError(response.status_code, _error_detail(response))
                kind = response.headers.get("content-type", "")
                if not kind.startswith("text/event-stream"):
                    raise MalformedStream(f"the server answered {kind or 'no type'}, not a stream")
                for line in response.iter_lines():
                    if self.stopped.is_set():
                        return
                    text = _text_of(line)
                    if text is None:
                        return
                    if text:
                        self.events.put(text)
                raise MalformedStream("the stream ended without `data: [DONE]`")
        except Exception as exc:  # noqa: BLE001 - handed to the reader, who explains it
            self.events.put(exc)
        finally:
            self.events.put(_END)


def _hang_up(sock: socket.socket | None) -> None:
    if sock is not None:
        with contextlib.suppress(OSError):  # already closed
            sock.shutdown(socket.SHUT_RDWR)


class OpenAIGenerator:
    """Streams a chat answer; every failure becomes GeneratorUnavailable with its cause."""

    def __init__(self, endpoint: OpenAIEndpoint, *, resilience: Resilience | None = None):
        self.endpoint = endpoint
        self.id = f"openai:{endpoint.model or 'default'}"
        self.resilience = resilience or Resilience(
            upstream_name(endpoint.base_url), retry_if=worth_retrying
        )
        # The thread's own reads end a dead connection even if nobody reads the queue.
        self._client = httpx.Client(
            timeout=httpx.Timeout(
                connect=endpoint.connect_timeout,
                read=max(endpoint.first_token_timeout, endpoint.between_tokens_timeout) + 1,
                write=endpoint.connect_timeout,
                pool=endpoint.connect_timeout,
            ),
            follow_redirects=False,
            # A connection per question: its socket is known from the start (see _Request.stop),
            # and a handshake costs nothing beside a model's seconds.
            transport=outbound.transport(
                allowed=outbound.server_allow_list(endpoint.chat_url),
                limits=httpx.Limits(max_keepalive_connections=0),
            ),
        )

    def close(self) -> None:
        self._client.close()

    def stream(self, prompt: Prompt) -> Generator[str, None, None]:
        messages = [{"role": "system", "content": prompt.system}]
        messages += [{"role": turn.role, "content": turn.content} for turn in prompt.messages]
        body: dict[str, Any] = {
            "messages": messages,
            "stream": True,
            "max_tokens": self.endpoint.max_tokens,
            "temperature": self.endpoint.temperature,
        }
        if self.endpoint.model:
            body["model"] = self.endpoint.model
        try:
            first, request = self.resilience.call(self._start, body)
        except Exception as exc:  # UpstreamUnavailable, or a 4xx such as a wrong key
            raise GeneratorUnavailable(self._redacted(self._explain(exc))) from exc
        sent = 0
        try:
            if first:
                sent += 1
                yield first
            for text in self._rest(request):
                sent += 1
                yield text
        except Exception as exc:
            explained = self._explain(exc, mid_stream=True)
            raise GeneratorUnavailable(
                f"{self._redacted(explained)} (after {sent} chunks)"
            ) from exc
        finally:
            request.stop()  # finished, failed or closed (the visitor left)

    def _start(self, body: dict[str, Any]) -> tuple[str, _Request]:
        """Send the request and wait for the first text: the part of a stream worth retrying."""
        deadline = time.monotonic() + self.endpoint.first_token_timeout
        request = _Request(self._client, self.endpoint, body)
        try:
            try:
                event = request.events.get(timeout=max(deadline - time.monotonic(), 0.001))
            except queue.Empty:
                raise FirstTokenTimeout(
                    f"no text within {self.endpoint.first_token_timeout:g} s"
                ) from None
            if event is _END:
                return "", request
            if isinstance(event, Exception):
                raise event
            return str(event), request
        except BaseException:
            request.stop()
            raise

    def _rest(self, request: _Request) -> Iterator[str]:
        while True:
            try:
                event = request.events.get(timeout=self.endpoint.between_tokens_timeout)
            except queue.Empty:
                raise httpx.ReadTimeout("no token in time") from None
            if event is _END:
                return
            if isinstance(event, Exception):
                raise event
            yield str(event)

    def _redacted(self, text: str) -> str:
        # Some servers quote the key they refused; the reason is logged and shown in the console.
        key = self.endpoint.api_key
        return text.replace(key, "[the API key]") if key else text

    def _explain(self, exc: BaseException, *, mid_stream: bool = False) -> str:
        where = f"the server at {self.endpoint.chat_url.removesuffix('/chat/completions')}"
        if isinstance(exc, UpstreamUnavailable):
            if exc.circuit_open:
                return f"{where}: {describe(exc.cause)}"
            tries = f" after {exc.attempts} attempts" if exc.attempts > 1 else ""
            cause = exc.cause
            detail = f"{where}: {cause}" if isinstance(cause, str) else self._explain(cause)
            return f"{detail}{tries}"
        if isinstance(exc, EndpointError):
            if exc.status_code in (401, 403):
                return (
                    f"{where} refused the API key (HTTP {exc.status_code}: {exc.detail}); "
                    "check the Server API key (or ASKDOCS_OPENAI_API_KEY)"
                )
            if exc.status_code == 404:
                return (
                    f"{where}: not found (HTTP 404: {exc.detail}); check the base URL "
                    f"(it usually ends in /v1) and the model name {self.endpoint.model!r}"
                )
            phase = " mid-answer" if mid_stream else ""
            return f"{where} failed{phase} (HTTP {exc.status_code}): {exc.detail}"
        if isinstance(exc, MalformedStream):
            return f"{where}: malformed stream ({exc})"
        if isinstance(exc, httpx.ConnectTimeout):
            return f"{where}: connect timeout after {self.endpoint.connect_timeout:g} s"
        if isinstance(exc, httpx.ConnectError):
            return f"{where}: cannot connect ({describe(exc)})"
        if isinstance(exc, FirstTokenTimeout) or (
            isinstance(exc, httpx.ReadTimeout) and not mid_stream
        ):
            waited = self.endpoint.first_token_timeout
            return f"{where}: timeout, no first token within {waited:g} s"
        if isinstance(exc, httpx.ReadTimeout):
            return (
                f"{where}: timeout, no token for {self.endpoint.between_tokens_timeout:g} s "
                "mid-answer"
            )
        if isinstance(exc, httpx.TransportError):
            phase = "connection lost mid-answer" if mid_stream else "connection error"
            return f"{where}: {phase} ({describe(exc)})"
        return f"{where}: {describe(exc)}"
