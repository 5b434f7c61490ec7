"""A local model as Generator: llama.cpp in this process, through xllamacpp.

One model per process, loaded on the first question (its file checked by SHA-256 first). The
model answers one question at a time: on two cores, two prompts read side by side take as long
as one after the other, and both visitors would wait for the slower one. So questions queue in
arrival order (`_Line`), each told how many are ahead of it (`Waiting`), and then how much of
its prompt the model has read. The wait counts against a time budget: a question whose answer
has not started within it gets GeneratorUnavailable, and the visitor keeps the quote the
pipeline gave first (rag/written.py). The line is bounded by what the hardware answers in
time: from how long recent answers held the model, a question that would wait longer than the
budget is told GeneratorBusy at once, instead of after a minute in line.

xllamacpp runs llama.cpp's own server loop; a request is a blocking call that hands each
streamed chunk to a callback, and stops when the callback returns True. The call runs on a
thread of its own that puts the chunks on a queue, so `stream` can give up its place in line,
time out, or be closed (a closed socket) at any moment, and the model stops at its next chunk:
one batch of the prompt (`batch` tokens) or one token of the answer.

A process that loaded the model stops its runs and lets llama.cpp go at exit (`close`, from
atexit): left to the interpreter's end, llama.cpp's threads went on writing an answer nobody
read while the interpreter and the library's statics were torn down, and the process died with
SIGSEGV (exit 139) after `bench --only load` had printed its table.
"""

from __future__ import annotations

import atexit
import itertools
import json
import logging
import queue
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant.rag.ports import GeneratorBusy, GeneratorUnavailable
from assistant.rag.types import Cut, Part, Prompt, Waiting
from assistant.wiring.adapters.gguf_files import LocalModelError, verify_model_file

logger = logging.getLogger(__name__)

#: How often a waiting question hears where it stands (and its consumer may close it).
HEARTBEAT_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class LocalModelSettings:
    path: Path
    sha256: str = ""  # "" : not checked (a file nobody pinned)
    threads: int = 2
    context: int = 4096
    batch: int = 128
    max_tokens: int = 320
    first_token_timeout: float = 60.0
    between_tokens_timeout: float = 10.0
    queue_limit: int = 8
    #: Until answers were timed here: how long one holds the model (s). Two cores, ~300
    #: prompt tokens at 26/s and ~120 answer tokens at 12/s.
    expected_answer_seconds: float = 20.0
    #: llama.cpp's prompt cache in RAM (MiB): earlier prompts' states, so the shared start of
    #: the next prompt (the rules) is not read again.
    cache_ram_mib: int = 256


class _Line:
    """First come, first served, one at a time. A ticket is in line from `join` until `leave`;
    the first ticket in line has the model."""

    def __init__(self) -> None:
        self._tickets: deque[int] = deque()
        self._numbers = itertools.count(1)
        self._changed = threading.Condition()

    def join(self, limit: int) -> int | None:
        """A new ticket at the end of the line, or None when `limit` are already waiting."""
        with self._changed:
            if len(self._tickets) > limit:
                return None
            ticket = next(self._numbers)
            self._tickets.append(ticket)
            return ticket

    def ahead(self, ticket: int) -> int:
        with self._changed:
            return self._tickets.index(ticket)

    def wait_turn(self, ticket: int, timeout: float) -> int:
        """Wait at most `timeout` seconds for the ticket's turn; how many are still ahead."""
        with self._changed:
            self._changed.wait_for(lambda: self._tickets[0] == ticket, timeout=timeout)
            return self._tickets.index(ticket)

    def leave(self, ticket: int) -> None:
        with self._changed:
            if ticket in self._tickets:
                self._tickets.remove(ticket)
                self._changed.notify_all()

    def __len__(self) -> int:
        with self._changed:
            return len(self._tickets)


class _Pace:
    """How long an answer holds the model, from the last ones (a moving average): the line
    admits a question only when the answers ahead of it should be done within its budget."""

    def __init__(self, first_guess: float) -> None:
        self.seconds = first_guess
        self._lock = threading.Lock()

    def record(self, seconds: float) -> None:
        with self._lock:
            self.seconds = 0.7 * self.seconds + 0.3 * seconds

    def wait_for(self, ahead: int) -> float:
        """The expected wait behind `ahead` questions, the first of which is being answered
        (half done, on average)."""
        with self._lock:
            return max(0.0, ahead - 0.5) * self.seconds


