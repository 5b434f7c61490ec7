"""Ollama as Generator (streamed chat) and Embedder (nomic-embed-text), behind one breaker.

Timeouts, and why they hold: Ollama sends its response headers together with the first
token (it loads the model and evaluates the prompt before writing anything), so the wait for
the headers is the wait for the first token and runs under the first-token read timeout. Once
the headers are in, a response hook lowers the read timeout of the body to the between-tokens
timeout. httpx applies read timeouts to each socket read, i.e. between chunks.

Connections go through the outbound guard (assistant/wiring/outbound.py) like every request
made on someone's say: the server OLLAMA_HOST names is the operator's choice and reached
wherever it is; any other host must be global or allowed. Redirects are not followed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any, cast

import httpx
import ollama

from assistant.rag.ports import GeneratorUnavailable
from assistant.rag.types import Cut, Prompt
from assistant.wiring import outbound
from assistant.wiring.resilience import Resilience, UpstreamUnavailable, describe, is_transient

NOMIC_QUERY_PREFIX = "search_query: "
NOMIC_DOCUMENT_PREFIX = "search_document: "

ChatParts = Generator[ollama.ChatResponse, None, None]


class FirstTokenTimeout(TimeoutError):
    """The server kept the stream open but sent no text in time."""


def normalise_host(host: str) -> str:
    host = host.strip().rstrip("/")
    return host if "://" in host else f"http://{host}"


def upstream_name(host: str) -> str:
    """The breaker key: every adapter talking to one Ollama server shares its circuit."""
    return f"ollama:{normalise_host(host)}"


def worth_retrying(exc: BaseException) -> bool:
    # A server that stalled already cost the user a full timeout; trying again would
    # multiply the wait, so read timeouts fail the call (and count against the breaker).
    if isinstance(exc, httpx.ReadTimeout | FirstTokenTimeout):
        return False
    # Errors streamed before the first token carry no status (e.g. the runner crashed).
    if isinstance(exc, ollama.ResponseError) and exc.status_code < 0:
        return True
    return is_transient(exc) and not outbound.was_refused(exc)


def _embedding_worth_retrying(exc: BaseException) -> bool:
    return is_transient(exc) and not outbound.was_refused(exc)


def _client(host: str, timeout: httpx.Timeout, **hooks: Any) -> ollama.Client:
    """An Ollama client whose connections are checked and that follows no redirect."""
    return ollama.Client(
        host=host,
        timeout=timeout,
        follow_redirects=False,
        transport=outbound.transport(allowed=outbound.server_allow_list(host)),
        **hooks,
    )


class _LazyClient:
    """One ollama.Client per adapter, built on first use (never at import: Celery forks)."""

    def __init__(self, host: str, build: Callable[[], ollama.Client]) -> None:
        self.host = host
        self._build = build
        self._client: ollama.Client | None = None
        self._lock = threading.Lock()

    def get(self) -> ollama.Client:
        with self._lock:
            if self._client is None:
                self._client = self._build()
            return self._client

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


def _identity(host: str, model: str) -> tuple[str, str, str]:
    """(host, model, component id) of an Ollama model: one collection / cache key per id."""
    return normalise_host(host), model, f"ollama:{model}"


class OllamaGenerator:
    """Streams a chat answer; every failure becomes GeneratorUnavailable with its cause."""

    def __init__(
        self,
        host: str,
        model: str = "llama3.2",
        *,
        connect_timeout: float = 2.0,
        first_token_timeout: float = 20.0,
        between_tokens_timeout: float = 10.0,
        num_predict: int = 512,
        options: Mapping[str, Any] | None = None,
        keep_alive: str | float | None = None,
        resilience: Resilience | None = None,
    ) -> None:
        self.host, self.model, self.id = _identity(host, model)
        self.connect_timeout = connect_timeout
        self.first_token_timeout = first_token_timeout
        self.between_tokens_timeout = between_tokens_timeout
        self.options: dict[str, Any] = {"num_predict": num_predict, **(options or {})}
        self.keep_alive = keep_alive
        self.resilience = resilience or Resilience(
            upstream_name(self.host), retry_if=worth_retrying
        )
        self._client = _LazyClient(self.host, self._build_client)

    def _build_client(self) -> ollama.Client:
        timeout = httpx.Timeout(
            connect=self.connect_timeout,
            read=self.first_token_timeout,
            write=self.between_tokens_timeout,
            pool=self.connect_timeout,
        )
        return _client(self.host, timeout, event_hooks={"response": [self._after_headers]})

    def _after_headers(self, response: httpx.Response) -> None:
        # httpcore reads the body's read timeout from the request extensions when the body
        # starts, which is after this hook: from here on, time between chunks is bounded.
        extensions = response.request.extensions
        extensions["timeout"] = {**extensions["timeout"], "read": self.between_tokens_timeout}

    def close(self) -> None:
        self._client.close()

    def stream(self, prompt: Prompt) -> Generator[str | Cut, None, None]:
        messages = [{"role": "system", "content": prompt.system}]
        messages += [{"role": turn.role, "content": turn.content} for turn in prompt.messages]
        try:
            first, rest = self.resilience.call(self._start, messages)
        except Exception as exc:  # UpstreamUnavailable, or a 4xx such as a missing model
            raise GeneratorUnavailable(self._explain(exc)) from exc

        sent = 0
        try:
            if first:
                sent += 1
                yield first
            for part in rest:
                text = part.message.content
                if text:
                    sent += 1
                    yield text
                if part.done and part.done_reason == "length":
                    yield Cut()
        except Exception as exc:
            raise GeneratorUnavailable(
                f"{self._explain(exc, mid_stream=True)} (after {sent} chunks)"
            ) from exc
        finally:
            # Closing Ollama's stream closes the HTTP response, and Ollama stops generating
            # when its client goes away.
            rest.close()

    def _start(self, messages: list[dict[str, str]]) -> tuple[str, ChatParts]:
        """Open the stream and wait for the first text: the part of a stream worth retrying."""
        deadline = time.monotonic() + self.first_token_timeout
        # ollama types the stream as an Iterator; it is a generator, and close() matters.
        parts = cast(
            ChatParts,
            self._client.get().chat(
                model=self.model,
                messages=messages,
                stream=True,
                options=self.options,
                keep_alive=self.keep_alive,
            ),
        )
        try:
            for part in parts:
                text = part.message.content or ""
                if text or part.done:
                    return text, parts
                if time.monotonic() > deadline:
                    raise FirstTokenTimeout(f"no text within {self.first_token_timeout} s")
        except BaseException:
            parts.close()
            raise
        return "", parts

    def _explain(self, exc: BaseException, *, mid_stream: bool = False) -> str:
        where = f"Ollama at {self.host}"
        if isinstance(exc, UpstreamUnavailable):
            if exc.circuit_open:
                return f"{where}: {describe(exc.cause)}"
            tries = f" after {exc.attempts} attempts" if exc.attempts > 1 else ""
            cause = exc.cause
            detail = f"{where}: {cause}" if isinstance(cause, str) else self._explain(cause)
            return f"{detail}{tries}"
        if isinstance(exc, ollama.ResponseError):
            if exc.status_code == 404:
                return (
                    f"model {self.model!r} not found at {self.host}: {exc.error} "
                    f"(run `ollama pull {self.model}` there)"
                )
            status = f" (HTTP {exc.status_code})" if exc.status_code > 0 else ""
            phase = " mid-answer" if mid_stream else ""
            return f"{where} failed{phase}{status}: {exc.error}"
        if isinstance(exc, httpx.ConnectTimeout):
            return f"{where}: connect timeout after {self.connect_timeout} s"
        if isinstance(exc, ConnectionError | httpx.ConnectError):
            # ollama hides httpx's ConnectError ("Connection refused") behind a generic text.
            return f"{where}: cannot connect ({describe(_root_cause(exc))})"
        if isinstance(exc, FirstTokenTimeout) or (
            isinstance(exc, httpx.ReadTimeout) and not mid_stream
        ):
            return f"{where}: timeout, no first token within {self.first_token_timeout} s"
        if isinstance(exc, httpx.ReadTimeout):
            return f"{where}: timeout, no token for {self.between_tokens_timeout} s mid-answer"
        if isinstance(exc, httpx.TransportError):
            phase = "connection lost mid-answer" if mid_stream else "connection error"
            return f"{where}: {phase} ({describe(exc)})"
        return f"{where}: {describe(exc)}"


def _root_cause(exc: BaseException) -> BaseException:
    while (inner := exc.__cause__ or exc.__context__) is not None:
        exc = inner
    return exc


class OllamaEmbedder:
    """nomic-embed-text (or another Ollama embedding model) through /api/embed, in batches.

    nomic models are trained with task prefixes; queries and documents get different ones.
    Failures raise UpstreamUnavailable naming the cause.
    """

    def __init__(
        self,
        host: str,
        model: str = "nomic-embed-text",
        *,
        dimension: int | None = None,
        query_prefix: str = NOMIC_QUERY_PREFIX,
        document_prefix: str = NOMIC_DOCUMENT_PREFIX,
        batch_size: int = 32,
        connect_timeout: float = 2.0,
        timeout: float = 60.0,
        keep_alive: str | float | None = None,
        resilience: Resilience | None = None,
    ) -> None:
        self.host, self.model, self.id = _identity(host, model)
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self.batch_size = batch_size
        self.keep_alive = keep_alive
        self.resilience = resilience or Resilience(
            upstream_name(self.host), retry_if=_embedding_worth_retrying
        )
        self._expected_dimension = dimension
        self._dimension = dimension
        self._client = _LazyClient(
            self.host,
            lambda: _client(self.host, httpx.Timeout(timeout, connect=connect_timeout)),
        )

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self.embed_query("dimension probe")
        assert self._dimension is not None
        return self._dimension

    @dimension.setter
    def dimension(self, value: int) -> None:
        # Settable only because ports.Embedder declares a plain attribute.
        self._dimension = self._expected_dimension = value

    def close(self) -> None:
        self._client.close()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed([self.query_prefix + text for text in texts])  # one request

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            vectors += self._embed([self.document_prefix + text for text in batch])
        return vectors

    def _embed(self, inputs: list[str]) -> list[list[float]]:
        try:
            response = self.resilience.call(
                self._client.get().embed,
                model=self.model,
                input=inputs,
                keep_alive=self.keep_alive,
            )
        except UpstreamUnavailable:
            raise
        except (ConnectionError, httpx.ConnectError) as exc:  # refused for its address
            raise UpstreamUnavailable(self.resilience.name, _root_cause(exc)) from exc
        except ollama.ResponseError as exc:
            detail = exc.error
            if exc.status_code == 404:
                detail = (
                    f"model {self.model!r} not found ({exc.error}; run `ollama pull {self.model}`)"
                )
            raise UpstreamUnavailable(self.resilience.name, detail) from exc
        vectors = [list(vector) for vector in response.embeddings]
        if len(vectors) != len(inputs):
            raise UpstreamUnavailable(
                self.resilience.name, f"{len(vectors)} embeddings for {len(inputs)} inputs"
            )
        self._check_dimension(len(vectors[0]))
        return vectors

    def _check_dimension(self, found: int) -> None:
        if self._dimension is None:
            self._dimension = found
        elif found != self._dimension:
            raise ValueError(
                f"{self.model} returned {found}-d vectors, expected {self._dimension}-d "
                f"(configured: {self._expected_dimension}); one collection per embedder id"
            )
