"""Admission: a web process takes in the questions it can answer in time and tells the rest
so at once (503 `busy` with `Retry-After`), instead of taking them all and answering none in
time.

Answering is CPU work (about 0.4 s a question on one core: the query's embedding, the
reranker, the quote), so questions run a few at a time (`ASKDOCS_ANSWER_SLOTS`, the cores by
default) and the rest wait their turn. Given every question in at once, 200 visitors on two
cores all waited 71-129 s and were answered together; a listen queue of 50 reset the
connections it could not hold. Here:

- a question is admitted when, by the measured time an answer holds a slot, everything
  before it and itself would be done within `ASKDOCS_ANSWER_DEADLINE_SECONDS`; otherwise it
  is refused before any work, with the seconds until there is room (`Overloaded`);
- one project holds at most `ASKDOCS_PROJECT_SHARE` of what the deadline admits, so one
  project's flood leaves room for the others' questions;
- the waiting questions are served in order of arrival within each project, and the projects
  in turn, so a project with one question is not behind another's hundred.

One gate per process (`gate()`); each web process admits for its own cores.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import threading
import time
import weakref
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any

from assistant.errors import IntakeError

#: Seconds an answer holds a slot, until answers are measured (0.4 s of CPU, and the rest).
FIRST_ESTIMATE = 0.5
#: The weight of the newest answer in the running estimate of how long an answer holds a slot.
_SMOOTHING = 0.2


class Overloaded(IntakeError):
    """Refused at once: more is admitted than can be answered within the deadline."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(
            "busy",
            "Too many questions right now: please ask again in "
            f"{retry_after} second{'' if retry_after == 1 else 's'}.",
            503,
            retry_after=retry_after,
        )


class _Place:
    """A ticket's state, apart from the ticket, so that a ticket dropped unused (a stream whose
    client left before it started) is given back by its finaliser."""

    __slots__ = ("project", "running", "entered", "done", "started", "wake")

    def __init__(self, project: str) -> None:
        self.project = project
        self.running = self.entered = self.done = False
        self.started = 0.0
        #: Called (with the gate's lock held) when its turn comes or it leaves the line.
        self.wake: Callable[[], None] | None = None


class Ticket:
    """One admitted question: `with ticket:` waits for its turn, then holds a slot until the
    block ends or `release()`."""

    def __init__(self, gate: Gate, place: _Place) -> None:
        self._gate, self._place = gate, place
        self._finalizer = weakref.finalize(self, gate._leave, place)

    def __enter__(self) -> Ticket:
        if not self._place.running:
            _release_database()
        self._gate._wait_for_turn(self._place)
        return self

    async def turn(self) -> None:
        """Wait for its turn on the event loop (a stream's worker thread then runs at once:
        threads of a bounded pool waiting in line could hold every thread while the slots
        went to questions queued behind them)."""
        loop = asyncio.get_running_loop()
        came: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone
                loop.call_soon_threadsafe(_settle, came)

        self._gate._when_turn(self._place, wake)
        await came
        self._place.entered = True

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()

    def release(self) -> None:
        """Give the slot back (or the place in line, when it never ran); idempotent."""
        self._finalizer()