class LocalModel:
    """The process's llama.cpp server with one model, built on first use (never at import:
    Celery forks, and the file is 1 GB)."""

    def __init__(self, settings: LocalModelSettings) -> None:
        self.settings = settings
        self._server: Any = None
        self._lock = threading.Lock()
        self._runs: set[_Run] = set()
        self.load_seconds: float | None = None

    def server(self) -> Any:
        with self._lock:
            if self._server is None:
                self._server = self._load()
                atexit.register(self.close)
            return self._server

    def start(self, request: dict[str, Any], on_end: Callable[[], None]) -> _Run:
        """One request to the model, on a thread of its own (loading the model first)."""
        server = self.server()

        def ended() -> None:
            with self._lock:
                self._runs.discard(run)
            on_end()

        run = _Run(server, request, on_end=ended)
        with self._lock:
            self._runs.add(run)
        run.start()
        return run

    def close(self, wait: float = 30.0) -> None:
        """Stop every run (llama.cpp stops at its next chunk), wait for their threads, then
        drop the server, whose destructor stops llama.cpp's own threads and frees the model.
        At exit this runs while the interpreter is still whole. The next question loads the
        model again."""
        with self._lock:
            runs, self._server = list(self._runs), None
        for run in runs:
            run.stopped.set()
        deadline = time.monotonic() + wait
        for run in runs:
            run.join(max(0.0, deadline - time.monotonic()))
        if any(run.is_alive() for run in runs):
            logger.warning("the local model was still running %d answers at exit", len(runs))

    def _load(self) -> Any:
        started = time.perf_counter()
        try:
            import xllamacpp  # the `local` extra
        except ImportError as exc:
            raise GeneratorUnavailable(
                "the local model needs xllamacpp: .venv/bin/pip install -e '.[local]'"
            ) from exc
        try:
            verify_model_file(self.settings.path, sha256=self.settings.sha256)
        except LocalModelError as exc:
            raise GeneratorUnavailable(str(exc)) from exc
        if not self.settings.sha256:
            logger.warning(
                "loading %s unverified: set ASKDOCS_LOCAL_MODEL_SHA256 to pin it",
                self.settings.path,
            )
        params = xllamacpp.CommonParams()
        params.model.path = str(self.settings.path)
        params.n_ctx = self.settings.context
        params.n_parallel = 1  # one question at a time (see _Line)
        params.n_batch = params.n_ubatch = self.settings.batch
        params.cpuparams.n_threads = self.settings.threads
        params.cpuparams_batch.n_threads = self.settings.threads
        params.cache_ram_mib = self.settings.cache_ram_mib
        params.warmup = False
        params.verbosity = 0
        # llama.cpp's server also listens on a loopback port, which nothing here uses: a key
        # nobody knows keeps other local users from using the model through it.
        params.api_keys = [secrets.token_urlsafe(32)]
        try:
            server = xllamacpp.Server(params)
        except Exception as exc:
            raise GeneratorUnavailable(
                f"llama.cpp could not load {self.settings.path}: {exc}"
            ) from exc
        self.load_seconds = round(time.perf_counter() - started, 2)
        logger.info("local model %s loaded in %.1f s", self.settings.path.name, self.load_seconds)
        return server


_END = object()


