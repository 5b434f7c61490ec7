"""One policy for every outbound call (Ollama, later Twilio's REST API): retries with
exponential backoff and jitter (tenacity), and a circuit breaker per upstream (pybreaker).

Breakers are process-wide and keyed by upstream name ("ollama:http://host:11434"), so every
adapter talking to the same server shares one view of its health.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import httpx
import pybreaker
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

P = ParamSpec("P")
T = TypeVar("T")

Classifier = Callable[[BaseException], bool]
Clock = Callable[[], float]

_RETRYABLE_STATUSES = frozenset({408, 429})


class UpstreamUnavailable(RuntimeError):
    """The upstream cannot serve the call now: its circuit is open or every attempt failed."""

    def __init__(self, name: str, cause: BaseException | str, *, attempts: int = 0) -> None:
        self.name = name
        self.cause = cause
        self.attempts = attempts
        detail = describe(cause)
        if attempts > 1:
            detail = f"{detail} (after {attempts} attempts)"
        super().__init__(f"{name} unavailable: {detail}")

    @property
    def circuit_open(self) -> bool:
        return isinstance(self.cause, CircuitOpen)


class CircuitOpen(RuntimeError):
    """Raised instead of calling an upstream that failed too often just now."""


def describe(exc: BaseException | str) -> str:
    """A one-line cause for logs: the exception type when its message alone says little."""
    if isinstance(exc, str):
        return exc
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an exception carries, whatever the client library calls it."""
    for attribute in ("status_code", "status"):
        value = getattr(exc, attribute, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def is_transient(exc: BaseException) -> bool:
    """Worth another attempt: the network failed, or the server said "not now" (5xx, 408, 429)."""
    if isinstance(exc, ConnectionError | TimeoutError | httpx.TransportError):
        return True
    status = status_of(exc)
    return status is not None and (status >= 500 or status in _RETRYABLE_STATUSES)


def is_client_error(exc: BaseException) -> bool:
    """The upstream answered and refused the request (4xx): it is healthy, our request is not."""
    status = status_of(exc)
    return status is not None and 400 <= status < 500 and status not in _RETRYABLE_STATUSES


class _Circuit:
    """pybreaker's state machine with admission done outside its lock.

    pybreaker's own `call()` holds one lock for the whole guarded call, which would serialise
    every concurrent request to the upstream (a streamed answer waits seconds for its first
    token). So the work runs outside the breaker and its outcome is replayed through it.
    Our own clock decides when an open circuit may be probed, so tests can move time.
    """

    def __init__(self, name: str, *, fail_max: int, reset_timeout: float, clock: Clock) -> None:
        self.name = name
        self.reset_timeout = reset_timeout
        self._clock = clock
        self._lock = threading.Lock()
        self._opened_at = 0.0
        self._probe_started_at = 0.0
        self._breaker = pybreaker.CircuitBreaker(
            fail_max=fail_max,
            reset_timeout=reset_timeout,
            name=name,
            listeners=[_OpenedAtListener(self)],
        )

    @property
    def state(self) -> str:
        return self._breaker.current_state

    def admit(self) -> None:
        """Return if a call may go out now; raise CircuitOpen otherwise (no network call)."""
        with self._lock:
            state = self._breaker.current_state
            if state == pybreaker.STATE_CLOSED:
                return
            now = self._clock()
            if state == pybreaker.STATE_HALF_OPEN:
                # One probe at a time; a probe that never reported back does not block forever.
                if now - self._probe_started_at < self.reset_timeout:
                    raise CircuitOpen(f"circuit for {self.name} is half-open, a probe is running")
            else:
                waited = now - self._opened_at
                if waited < self.reset_timeout:
                    raise CircuitOpen(
                        f"circuit for {self.name} is open after {self._breaker.fail_max} "
                        f"failed calls; next try in {self.reset_timeout - waited:.1f} s"
                    )
                self._breaker.half_open()
            self._probe_started_at = now

    def succeeded(self) -> None:
        self._replay(None)

    def failed(self, exc: BaseException) -> None:
        self._replay(exc)

    def _replay(self, failure: BaseException | None) -> None:
        def outcome() -> None:
            if failure is not None:
                raise _ReplayedFailure(failure)

        try:
            self._breaker.call(outcome)
        except (_ReplayedFailure, pybreaker.CircuitBreakerError):
            pass  # the breaker has counted it; the caller raises the real error

    def mark_opened(self) -> None:
        self._opened_at = self._clock()


class _ReplayedFailure(Exception):
    def __init__(self, cause: BaseException) -> None:
        super().__init__(describe(cause))


class _OpenedAtListener(pybreaker.CircuitBreakerListener):
    def __init__(self, circuit: _Circuit) -> None:
        self._circuit = circuit

    def state_change(self, cb: Any, old_state: Any, new_state: Any) -> None:
        if new_state is not None and new_state.name == pybreaker.STATE_OPEN:
            self._circuit.mark_opened()


_circuits: dict[str, _Circuit] = {}
_circuits_lock = threading.Lock()


def _circuit_for(name: str, *, fail_max: int, reset_timeout: float, clock: Clock) -> _Circuit:
    # The first policy built for an upstream fixes its breaker settings for the process.
    with _circuits_lock:
        circuit = _circuits.get(name)
        if circuit is None:
            circuit = _Circuit(name, fail_max=fail_max, reset_timeout=reset_timeout, clock=clock)
            _circuits[name] = circuit
        return circuit


def circuit_state(name: str) -> str:
    """ "closed", "open" or "half-open" for a known upstream; "closed" for an unknown one."""
    with _circuits_lock:
        circuit = _circuits.get(name)
    return circuit.state if circuit is not None else pybreaker.STATE_CLOSED


def reset_circuits() -> None:
    """Forget every breaker (tests, or an operator who knows the upstream is back)."""
    with _circuits_lock:
        _circuits.clear()


class Resilience:
    """Retry transient failures, then let the upstream's circuit breaker decide.

    `call()` raises UpstreamUnavailable when the circuit is open (at once, without calling
    `fn`) or when every attempt failed on transient errors. Any other error (a 4xx such as
    "model not found", a bug) is raised unchanged after one attempt. Each `call()` counts as
    one success or failure for the breaker; 4xx answers prove the upstream is up and count as
    successes.
    """

    def __init__(
        self,
        name: str,
        *,
        attempts: int = 3,
        backoff_initial: float = 0.2,
        backoff_max: float = 2.0,
        fail_max: int = 5,
        reset_timeout: float = 30.0,
        retry_if: Classifier = is_transient,
        clock: Clock = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        self.name = name
        self.attempts = attempts
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self._retry_if = retry_if
        self._sleep = sleep
        self._circuit = _circuit_for(
            name, fail_max=fail_max, reset_timeout=reset_timeout, clock=clock
        )

    @property
    def state(self) -> str:
        return self._circuit.state

    def call(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            self._circuit.admit()
        except CircuitOpen as exc:
            raise UpstreamUnavailable(self.name, exc) from exc

        retrying = Retrying(
            stop=stop_after_attempt(self.attempts),
            wait=wait_exponential_jitter(
                multiplier=self.backoff_initial, max=self.backoff_max, jitter=self.backoff_initial
            ),
            retry=retry_if_exception(self._retry_if),
            sleep=self._sleep,
            reraise=True,
        )
        try:
            result = retrying(fn, *args, **kwargs)
        except Exception as exc:
            # KeyboardInterrupt and friends are nobody's verdict on the upstream: not counted
            # (a half-open probe they interrupt expires after reset_timeout).
            if is_client_error(exc):
                self._circuit.succeeded()
                raise
            self._circuit.failed(exc)
            if self._retry_if(exc):
                attempts = retrying.statistics.get("attempt_number", self.attempts)
                raise UpstreamUnavailable(self.name, exc, attempts=attempts) from exc
            raise
        self._circuit.succeeded()
        return result