class Gate:
    def __init__(
        self,
        *,
        slots: int,
        deadline: float,
        share: float,
        first_estimate: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.slots, self.deadline, self.share = slots, deadline, share
        self.seconds_per_answer = first_estimate
        self.clock = clock
        self._lock = threading.Condition()
        self._running = 0
        self._waiting: OrderedDict[str, deque[_Place]] = OrderedDict()
        self._by_project: dict[str, int] = {}

    @property
    def capacity(self) -> int:
        """How many questions (running and waiting) can be done within the deadline."""
        per_second = self.slots / max(self.seconds_per_answer, 1e-3)
        return max(self.slots, math.floor(self.deadline * per_second))

    def full(self) -> bool:
        """Whether no question could be admitted now (read without the lock: a hint)."""
        admitted = self._running + sum(len(line) for line in list(self._waiting.values()))
        return admitted >= self.capacity

    def retry_after_full(self) -> int:
        return self._retry_after(1)

    def admit(self, project: str) -> Ticket:
        """A ticket for a question of `project`, or `Overloaded` with when to try again."""
        with self._lock:
            admitted = self._running + sum(len(line) for line in self._waiting.values())
            capacity = self.capacity
            per_project = max(1, math.floor(capacity * self.share))
            if admitted >= capacity:
                raise Overloaded(self._retry_after(admitted - capacity + 1))
            if self._by_project.get(project, 0) >= per_project:
                raise Overloaded(self._retry_after(self._by_project[project] - per_project + 1))
            place = _Place(project)
            self._by_project[project] = self._by_project.get(project, 0) + 1
            self._waiting.setdefault(project, deque()).append(place)
            self._dispatch()
            return Ticket(self, place)

    def _retry_after(self, beyond: int) -> int:
        """Seconds until the line has moved on by `beyond` answers (at least one second)."""
        return max(1, math.ceil(beyond * self.seconds_per_answer / self.slots))

    def _dispatch(self) -> None:
        """Start the next questions while slots are free: the projects in turn, each in order
        of arrival. Called with the lock held."""
        while self._running < self.slots and self._waiting:
            project, line = next(iter(self._waiting.items()))
            place = line.popleft()
            if line:
                self._waiting.move_to_end(project)  # its next question after the others'
            else:
                del self._waiting[project]
            place.running, place.started = True, self.clock()
            self._running += 1
            if place.wake is not None:
                place.wake()
        self._lock.notify_all()

    def _when_turn(self, place: _Place, wake: Callable[[], None]) -> None:
        with self._lock:
            if place.running or place.done:
                wake()
            else:
                place.wake = wake

    def _wait_for_turn(self, place: _Place) -> None:
        with self._lock:
            while not place.running and not place.done:
                self._lock.wait()
            place.entered = True

    def _leave(self, place: _Place) -> None:
        with self._lock:
            if place.done:
                return
            place.done = True
            left = self._by_project.get(place.project, 1) - 1
            if left > 0:
                self._by_project[place.project] = left
            else:
                self._by_project.pop(place.project, None)
            if place.running:
                self._running -= 1
                if place.entered:  # a ticket dropped unused says nothing of answers
                    held = self.clock() - place.started
                    self.seconds_per_answer += _SMOOTHING * (held - self.seconds_per_answer)
            else:
                line = self._waiting.get(place.project)
                if line is not None and place in line:
                    line.remove(place)
                    if not line:
                        del self._waiting[place.project]
                if place.wake is not None:
                    place.wake()
            self._dispatch()


def _release_database() -> None:
    """A question waiting its turn holds no database connection. With a pool of a few
    connections, each question in line held one for seconds and the questions behind them
    waited for the pool instead of reaching the gate: on the scale-out stack 316 of 400 asks
    at once were told `busy` only after the pool's 30 s (`pool exhausted`). Closing returns
    the connection to the pool (or closes it, without one); the answer opens one again on its
    turn. A connection inside a transaction is left alone."""
    from django.db import connections

    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close()


def _settle(came: asyncio.Future[None]) -> None:
    if not came.done():
        came.set_result(None)


_gate: Gate | None = None
_gate_lock = threading.Lock()


def gate() -> Gate:
    """This process's gate, built from the settings on first use."""
    global _gate
    if _gate is None:
        with _gate_lock:
            if _gate is None:
                _gate = _from_settings()
    return _gate


def reset() -> None:
    """Tests: the next `gate()` is built anew from the settings."""
    global _gate
    _gate = None


def _from_settings() -> Gate:
    from django.conf import settings

    return Gate(
        slots=settings.ASKDOCS_ANSWER_SLOTS, deadline=settings.ASKDOCS_ANSWER_DEADLINE_SECONDS,
        share=settings.ASKDOCS_PROJECT_SHARE,
        first_estimate=FIRST_ESTIMATE,
    )  # fmt: skip


def admit(project_key: str) -> Ticket:
    """A ticket for one question of the project, or `Overloaded` (a 503 `busy`)."""
    return gate().admit(project_key)


#: The doors whose questions are admitted (a question asked there is CPU work to answer).
ASKING_PATHS = frozenset({"/api/v1/ask", "/api/v1/ask/stream", "/api/v1/retrieve"})


async def refuse_when_full(
    scope: dict[str, Any], send: Callable[[dict[str, Any]], Awaitable[None]]
) -> bool:
    """Answer 503 `busy` (and True) to a question when nothing could be admitted, before
    Django, its middleware and the intake's database lookups: under a flood of hundreds those
    were what kept the refusals from being at once (up to 8 s) and took the answers' CPU.
    The body says nothing of any project, so any page may read it (the widget shows it)."""
    if scope["path"] not in ASKING_PATHS or scope.get("method") not in ("GET", "POST"):
        return False
    current = gate()
    if not current.full():
        return False
    error = Overloaded(current.retry_after_full())
    body = json.dumps(error.body()).encode()
    headers = [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(error.retry_after).encode()), (b"connection", b"close"),
    ]  # fmt: skip
    origin = dict(scope.get("headers") or []).get(b"origin")
    if origin:
        headers += [
            (b"access-control-allow-origin", origin), (b"vary", b"Origin"),
            (b"access-control-expose-headers", b"Retry-After"),
        ]  # fmt: skip
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})
    return True