class _Run:
    """One request to llama.cpp on a thread of its own; its chunks arrive on `chunks`."""

    def __init__(self, server: Any, request: dict[str, Any], on_end: Any) -> None:
        self.chunks: queue.Queue[Any] = queue.Queue()
        self.stopped = threading.Event()
        self._thread = threading.Thread(
            target=self._work, args=(server, request, on_end), name="local-llm", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def _work(self, server: Any, request: dict[str, Any], on_end: Any) -> None:
        try:
            server.handle_chat_completions(request, self._chunk)
        except Exception as exc:  # noqa: BLE001 - reported to the reader as unavailable
            self.chunks.put(exc)
        finally:
            self.chunks.put(_END)
            on_end()

    def _chunk(self, raw: str | dict[str, Any]) -> bool:
        self.chunks.put(json.loads(raw) if isinstance(raw, str | bytes) else raw)
        return self.stopped.is_set()  # True stops llama.cpp at this chunk


class LocalGenerator:
    """Streams a written answer from the local model; see the module's docstring."""

    def __init__(self, settings: LocalModelSettings, model: LocalModel | None = None) -> None:
        self.settings = settings
        self.model = model or LocalModel(settings)
        self.id = f"local:{settings.path.stem}"
        self._line = _Line()
        self.pace = _Pace(settings.expected_answer_seconds)
        #: llama.cpp's own figures for the last answer it finished (prompt and answer tokens,
        #: tokens a second, tokens read from its prompt cache), for `bench`.
        self.last_timings: dict[str, float] = {}

    @property
    def waiting(self) -> int:
        """Questions in line, the one being answered included."""
        return len(self._line)

    def stream(self, prompt: Prompt) -> Generator[Part, None, None]:
        started = time.monotonic()
        deadline = started + self.settings.first_token_timeout
        expected = self.pace.wait_for(len(self._line))
        if expected > self.settings.first_token_timeout:
            raise GeneratorBusy(
                f"local model busy: {len(self._line)} questions ahead, about {expected:.0f} s, "
                f"more than the {self.settings.first_token_timeout:g} s an answer may wait"
            )
        ticket = self._line.join(self.settings.queue_limit)
        if ticket is None:
            raise GeneratorBusy(
                f"local model busy: {self.settings.queue_limit} questions already waiting"
            )
        handed_over = False
        try:
            ahead = self._line.ahead(ticket)
            while ahead:
                yield Waiting(ahead=ahead)
                if time.monotonic() > deadline:
                    raise GeneratorUnavailable(
                        f"local model: no answer started within "
                        f"{self.settings.first_token_timeout:g} s ({ahead} questions ahead)"
                    )
                ahead = self._line.wait_turn(ticket, HEARTBEAT_SECONDS)
            began = time.monotonic()

            def on_end() -> None:
                self.pace.record(time.monotonic() - began)
                self._line.leave(ticket)

            # Not holding the server here: at exit, `close` lets it go once its runs end.
            run = self.model.start(self._request(prompt), on_end=on_end)
            handed_over = True  # the run leaves the line when llama.cpp has let go
            yield from self._read(run, deadline)
        finally:
            if not handed_over:
                self._line.leave(ticket)

    def _request(self, prompt: Prompt) -> dict[str, Any]:
        messages = [{"role": "system", "content": prompt.system}]
        messages += [{"role": turn.role, "content": turn.content} for turn in prompt.messages]
        return {
            "messages": messages,
            "stream": True,
            "max_tokens": self.settings.max_tokens,
            "temperature": 0.0,
            "cache_prompt": True,
            "return_progress": True,
        }

    def _read(self, run: _Run, deadline: float) -> Iterator[Part]:
        written = 0
        read = 0.0
        try:
            while True:
                wait = HEARTBEAT_SECONDS if not written else self.settings.between_tokens_timeout
                try:
                    chunk = run.chunks.get(timeout=wait)
                except queue.Empty:
                    if written:
                        raise GeneratorUnavailable(
                            "local model: no token for "
                            f"{self.settings.between_tokens_timeout:g} s mid-answer"
                        ) from None
                    chunk = {}
                if chunk is _END:
                    return
                if isinstance(chunk, Exception):
                    raise GeneratorUnavailable(f"local model failed: {chunk}") from chunk
                if "error" in chunk:
                    raise GeneratorUnavailable(f"local model: {chunk['error']}")
                if "timings" in chunk:
                    self.last_timings = chunk["timings"]
                choices = chunk.get("choices", ())
                text = "".join((c.get("delta") or {}).get("content") or "" for c in choices)
                if text:
                    written += 1
                    yield text
                if any(c.get("finish_reason") == "length" for c in choices):
                    yield Cut()
                if text:
                    continue
                if written:
                    continue
                if time.monotonic() > deadline:
                    raise GeneratorUnavailable(
                        "local model: no first token within "
                        f"{self.settings.first_token_timeout:g} s"
                    )
                progress = chunk.get("prompt_progress") or {}
                if progress.get("total"):
                    read = min(progress.get("processed", 0) / progress["total"], 1.0)
                yield Waiting(ahead=0, read=read)
        finally:
            run.stopped.set()  # finished, failed or closed: llama.cpp stops at its next chunk
