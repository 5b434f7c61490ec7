"""The handoff between the webhook and the thread computing the answer: whatever the timing,
the answer is delivered exactly once, inline or later."""

from __future__ import annotations

import random
import threading
import time

from assistant.sms.deferral import run_within


def test_an_answer_ready_in_time_is_returned_and_not_sent_later():
    later = threading.Event()
    reply = run_within(5.0, answer=lambda: "ready", later=later.set, fallback="sorry")
    assert reply == "ready"
    assert not later.wait(0.2)


def test_an_answer_not_ready_in_time_is_handed_over_once_it_is():
    release = threading.Event()
    later = threading.Event()

    def slow() -> str:
        release.wait(5)
        return "late"

    assert run_within(0.05, answer=slow, later=later.set, fallback="sorry") is None
    assert not later.is_set()  # not before the answer exists
    release.set()
    assert later.wait(5)


def test_a_crashed_answer_replies_with_the_fallback():
    def broken() -> str:
        raise RuntimeError("boom")

    assert run_within(5.0, answer=broken, later=lambda: None, fallback="sorry") == "sorry"


def test_every_answer_is_delivered_exactly_once_whatever_the_timing():
    # Answers take about as long as the budget, so the two sides meet at the handoff in
    # either order (and sometimes at the same moment).
    rng = random.Random(7)
    for _ in range(60):
        took = rng.uniform(0.0, 0.02)
        later_calls: list[int] = []
        done = threading.Event()

        def answer(took: float = took) -> str:
            time.sleep(took)
            return "text"

        def later(calls: list[int] = later_calls, done: threading.Event = done) -> None:
            calls.append(1)
            done.set()

        reply = run_within(0.01, answer=answer, later=later, fallback="sorry")
        if reply is None:
            assert done.wait(5)
        else:
            assert not done.wait(0.05)
        assert int(reply == "text") + len(later_calls) == 1
