"""The admission gate (assistant/admission.py) on its own: what it admits by the deadline, the
share one project may hold, the order questions run in, and a place given back when its
question is dropped unasked. Its clock is a test's; its threads are real."""

from __future__ import annotations

import asyncio
import gc
import threading
import time

import pytest

from assistant.admission import Gate, Overloaded


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def gate(**overrides: float) -> Gate:
    options = {"slots": 2, "deadline": 4.0, "share": 0.5, "first_estimate": 0.5}
    return Gate(**{**options, **overrides}, clock=Clock())  # type: ignore[arg-type]


def test_it_admits_what_the_deadline_allows_and_refuses_the_rest_with_when_to_return() -> None:
    admitting = gate(share=1.0)
    assert admitting.capacity == 16  # 4 s x 2 slots / 0.5 s an answer
    tickets = [admitting.admit("a") for _ in range(16)]
    with pytest.raises(Overloaded) as refused:
        admitting.admit("a")
    assert (refused.value.status, refused.value.code) == (503, "busy")
    assert refused.value.headers() == {"Retry-After": "1"}
    assert refused.value.frame()["retry_after"] == 1
    tickets[0].release()
    admitting.admit("a")  # a place came free


def test_the_estimate_follows_how_long_answers_hold_a_slot() -> None:
    admitting = gate(share=1.0)
    clock: Clock = admitting.clock  # type: ignore[assignment]
    for _ in range(30):
        with admitting.admit("a"):
            clock.now += 2.0  # answers are slow: two seconds each
    assert admitting.seconds_per_answer == pytest.approx(2.0, abs=0.01)
    assert admitting.capacity == 4
    tickets = [admitting.admit("a") for _ in range(4)]
    with pytest.raises(Overloaded) as refused:
        admitting.admit("a")
    assert refused.value.retry_after == 1  # one answer of two seconds, on two slots
    del tickets


def test_one_project_holds_at_most_its_share_and_another_still_gets_in() -> None:
    admitting = gate()
    flood = [admitting.admit("a") for _ in range(8)]  # half of 16
    with pytest.raises(Overloaded):
        admitting.admit("a")
    other = admitting.admit("b")
    assert other is not None and len(flood) == 8


def test_questions_run_in_order_of_arrival_and_the_projects_in_turn() -> None:
    admitting = gate(slots=1, share=1.0)
    started: list[str] = []
    lock = threading.Lock()
    first = admitting.admit("a")
    first.__enter__()  # the one slot is taken: everything else waits in line

    def ask(name: str, ticket: object) -> None:
        with ticket:  # type: ignore[attr-defined]
            with lock:
                started.append(name)

    threads = []
    for name in ("a1", "a2", "a3", "b1", "b2"):
        ticket = admitting.admit(name[0])
        threads.append(threading.Thread(target=ask, args=(name, ticket)))
        threads[-1].start()
    time.sleep(0.2)
    assert started == []
    first.release()
    for thread in threads:
        thread.join(10)
    assert started == ["a1", "b1", "a2", "b2", "a3"]


def test_a_ticket_dropped_unused_gives_its_place_back() -> None:
    admitting = gate(share=1.0)
    for _ in range(16):
        admitting.admit("a")  # each dropped at once, as a stream whose client left unasked
    gc.collect()
    assert [admitting.admit("a") for _ in range(16)]


def test_a_stream_waits_for_its_turn_on_the_event_loop() -> None:
    admitting = gate(slots=1, share=1.0)

    async def run() -> list[str]:
        order: list[str] = []
        holder = admitting.admit("a")
        holder.__enter__()
        waiting = admitting.admit("b")

        async def stream() -> None:
            await waiting.turn()
            order.append("b runs")
            waiting.release()

        task = asyncio.create_task(stream())
        await asyncio.sleep(0.1)
        order.append("a leaves")
        holder.release()
        await asyncio.wait_for(task, 5)
        return order

    assert asyncio.run(run()) == ["a leaves", "b runs"]


@pytest.mark.django_db(transaction=True)
def test_a_question_waiting_its_turn_holds_no_database_connection(narrow_gate) -> None:  # noqa: ANN001
    from django.db import connection

    from assistant import admission
    from assistant.models import Project

    if connection.vendor == "sqlite" and connection.is_in_memory_db():
        pytest.skip("an in-memory SQLite connection is never closed; the PostgreSQL pass checks it")
    running = [admission.admit("a"), admission.admit("b")]  # both slots busy
    for ticket in running:
        ticket.__enter__()
    held: dict[str, object] = {}

    def question() -> None:
        from django.db import connections

        own = connections["default"]  # this thread's own wrapper (not the proxy)
        Project.objects.exists()  # the intake's lookups open this thread's connection
        held["wrapper"], held["open"] = own, own.connection is not None
        with admission.admit("c"):
            held["answered"] = Project.objects.exists()  # one again, on its turn
        own.close()

    waiting = threading.Thread(target=question)
    waiting.start()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not (
        "wrapper" in held and held["wrapper"].connection is None  # type: ignore[attr-defined]
    ):
        time.sleep(0.01)
    assert held["open"] is True
    assert held["wrapper"].connection is None  # type: ignore[attr-defined]  # closed while in line
    assert "answered" not in held
    running[0].release()
    waiting.join(10)
    assert "answered" in held  # on its turn it read the database again
    for ticket in running:
        ticket.release()
