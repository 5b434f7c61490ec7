"""The one way this app runs work in the background: `enqueue(task, *args)`.

With a broker (REDIS_URL or CELERY_BROKER_URL) the Celery task goes to the workers once the
current transaction commits. On the embedded default there is no broker: the task runs after
the commit on a thread of this process, and the caller gets a Future of its result.

Each kind of work has a lane of its own (one thread each): syncs, handoff deliveries, SMS
replies, Slack answers, Discord answers, anything else. One kind never waits behind another:
three handoffs to a webhook that hangs once kept a new source's first sync from starting for
over two minutes. Syncs still run one at a time (the in-process Chroma store sees a single
writer), on a thread of lower CPU priority than the answers'. A retry waits in the schedule
(`enqueue_later`), not in a sleeping thread that would hold its lane. Syncs (console, admin,
webhook, the in-process scheduler), handoffs and deferred SMS replies go through here; nothing
else starts threads for background work.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from typing import Any

from django.db import close_old_connections, connections, transaction

logger = logging.getLogger(__name__)


#: A lane by the task's module; every other task goes to "other".
LANES = {"ingestion.tasks": "sync", "assistant.handoff.tasks": "handoff",
         "assistant.sms.tasks": "sms", "assistant.slack.tasks": "slack",
         "assistant.discord.tasks": "discord"}  # fmt: skip
#: How much lower a sync's thread runs than the answers (os.setpriority: 0 to 19).
SYNC_NICENESS = 10


def lane_of(task: Any) -> str:
    return LANES.get(getattr(task, "__module__", ""), "other")


@cache
def _lane(name: str) -> ThreadPoolExecutor:
    # Built on first use, never at import: a forked worker must not inherit its thread.
    return ThreadPoolExecutor(
        max_workers=1,
        thread_name_prefix=f"askdocs-{name}",
        initializer=_lower_priority if name == "sync" else None,
    )


def _lower_priority() -> None:
    """On Linux a thread has a priority of its own (its native id is a process id to
    setpriority): parsing, extraction and chunking of a crawl yield the cores to answers."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), SYNC_NICENESS)
    except (AttributeError, OSError):
        logger.info("cannot lower the sync thread's priority here; it runs at the default")


def enqueue(task: Any, *args: Any) -> Future[object] | None:
    """Run the Celery `task` with `args` in the background once the current transaction
    commits; without a broker, a Future of its result (None with a broker)."""
    if not task.app.conf.task_always_eager:  # Celery's own switch (CELERY_TASK_ALWAYS_EAGER)
        transaction.on_commit(lambda: task.delay(*args))
        return None
    future: Future[object] = Future()

    def submit() -> None:
        _lane(lane_of(task)).submit(_run, task, args).add_done_callback(
            lambda done: _copy(done, future)
        )

    transaction.on_commit(submit)
    return future


def run_now_in_background(task: Any, *args: Any) -> Future[object]:
    """Without a broker, queue `task` on its lane at once (the in-process scheduler, and
    retries, which have no transaction to wait for)."""
    return _lane(lane_of(task)).submit(_run, task, args)


def enqueue_later(delay: float, task: Any, *args: Any) -> None:
    """Without a broker, queue `task` on its lane after `delay` seconds: the wait holds no
    lane (one schedule thread keeps every waiting retry)."""
    _schedule().add(time.monotonic() + delay, lambda: run_now_in_background(task, *args))


class _Schedule:
    def __init__(self) -> None:
        self._due: list[tuple[float, int, Any]] = []
        self._order = itertools.count()
        self._changed = threading.Condition()
        threading.Thread(target=self._run, name="askdocs-schedule", daemon=True).start()

    def add(self, when: float, job: Any) -> None:
        with self._changed:
            heapq.heappush(self._due, (when, next(self._order), job))
            self._changed.notify()

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._due or self._due[0][0] > time.monotonic():
                    wait = self._due[0][0] - time.monotonic() if self._due else None
                    self._changed.wait(wait)
                _, _, job = heapq.heappop(self._due)
            try:
                job()
            except Exception:  # a job only queues a task; never let the schedule die
                logger.exception("a scheduled task could not be queued")


@cache
def _schedule() -> _Schedule:
    return _Schedule()


def _run(task: Any, args: tuple[Any, ...]) -> object:
    close_old_connections()
    try:
        return task.apply(args=args).get()
    finally:
        connections.close_all()  # this thread's connections: background work is rare


def _copy(done: Future[object], target: Future[object]) -> None:
    error = done.exception()
    if error is not None:
        logger.error("Background task failed: %s", error)
        target.set_exception(error)
    else:
        target.set_result(done.result())
