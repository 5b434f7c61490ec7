"""The one way this app runs work in the background: `enqueue(task, *args)`.

With a broker (REDIS_URL or CELERY_BROKER_URL) the Celery task goes to the workers once the
current transaction commits. On the embedded default there is no broker: the task runs on the
single background thread of this process, after the commit (one at a time, so the in-process
Chroma store and SQLite see a single writer), and the caller gets a Future of its result.
Syncs (console, admin, webhook, the in-process scheduler) and deferred SMS replies go through
here; nothing else starts threads for background work.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from typing import Any

from django.db import close_old_connections, connections, transaction

logger = logging.getLogger(__name__)


@cache
def _thread() -> ThreadPoolExecutor:
    # Built on first use, never at import: a forked worker must not inherit its thread.
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="askdocs-background")


def enqueue(task: Any, *args: Any) -> Future[object] | None:
    """Run the Celery `task` with `args` in the background once the current transaction
    commits; without a broker, a Future of its result (None with a broker)."""
    if not task.app.conf.task_always_eager:  # Celery's own switch (CELERY_TASK_ALWAYS_EAGER)
        transaction.on_commit(lambda: task.delay(*args))
        return None
    future: Future[object] = Future()

    def submit() -> None:
        _thread().submit(_run, task, args).add_done_callback(lambda done: _copy(done, future))

    transaction.on_commit(submit)
    return future


def run_now_in_background(task: Any, *args: Any) -> Future[object]:
    """Without a broker, queue `task` on the background thread at once (the in-process
    scheduler, which has no transaction to wait for)."""
    return _thread().submit(_run, task, args)


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
