"""Retries and circuit breaking, against a real local HTTP server (tests/fake_ollama.py)."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import httpx
import pytest

from assistant.wiring.resilience import Resilience, UpstreamUnavailable, circuit_state
from tests.fake_ollama import FakeOllama, unused_url


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def policy(**overrides: Any) -> Resilience:
    settings: dict[str, Any] = {"backoff_initial": 0.01, "backoff_max": 0.05}
    settings.update(overrides)
    return Resilience(f"test:{uuid.uuid4()}", **settings)


# One client for the module: building one per call costs ~0.1 s (TLS context).
http = httpx.Client(timeout=2)


def embed(server: FakeOllama, model: str = "nomic-embed-text") -> list[float]:
    response = http.post(f"{server.url}/api/embed", json={"model": model, "input": ["hello"]})
    response.raise_for_status()
    vector: list[float] = response.json()["embeddings"][0]
    return vector


def test_it_retries_server_errors_with_backoff_then_succeeds(fake_ollama: FakeOllama) -> None:
    fake_ollama.fail_next(2, status=500)
    resilience = policy(backoff_initial=0.1, backoff_max=1.0)

    vector = resilience.call(embed, fake_ollama)

    assert len(vector) == 768
    seen = fake_ollama.requests_to("/api/embed")
    assert len(seen) == 3
    first_wait = seen[1].received_at - seen[0].received_at
    second_wait = seen[2].received_at - seen[1].received_at
    assert first_wait >= 0.1  # 0.1 * 2**0 + jitter
    assert second_wait >= 0.2  # 0.1 * 2**1 + jitter
    assert resilience.state == "closed"


def test_it_gives_up_after_three_attempts(fake_ollama: FakeOllama) -> None:
    fake_ollama.fail_next(5, status=503, error="overloaded")
    resilience = policy()

    with pytest.raises(UpstreamUnavailable) as raised:
        resilience.call(embed, fake_ollama)

    assert raised.value.attempts == 3
    assert "after 3 attempts" in str(raised.value)
    assert "503" in str(raised.value)
    assert isinstance(raised.value.cause, httpx.HTTPStatusError)
    assert len(fake_ollama.requests_to("/api/embed")) == 3


def test_it_does_not_retry_client_errors(fake_ollama: FakeOllama) -> None:
    resilience = policy(fail_max=1)

    with pytest.raises(httpx.HTTPStatusError) as raised:
        resilience.call(embed, fake_ollama, "no-such-model")

    assert raised.value.response.status_code == 404
    assert "not found" in raised.value.response.json()["error"]
    assert len(fake_ollama.requests_to("/api/embed")) == 1
    # The server answered: a bad request says nothing against its health.
    assert resilience.state == "closed"


def test_it_retries_refused_connections_and_names_the_cause() -> None:
    resilience = policy()
    url = unused_url()

    with pytest.raises(UpstreamUnavailable) as raised:
        resilience.call(http.get, url)

    assert isinstance(raised.value.cause, httpx.ConnectError)
    assert raised.value.attempts == 3
    assert resilience.name in str(raised.value)


def test_it_opens_the_circuit_after_five_failed_calls_then_fails_fast(
    fake_ollama: FakeOllama,
) -> None:
    fake_ollama.fail_next(100, status=500)
    resilience = policy(attempts=1, fail_max=5)

    for _ in range(5):
        with pytest.raises(UpstreamUnavailable) as raised:
            resilience.call(embed, fake_ollama)
        assert not raised.value.circuit_open
    assert resilience.state == "open"
    assert len(fake_ollama.requests) == 5

    started = time.monotonic()
    with pytest.raises(UpstreamUnavailable) as raised:
        resilience.call(embed, fake_ollama)

    assert time.monotonic() - started < 0.05
    assert raised.value.circuit_open
    assert "open" in str(raised.value)
    assert len(fake_ollama.requests) == 5  # the server was not contacted


def test_it_counts_calls_not_attempts(fake_ollama: FakeOllama) -> None:
    fake_ollama.fail_next(4, status=500)
    resilience = policy(attempts=3, fail_max=2)

    with pytest.raises(UpstreamUnavailable):
        resilience.call(embed, fake_ollama)  # three failed attempts, one failed call
    assert resilience.state == "closed"

    resilience.call(embed, fake_ollama)  # one more failure, then success resets the count
    assert resilience.state == "closed"


def test_it_probes_after_the_reset_timeout_and_closes_on_success(
    fake_ollama: FakeOllama,
) -> None:
    clock = FakeClock()
    resilience = policy(attempts=1, fail_max=5, reset_timeout=30, clock=clock)
    fake_ollama.fail_next(5, status=500)
    for _ in range(5):
        with pytest.raises(UpstreamUnavailable):
            resilience.call(embed, fake_ollama)

    clock.advance(29.9)
    with pytest.raises(UpstreamUnavailable) as raised:
        resilience.call(embed, fake_ollama)
    assert raised.value.circuit_open
    assert len(fake_ollama.requests) == 5

    clock.advance(0.2)
    assert len(resilience.call(embed, fake_ollama)) == 768  # the half-open probe

    assert resilience.state == "closed"
    assert len(fake_ollama.requests) == 6
    resilience.call(embed, fake_ollama)
    assert len(fake_ollama.requests) == 7


def test_it_reopens_when_the_probe_fails(fake_ollama: FakeOllama) -> None:
    clock = FakeClock()
    resilience = policy(attempts=1, fail_max=2, reset_timeout=30, clock=clock)
    fake_ollama.fail_next(3, status=500)
    for _ in range(2):
        with pytest.raises(UpstreamUnavailable):
            resilience.call(embed, fake_ollama)

    clock.advance(31)
    with pytest.raises(UpstreamUnavailable) as raised:
        resilience.call(embed, fake_ollama)
    assert not raised.value.circuit_open  # the probe went out, and failed
    assert resilience.state == "open"

    clock.advance(29)  # a fresh reset timeout started with the failed probe
    with pytest.raises(UpstreamUnavailable) as raised:
        resilience.call(embed, fake_ollama)
    assert raised.value.circuit_open
    assert len(fake_ollama.requests) == 3


def test_it_shares_one_breaker_per_upstream(fake_ollama: FakeOllama) -> None:
    name = f"test:{uuid.uuid4()}"
    first = Resilience(name, attempts=1, fail_max=2)
    second = Resilience(name, attempts=1, fail_max=2)
    fake_ollama.fail_next(2, status=500)

    for _ in range(2):
        with pytest.raises(UpstreamUnavailable):
            first.call(embed, fake_ollama)

    assert circuit_state(name) == "open"
    with pytest.raises(UpstreamUnavailable) as raised:
        second.call(embed, fake_ollama)
    assert raised.value.circuit_open
    assert circuit_state(f"test:{uuid.uuid4()}") == "closed"


def test_it_lets_concurrent_calls_run_in_parallel(fake_ollama: FakeOllama) -> None:
    fake_ollama.stall_before_first_token = 0.5
    resilience = policy()
    chat = {"model": "llama3.2", "messages": [], "stream": False}

    def ask() -> None:
        resilience.call(http.post, f"{fake_ollama.url}/api/chat", json=chat)

    threads = [threading.Thread(target=ask) for _ in range(3)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    # One lock held across calls would make this 3 x 0.5 s.
    assert time.monotonic() - started < 1.2
    assert len(fake_ollama.requests) == 3


def test_it_lets_a_single_probe_through_while_half_open(fake_ollama: FakeOllama) -> None:
    clock = FakeClock()
    resilience = policy(attempts=1, fail_max=1, reset_timeout=30, clock=clock)
    fake_ollama.fail_next(1, status=500)
    with pytest.raises(UpstreamUnavailable):
        resilience.call(embed, fake_ollama)
    clock.advance(30)
    fake_ollama.stall_before_first_token = 0.5
    chat = {"model": "llama3.2", "messages": [], "stream": False}
    probe = threading.Thread(
        target=resilience.call,
        args=(http.post, f"{fake_ollama.url}/api/chat"),
        kwargs={"json": chat},
    )
    probe.start()
    while len(fake_ollama.requests) < 2:
        time.sleep(0.01)

    with pytest.raises(UpstreamUnavailable) as raised:
        resilience.call(embed, fake_ollama)
    probe.join()

    assert raised.value.circuit_open
    assert "probe" in str(raised.value)
    assert resilience.state == "closed"
